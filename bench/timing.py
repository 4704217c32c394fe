"""Shared helpers of the benchmarks: timing, the machine's description, tables and JSON results.

Every script under bench/ measures with these, so their numbers mean the same thing: ``time_calls`` runs
one warm-up call, then times every call of a list (throughput from the sum, latency percentiles per
call); ``seconds_per_call`` repeats a function over inputs until a minimum time has passed (for
microsecond-scale functions). Results go to ``bench/results/<name>.json`` with ``machine()`` (CPU model,
cores, library versions) and are printed with ``format_table``.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def time_calls(call: Callable[[Any], object], inputs: Sequence[Any]) -> dict[str, float]:
    """Call ``call`` on each input in order after one warm-up call on the first; returns the total
    ``seconds`` and the per-call latency ``p50_ms`` / ``p95_ms``."""
    call(inputs[0])
    times = []
    for item in inputs:
        start = time.perf_counter()
        call(item)
        times.append(time.perf_counter() - start)
    ms = 1e3 * np.asarray(times)
    return {"seconds": float(sum(times)), "p50_ms": float(np.percentile(ms, 50)), "p95_ms": float(np.percentile(ms, 95))}


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


def machine() -> dict[str, Any]:
    """What the numbers were measured on: CPU, cores, OS, Python and the versions of the libraries."""
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for package in ("numpy", "torch", "onnxruntime", "spacy", "lightning"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            pass
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "os": platform.platform(terse=True),
            "python": platform.python_version(), **versions}


def describe_machine(info: dict[str, Any]) -> str:
    """One line for the top of a table."""
    libs = ", ".join(f"{k} {info[k]}" for k in ("torch", "onnxruntime", "spacy") if k in info)
    return f"{info['cpu']}, {info['cores']} cores, Python {info['python']}, {libs}"


def write_result(name: str, result: dict[str, Any], path: str | Path | None = None) -> Path:
    """Write ``result`` as JSON to ``path`` (default bench/results/<name>.json), atomically."""
    out = Path(path) if path else RESULTS / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=1))
    os.replace(tmp, out)
    return out


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str, str]]) -> str:
    """A Markdown table: ``columns`` are (key, header, format spec); a missing or None value prints "–"."""
    def cell(row: dict, key: str, spec: str) -> str:
        value = row.get(key)
        return "–" if value is None else format(value, spec)

    lines = ["| " + " | ".join(header for _, header, _ in columns) + " |",
             "|" + "|".join("---" if spec == "" else "---:" for _, _, spec in columns) + "|"]
    lines += ["| " + " | ".join(cell(row, key, spec) for key, _, spec in columns) + " |" for row in rows]
    return "\n".join(lines)
