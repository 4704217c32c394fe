"""A/B timing of graphs that compute the same thing: paired passes, the median ratio and its interval.

On a shared or virtualised machine a graph's rate moves by ±15 % between passes of the same run, so one
fastest-of-three pass per graph cannot tell a 10 % lever from noise. ``compare`` times two or more graphs
(bundles or .onnx files taking the same inputs) over many passes; in every pass each graph runs all the
benchmark batches once, in a fresh random order, so the graphs of one pass share the machine's state.
Per graph it reports the median sentences/s; per graph against the first (the baseline) the median of the
per-pass time ratios with a 95 % bootstrap interval over passes and the share of passes it was faster —
a lever is "faster" only when the interval lies above 1. Used by ``bench.compare_graphs`` and
``bench.task_distances``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from parserfree.export.bundle import read_manifest
from parserfree.export.graph_inputs import graph_inputs
from parserfree.export.runtime import ParserFreeModel
from parserfree.export.session import make_session
from parserfree.export.timing import batches

from bench.lib.common import benchmark_texts, format_table
from bench.lib.graph_levers import paired_passes


def graph_path(spec: str) -> Path:
    """``bundle``, ``bundle:variant``, ``bundle:tree[:variant]`` or ``file.onnx`` → the ONNX file."""
    folder, _, variant = spec.partition(":")
    path = Path(folder)
    if path.suffix == ".onnx":
        return path
    manifest = read_manifest(path)
    graph, _, tree_variant = variant.partition(":")
    if graph == "tree":
        if not manifest.get("tree_graph"):
            raise SystemExit(f"{spec}: the bundle has no tree graph")
        return path / manifest["tree_graph"]["models"][tree_variant or "default"]
    return path / manifest["models"][variant or "default"]


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


def compare(
    graphs: Sequence[str], batch: int, threads: dict[str, int], passes: int, n: int, spinning: bool
) -> dict[str, Any]:
    """Paired passes of ``graphs`` (the first is the baseline; ``threads``: intra-op threads per graph) on
    the first ``n`` vader-movies benchmark texts (batch 1: every other one), tokenised and featurised with
    the first bundle's tokenizer and vocabulary, in length-sorted batches of ``batch``."""
    first = Path(graphs[0].partition(":")[0])
    model = ParserFreeModel.load(first if first.suffix != ".onnx" else first.parent, threads=max(threads.values()))
    words = sorted((w for w in model.tokenize(benchmark_texts("vader-movies", n, None)) if w), key=len)
    if batch == 1:
        words = words[::2]
    feeds = [graph_inputs(model.vocab, g, model.max_len) for g in batches(words, batch)]
    names = {spec: f"{spec} ({threads[spec]} thr)" if len(set(threads.values())) > 1 else spec for spec in graphs}
    sessions = {names[s]: make_session(graph_path(s), threads[s], spinning=spinning) for s in graphs}
    times = paired_passes(sessions, feeds, passes, shuffle=True)
    base = names[graphs[0]]
    rows = []
    for name, t in times.items():
        row = {"graph": name, "sentences_per_s": len(words) / float(np.median(t))}
        if name != base:
            row.update(ratio_summary(times[base], t))
        rows.append(row)
    return {
        "batch": batch,
        "threads": threads,
        "spinning": spinning,
        "passes": passes,
        "n_texts": len(words),
        "rows": rows,
        "pass_seconds": times,
    }


def comparison_table(result: dict[str, Any]) -> str:
    """One comparison's line of conditions and its table (graph, median rate, ratio to the baseline, interval)."""
    threads = "/".join(str(k) for k in sorted(set(result["threads"].values())))
    head = (
        f"batch {result['batch']}, {threads} thread(s), {result['n_texts']} texts, {result['passes']} paired "
        f"passes, spinning {'on' if result['spinning'] else 'off'}"
    )
    table = format_table(
        result["rows"],
        [
            ("graph", "graph", ""),
            ("sentences_per_s", "sentences/s (median pass)", ",.0f"),
            ("median", "× baseline (median)", ".3f"),
            ("low", "95% low", ".3f"),
            ("high", "95% high", ".3f"),
            ("faster", "passes faster", ".0%"),
        ],
    )
    return f"{head}\n\n{table}"
