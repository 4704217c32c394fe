"""A/B timing of graphs that compute the same thing: paired passes, the median ratio and its interval.

On a shared or virtualised machine a graph's rate moves by ±15 % between passes of the same run, so one
fastest-of-three pass per graph cannot tell a 10 % lever from noise. This script times two or more graphs
(bundles or .onnx files taking the same inputs) over many passes; in every pass each graph runs all the
benchmark batches once, in a fresh random order, so the graphs of one pass share the machine's state.
Per graph it reports the median sentences/s; per graph against the first (the baseline) the median of the
per-pass time ratios with a 95 % bootstrap interval over passes and the share of passes it was faster —
a lever is "faster" only when the interval lies above 1.

    python bench/compare_graphs.py A B [C …] [--batch 32] [--threads 2] [--passes 30] [--spinning]

``A`` etc.: a bundle folder (its model.onnx; ``folder:variant`` for another variant, e.g. ``bundle:int8``)
or an .onnx file; ``--threads-of NAME=K`` runs one of them on K intra-op threads (e.g. the single-text
session against the default one). Inputs: the vader-movies test texts, tokenised and featurised with the
first bundle's tokenizer and vocabulary, length-sorted batches.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from parserfree.export.bundle import read_manifest
from parserfree.export.graph_inputs import graph_inputs
from parserfree.export.runtime import SPINNING, ParserFreeModel
from parserfree.export.session import make_session
from parserfree.export.timing import batches, describe_machine, machine

from bench_inference import benchmark_texts
from graph_levers import paired_passes
from timing import format_table, write_result


def graph_path(spec: str) -> Path:
    """``bundle``, ``bundle:variant`` or ``file.onnx`` → the ONNX file."""
    folder, _, variant = spec.partition(":")
    path = Path(folder)
    if path.suffix == ".onnx":
        return path
    return path / read_manifest(path)["models"][variant or "default"]


def ratio_summary(base: list[float], other: list[float], resamples: int = 2000, seed: int = 0) -> dict[str, float]:
    """Speed of ``other`` over ``base`` from paired pass times: the median of base/other per pass, its 95 %
    bootstrap interval over passes and the share of passes where ``other`` was faster."""
    ratios = np.asarray(base) / np.asarray(other)
    rng = np.random.default_rng(seed)
    medians = np.median(rng.choice(ratios, (resamples, len(ratios))), axis=1)
    low, high = np.percentile(medians, [2.5, 97.5])
    return {
        "median": float(np.median(ratios)),
        "low": float(low),
        "high": float(high),
        "faster": float(np.mean(ratios > 1)),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="+", help="bundle, bundle:variant or .onnx; the first is the baseline")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--threads-of", action="append", default=[], help="NAME=K: run graph NAME on K threads")
    parser.add_argument("--passes", type=int, default=30)
    parser.add_argument("--n", type=int, default=1000, help="texts (batch 1: every other one of them)")
    parser.add_argument("--spinning", action="store_true", default=SPINNING)
    parser.add_argument("--out", help="JSON file (default bench/results/compare_graphs.json)")
    args = parser.parse_args(argv)
    if len(args.graphs) < 2:
        parser.error("give at least two graphs")

    first = Path(args.graphs[0].partition(":")[0])
    model = ParserFreeModel.load(first if first.suffix != ".onnx" else first.parent, threads=args.threads)
    words = sorted((w for w in model.tokenize(benchmark_texts("vader-movies", args.n, None)) if w), key=len)
    if args.batch == 1:
        words = words[::2]
    feeds = [graph_inputs(model.vocab, g, model.max_len) for g in batches(words, args.batch)]
    threads = {spec: args.threads for spec in args.graphs}
    for item in args.threads_of:
        name, _, k = item.partition("=")
        if name not in threads:
            parser.error(f"--threads-of {item}: {name} is not one of the graphs")
        threads[name] = int(k)
    names = {spec: f"{spec} ({threads[spec]} thr)" if len(set(threads.values())) > 1 else spec for spec in args.graphs}
    sessions = {names[s]: make_session(graph_path(s), threads[s], spinning=args.spinning) for s in args.graphs}
    times = paired_passes(sessions, feeds, args.passes, shuffle=True)
    base = names[args.graphs[0]]
    rows = []
    for name, t in times.items():
        row = {"graph": name, "sentences_per_s": len(words) / float(np.median(t))}
        if name != base:
            row.update(ratio_summary(times[base], t))
        rows.append(row)
    result = {
        "bench": "compare_graphs",
        "machine": machine(),
        "batch": args.batch,
        "threads": threads,
        "spinning": args.spinning,
        "passes": args.passes,
        "n_texts": len(words),
        "rows": rows,
        "pass_seconds": times,
    }
    print(describe_machine(result["machine"]))
    print(
        f"batch {args.batch}, {len(words)} texts, {args.passes} paired passes, spinning {'on' if args.spinning else 'off'}"
    )
    print(
        format_table(
            rows,
            [
                ("graph", "graph", ""),
                ("sentences_per_s", "sentences/s (median pass)", ",.0f"),
                ("median", "× baseline (median)", ".3f"),
                ("low", "95% low", ".3f"),
                ("high", "95% high", ".3f"),
                ("faster", "passes faster", ".0%"),
            ],
        )
    )
    print(f"results: {write_result('compare_graphs', result, args.out)}")
    return result


if __name__ == "__main__":
    main()
