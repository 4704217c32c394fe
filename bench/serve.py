"""Benchmark: a bundle served over HTTP (``parserfree serve``): load, bad requests, a soak, a kill, the install.

Loopback only, bounded in count and time. The server is the ``parserfree`` console script of this
environment (or of ``--serving-venv``), started in a scratch folder; the client is ``bench/lib/http_load.py``.
Every reply is checked against the in-process prediction of its own text (``ParserFreeModel.predict`` of the
same bundle in this process: the same words, probabilities within 1e-4), so a reply handed to the wrong
request or lost is counted, never assumed away.

- **load**: single-text requests at concurrency 1, 8 and 32 (after a warm-up): requests/s, p50 and p99
  latency, beside the in-process batch-32 throughput of the same bundle and texts in the same run;
- **mixed**: 10,000 requests at concurrency 32, one in ten bad (each kind of bad request in turn; the
  server runs with ``--max-body-bytes 65536`` so that an oversized body stays small), one in twenty good
  ones holding three texts and one in fifty a text longer than the model's positions: 5xx, lost, mixed-up;
- **soak**: ``--soak-s`` seconds (default 600) of load at concurrency 8, the server's RSS sampled every 2 s:
  growth from just after the warm-up (the first 60 s) to the end;
- **kill**: SIGKILL mid-load, then a restart: seconds to the first /health and the first reply;
- **install** (``--serving-venv DIR``): a venv with the serving install only (``pip install .`` without the
  ``train`` extra; made there when missing), its size on disk and cold start (process start → first
  /predict reply) beside this environment's, and which training modules it can import (none, the goal).

    python -m bench.serve [--bundle B] [--threads 2] [--soak-s 600] [--serving-venv DIR] [--quick]
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from parserfree.commands.cli import TRAINING_MODULES
from parserfree.export.runtime import ParserFreeModel
from parserfree.export.serve.settings import GRAPH_BATCH
from parserfree.export.timing import machine

from bench.lib.common import DEFAULT_RUN, REPO, benchmark_texts, finish, format_table, parse, script_arguments
from bench.lib.http_load import run_load
from bench.lib.served import MAX_BODY, Checker, Server, body, counts, serve_command

BAD_BODIES = [
    b"{not json",
    b"[1, 2]",
    b'{"texts": "one"}',
    b'{"texts": []}',
    b'{"texts": ["fine", 3]}',
    b'{"texts": ["   "]}',
    b'{"texts": ["a\\u0007b"]}',
    b'{"texts": ["a"], "tree": "yes"}',
    json.dumps({"texts": ["a"] * 300}).encode(),
    json.dumps({"texts": ["x" * (MAX_BODY + 10)]}).encode(),
]


def arguments():
    parser = script_arguments(__file__, __doc__, threads=2, quick="200 requests a row, a 20 s soak", cache_dir=True)
    parser.add_argument(
        "--bundle", default=str(DEFAULT_RUN / "bundle"), help="bundle (default runs/main/sentiment/bundle)"
    )
    parser.add_argument(
        "--dataset", default="vader-movies", help="texts of this built-in dataset (default vader-movies)"
    )
    parser.add_argument("--max-batch", type=int, default=32, help="the server's --max-batch (default 32)")
    parser.add_argument("--max-wait-ms", type=float, default=5.0, help="the server's --max-wait-ms (default 5)")
    parser.add_argument(
        "--graph-batch", type=int, default=GRAPH_BATCH, help=f"the server's --graph-batch (default {GRAPH_BATCH})"
    )
    parser.add_argument("--soak-s", type=float, help="soak seconds (default 600, --quick 20)")
    parser.add_argument("--serving-venv", help="a serving-only venv to measure (made there if missing)")
    return parser


def in_process(model: ParserFreeModel, texts: list[str], repeats: int = 2) -> float:
    """Sentences/s of ``predict`` at batch 32, the fastest of ``repeats`` passes."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        model.predict(texts, batch_size=32)
        best = min(best, time.perf_counter() - start)
    return len(texts) / best


def in_process_requests(model: ParserFreeModel, texts: list[str], graph_batch: int) -> float:
    """Sentences/s of ``predict`` called on the texts in arrival order, 32 at a time, each call in graph calls of
    ``graph_batch``: what the server's model does with full batches of single-text requests, without HTTP."""
    start = time.perf_counter()
    for i in range(0, len(texts), 32):
        model.predict(texts[i : i + 32], batch_size=graph_batch)
    return len(texts) / (time.perf_counter() - start)


def null_ceiling(args, texts: list[str]) -> float:
    """Requests/s at concurrency 32 of the same app around a model that costs nothing (bench/lib/null_server.py)."""
    code = "import sys; from bench.lib.null_server import serve; serve(sys.argv[1:])"
    server = Server([sys.executable, "-c", code, str(args.max_batch), str(args.max_wait_ms)], cwd=REPO)
    try:
        server.wait(server.start())
        run_load(server.port, [body(t) for t in texts[:200]], 32)
        replies, wall = run_load(server.port, [body(t) for t in texts], 32)
        return sum(r.status == 200 for r in replies) / wall
    finally:
        server.stop()


def load_row(port: int, checker: Checker, texts: list[str], concurrency: int) -> dict[str, Any]:
    run_load(port, [body(t) for t in texts[: min(200, len(texts))]], concurrency)  # warm-up
    replies, wall = run_load(port, [body(t) for t in texts], concurrency)
    latency = np.array([r.seconds for r in replies]) * 1000
    return {
        "concurrency": concurrency,
        "requests": len(texts),
        "requests_per_s": len(texts) / wall,
        "p50_ms": float(np.percentile(latency, 50)),
        "p99_ms": float(np.percentile(latency, 99)),
        **counts([checker.outcome(r, [t]) for r, t in zip(replies, texts)]),
    }


def mixed_load(port: int, checker: Checker, texts: list[str], long_texts: list[str], n: int) -> dict[str, Any]:
    """``n`` requests at concurrency 32: every tenth bad, every twentieth of three texts, every fiftieth long."""
    bodies, asked = [], []
    for i in range(n):
        if i % 10 == 9:
            bodies.append(BAD_BODIES[(i // 10) % len(BAD_BODIES)])
            asked.append(None)
            continue
        if i % 50 == 0:
            chosen = [long_texts[(i // 50) % len(long_texts)]]
        elif i % 20 == 0:
            chosen = [texts[(i + k) % len(texts)] for k in range(3)]
        else:
            chosen = [texts[i % len(texts)]]
        bodies.append(body(*chosen))
        asked.append(chosen)
    replies, wall = run_load(port, bodies, 32)
    return {
        "requests": n,
        "bad": asked.count(None),
        "seconds": wall,
        **counts(list(map(checker.outcome, replies, asked))),
    }


def soak(server: Server, checker: Checker, texts: list[str], seconds: float, warm_up: float) -> dict[str, Any]:
    """Load at concurrency 8 for ``seconds``, RSS sampled every 2 s; growth after ``warm_up`` seconds."""
    samples: list[tuple[float, float]] = []
    start, done = time.perf_counter(), threading.Event()

    def sample() -> None:
        while not done.is_set():
            samples.append((time.perf_counter() - start, server.rss_mb()))
            done.wait(2.0)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    tally: dict[str, int] = {}
    while time.perf_counter() - start < seconds:
        replies, _ = run_load(server.port, [body(t) for t in texts], 8)
        for k, v in counts([checker.outcome(r, [t]) for r, t in zip(replies, texts)]).items():
            tally[k] = tally.get(k, 0) + v
    done.set()
    sampler.join()
    after = [rss for t, rss in samples if t >= warm_up]
    window = max(1, len(after) // 10)
    base, end = float(np.median(after[:window])), float(np.median(after[-window:]))
    return {
        "seconds": time.perf_counter() - start,
        "warm_up_s": warm_up,
        "rss_after_warm_up_mb": base,
        "rss_end_mb": end,
        "growth": end / base - 1,
        "samples": [[round(t, 1), round(r, 1)] for t, r in samples],
        **tally,
    }


def kill_and_restart(server: Server, checker: Checker, texts: list[str]) -> dict[str, Any]:
    """SIGKILL during load at concurrency 8, then a restart on the same port."""
    result: dict[str, Any] = {}

    def load() -> None:
        replies, _ = run_load(server.port, [body(t) for t in texts], 8)
        result.update(counts([checker.outcome(r, [t]) for r, t in zip(replies, texts)]))

    client = threading.Thread(target=load)
    client.start()
    time.sleep(1.0)
    server.kill()
    client.join()
    started = server.start()
    result["restart_health_s"] = server.wait(started)
    result["restart_first_reply_s"] = server.wait(started, probe=body(texts[0]))
    replies, _ = run_load(server.port, [body(t) for t in texts[:200]], 8)
    result["after_restart"] = counts([checker.outcome(r, [t]) for r, t in zip(replies, texts[:200])])
    return result


def folder_mb(path: Path) -> float:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total / 2**20


def serving_venv(folder: Path) -> float | None:
    """Make the serving-only venv at ``folder`` unless it is there; the install's seconds (None if it was)."""
    if (folder / "bin" / "parserfree").exists():
        return None
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as source:  # the working tree's files: no stale build output goes in
        files = "git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C " + source
        subprocess.run(files, shell=True, cwd=REPO, check=True)
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        subprocess.run([str(folder / "bin" / "pip"), "install", "-q", source], check=True)
    return time.perf_counter() - start


def importable(python: Path) -> list[str]:
    """The training modules ``python`` can import."""
    probe = f"import importlib.util as u; print(','.join(m for m in {sorted(TRAINING_MODULES)!r} if u.find_spec(m)))"
    out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    return [m for m in out.split(",") if m]


def cold_start(bin_dir: Path, bundle: Path, args, probe: bytes, tries: int = 3) -> float:
    """Median seconds from process start to the first /predict reply, over ``tries`` fresh processes."""
    times = []
    for _ in range(tries):
        server = Server(serve_command(bin_dir, bundle, args))
        try:
            times.append(server.wait(server.start(), probe=probe))
        finally:
            server.stop()
    return float(np.median(times))


def install_rows(args, bundle: Path, probe: bytes) -> list[dict[str, Any]]:
    here = Path(sys.prefix)
    rows = [{"install": "full (.[dev])", "venv": str(here), "seconds_to_install": None}]
    if args.serving_venv:
        folder = Path(args.serving_venv).resolve()
        rows.append({"install": "serving only (.)", "venv": str(folder), "seconds_to_install": serving_venv(folder)})
    for row in rows:
        venv = Path(row["venv"])
        row["size_mb"] = folder_mb(venv)
        row["training_modules"] = importable(venv / "bin" / "python")
        row["cold_start_s"] = cold_start(venv / "bin", bundle, args, probe)
    return rows


def bound(result: dict[str, Any]) -> float:
    """The most a server can answer of single-text requests at concurrency 32: no more than the model runs the
    requests' own batches (texts in arrival order, 32 a call: a server cannot sort texts it has not been
    sent, so every batch pads to its longest text), nor more than the server handles around a free model."""
    return min(result["in_process_requests_per_s"], result["null_model_per_s"])


def goals(result: dict[str, Any]) -> list[str]:
    rows = {r["concurrency"]: r for r in result["load"]}
    lines = []
    if 32 in rows:
        share = rows[32]["requests_per_s"] / result["in_process_per_s"]
        lines.append(
            f"concurrency 32: {rows[32]['requests_per_s']:,.0f} requests/s = {share:.0%} of in-process batch 32 "
            f"({result['in_process_per_s']:,.0f}/s; goal ≥ 70 %: {'met' if share >= 0.7 else 'missed'}) and "
            f"{rows[32]['requests_per_s'] / result['bound_per_s']:.0%} of the bound below, p99 "
            f"{rows[32]['p99_ms']:.1f} ms (goal ≤ 50: {'met' if rows[32]['p99_ms'] <= 50 else 'missed'})"
        )
    lines.append(
        f"bound: the model alone on the requests' own batches {result['in_process_requests_per_s']:,.0f}/s (graph "
        f"calls of {result['graph_batch']}; one call of 32: {result['in_process_requests_one_call_per_s']:,.0f}/s), "
        f"the server around a free model {result['null_model_per_s']:,.0f}/s → at most {result['bound_per_s']:,.0f}/s "
        f"({result['bound_per_s'] / result['in_process_per_s']:.0%} of in-process, which sorts all its texts by length)"
    )
    m = result["mixed"]
    clean = m["5xx"] == m["lost"] == m["mixed"] == m["wrong"] == 0
    lines.append(
        f"mixed load: {m['requests']:,} requests ({m['bad']:,} bad): {m['5xx']} 5xx, {m['lost']} lost, {m['mixed']} "
        f"mixed up, {m['wrong']} wrong status (goal all zero: {'met' if clean else 'missed'})"
    )
    s = result["soak"]
    lines.append(
        f"soak {s['seconds']:.0f} s: RSS {s['rss_after_warm_up_mb']:.0f} → {s['rss_end_mb']:.0f} MB after the "
        f"{s['warm_up_s']:.0f} s warm-up, {s['growth']:+.1%} (goal < 5 %: {'met' if s['growth'] < 0.05 else 'missed'})"
    )
    k = result["kill"]
    lines.append(
        f"SIGKILL mid-load ({k['lost']} requests lost, none mixed up: {k['mixed'] == 0}); the restart answers "
        f"/health in {k['restart_health_s']:.2f} s (goal ≤ 5: {'met' if k['restart_health_s'] <= 5 else 'missed'}), "
        f"its first reply in {k['restart_first_reply_s']:.2f} s"
    )
    for row in result["install"]:
        lines.append(
            f"{row['install']}: {row['size_mb']:,.0f} MB on disk, cold start {row['cold_start_s']:.2f} s, training "
            f"modules importable: {', '.join(row['training_modules']) or 'none'}"
        )
    return lines


def tables(result: dict[str, Any]) -> str:
    head = (
        f"{result['n_texts']} {result['dataset']} texts, {result['bundle']}, {result['threads']} threads, "
        f"--max-batch {result['max_batch']} --max-wait-ms {result['max_wait_ms']:g} --graph-batch {result['graph_batch']}; "
        "in-process batch 32: "
        f"{result['in_process_per_s']:,.0f} sentences/s"
    )
    load = format_table(
        result["load"],
        [
            ("concurrency", "concurrency", "d"),
            ("requests", "requests", ",d"),
            ("requests_per_s", "requests/s", ",.0f"),
            ("share", "of in-process", ".0%"),
            ("p50_ms", "p50 ms", ".1f"),
            ("p99_ms", "p99 ms", ".1f"),
            ("ok", "checked ok", ",d"),
        ],
    )
    install = format_table(
        result["install"],
        [("install", "install", ""), ("size_mb", "MB on disk", ",.0f"), ("cold_start_s", "cold start s", ".2f")],
    )
    return f"{head}\n\n{load}\n\n{install}\n\n" + "\n".join(f"- {line}" for line in result["goals"])


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    bundle = Path(args.bundle)
    if not (bundle / "manifest.json").exists():
        sys.exit(f"bench.serve: no bundle at {bundle}: make one with `parserfree run` or pass --bundle")
    n = 200 if args.quick else 2000
    texts = benchmark_texts(args.dataset, n, args.cache_dir)
    texts = [texts[i] for i in np.random.default_rng(0).permutation(len(texts))]
    model = ParserFreeModel.load(bundle, threads=args.threads)
    long_texts = [" ".join(texts[i : i + 12]) for i in range(0, 120, 12)]  # past the model's positions
    checker = Checker(model, texts + long_texts)
    load_before = os.getloadavg()[0]
    result: dict[str, Any] = {
        "machine": machine(),
        "bundle": str(bundle),
        "dataset": args.dataset,
        "n_texts": len(texts),
        "threads": args.threads,
        "max_batch": args.max_batch,
        "max_wait_ms": args.max_wait_ms,
        "graph_batch": args.graph_batch,
        "in_process_per_s": in_process(model, sorted(texts, key=len)),
        "in_process_requests_per_s": in_process_requests(model, texts, args.graph_batch),
        "in_process_requests_one_call_per_s": in_process_requests(model, texts, 32),  # what --graph-batch 32 would do
        "null_model_per_s": null_ceiling(args, texts),
    }
    result["bound_per_s"] = bound(result)
    server = Server(serve_command(Path(sys.prefix) / "bin", bundle, args))
    try:
        server.wait(server.start())
        result["load"] = [load_row(server.port, checker, texts, c) for c in (1, 8, 32)]
        for row in result["load"]:
            row["share"] = row["requests_per_s"] / result["in_process_per_s"]
        result["mixed"] = mixed_load(server.port, checker, texts, long_texts, 1000 if args.quick else 10_000)
        soak_s = args.soak_s or (20 if args.quick else 600)
        result["soak"] = soak(server, checker, texts, soak_s, warm_up=min(60.0, soak_s / 4))
        result["kill"] = kill_and_restart(server, checker, texts)
    finally:
        server.stop()
    result["install"] = install_rows(args, bundle, body(texts[0]))
    result["load_average"] = [load_before, os.getloadavg()[0]]
    result["goals"] = goals(result)
    return finish(result, args, tables)


if __name__ == "__main__":
    main()
