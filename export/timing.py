"""Timing: how the project measures speed, shared by ``parserfree compare`` and the benchmarks in bench/.

Every number of speed means the same thing wherever it is reported: ``time_calls`` runs one warm-up call,
then times every call of a list (throughput from the sum, latency percentiles per call);
``seconds_per_call`` repeats a function over inputs until a minimum time has passed (for
microsecond-scale functions); ``machine`` and ``describe_machine`` say what it was measured on (CPU
model, cores, library versions). Plain Python and numpy: importing it loads no model library.
"""

from __future__ import annotations

import os
import platform
import resource
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def time_calls(call: Callable[[Any], Any], inputs: Sequence[Any], keep_results: bool = False) -> dict[str, Any]:
    """Call ``call`` on each input in order after one warm-up call on the first; returns the total
    ``seconds`` and the per-call latency ``p50_ms`` / ``p95_ms`` (and, with ``keep_results``, each
    timed call's return value in order under ``results``)."""
    call(inputs[0])
    times, results = [], []
    for item in inputs:
        start = time.perf_counter()
        result = call(item)
        times.append(time.perf_counter() - start)
        if keep_results:
            results.append(result)
    ms = 1e3 * np.asarray(times)
    out: dict[str, Any] = {
        "seconds": float(sum(times)),
        "p50_ms": float(np.percentile(ms, 50)),
        "p95_ms": float(np.percentile(ms, 95)),
    }
    if keep_results:
        out["results"] = results
    return out


def seconds_per_call(fn: Callable[[Any], object], inputs: Sequence[Any], min_time: float) -> float:
    """Mean seconds per call, repeating over ``inputs`` until ``min_time`` seconds have passed."""
    calls, start = 0, time.perf_counter()
    while True:
        for item in inputs:
            fn(item)
        calls += len(inputs)
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / calls


def batches(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    """Consecutive slices of ``size`` items (the last may be shorter)."""
    return [items[i : i + size] for i in range(0, len(items), size)]


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB (``getrusage``; Linux reports KiB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux), else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


VECTOR_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_tile")  # what decides a kernel's speed here


def cpu_flags(cpuinfo: str | None = None) -> dict[str, bool]:
    """Which of ``VECTOR_FLAGS`` the CPU has (from the ``flags`` line of /proc/cpuinfo, or of ``cpuinfo``);
    all False where that cannot be read."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo = ""
    flags: set[str] = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    return {flag: flag in flags for flag in VECTOR_FLAGS}


def machine_type(flags: dict[str, bool]) -> str:
    """The machine type a benchmark table is kept under: "AVX-512" (with or without VNNI) or "AVX2, no AVX-512"."""
    if flags.get("avx512f"):
        return "AVX-512" + (" + VNNI" if flags.get("avx512_vnni") else "")
    return "AVX2, no AVX-512" if flags.get("avx2") else "no AVX2"


def machine() -> dict[str, Any]:
    """What the numbers were measured on: CPU, cores, OS, Python and the versions of the libraries."""
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for package in ("numpy", "torch", "onnxruntime", "spacy", "lightning"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            pass
    flags = cpu_flags()
    return {
        "cpu": cpu_model(),
        "cpu_flags": flags,
        "machine_type": machine_type(flags),
        "cores": os.cpu_count(),
        "os": platform.platform(terse=True),
        "python": platform.python_version(),
        **versions,
    }


def describe_machine(info: dict[str, Any]) -> str:
    """One line for the top of a table or report."""
    libs = ", ".join(f"{k} {info[k]}" for k in ("torch", "onnxruntime", "spacy") if k in info)
    kind = f" ({info['machine_type']})" if "machine_type" in info else ""
    return f"{info['cpu']}{kind}, {info['cores']} cores, Python {info['python']}, {libs}"
