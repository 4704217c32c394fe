"""The report's figures: every PNG that ``compare`` and ``curve`` write, drawn with matplotlib.

Apart from the Markdown (``parserfree.reports.markdown``, ``parserfree.reports.curve_tables``), so rendering a page loads
no matplotlib. ``comparison_figures`` draws a comparison's: the learned bias per distance bucket of each
biased model, predicted vs parser distance heatmaps with the words on the axes, spaCy's trees above the
trees decoded from D̂, throughput bars and training curves read from the runs' ``logs/metrics.csv``;
``plot_breakdown`` the accuracy per breakdown bucket; ``plot_curve`` a low-resource or scaling curve.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..encoder.files import atomic_path
from .parts import RowBreakdown
from .report import ModelRow
from .slices import GROUPS


def save_figure(fig, path: Path, dpi: int = 120, rect: tuple[float, float, float, float] | None = None) -> None:
    """Lay ``fig`` out, write it to ``path`` as a PNG atomically (its folder made) and close it."""
    fig.tight_layout(**({"rect": rect} if rect else {}))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path, path.with_name(f".{path.stem}.tmp.png")) as tmp:
        fig.savefig(tmp, dpi=dpi)
    plt.close(fig)


def plot_bias_curves(curves: dict[str, np.ndarray], path: Path) -> None:
    """Learned additive bias per clamped distance bucket, one line per curve (a model, or one of its per-head
    or per-layer tables)."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for name, curve in curves.items():
        ax.plot(np.arange(len(curve)), curve, marker="o" if len(curves) <= 6 else ".", label=name)
    ax.axhline(0, color="grey", lw=0.6)
    ax.set_xlabel("tree distance bucket (last = max distance or more, other sentence)")
    ax.set_ylabel("bias added to attention score")
    ax.set_title("Learned syntax bias per tree distance")
    ax.legend(fontsize=8)
    save_figure(fig, path, dpi=120)


def plot_distance_heatmaps(
    examples: list[tuple[list[str], np.ndarray, np.ndarray]], path: Path, clip: float = 10.0
) -> None:
    """Predicted D̂ (left) vs parser D (right) for a few sentences, words on both axes."""
    rows = max(1, len(examples))
    fig, axes = plt.subplots(rows, 2, figsize=(10, 4.2 * rows), squeeze=False)
    for r, (words, pred, gold) in enumerate(examples):
        for c, (matrix, title) in enumerate(
            ((pred, "predicted d̂ (parser-free graph)"), (gold, "spaCy parser distance d"))
        ):
            ax = axes[r, c]
            im = ax.imshow(np.minimum(matrix, clip), cmap="viridis_r", vmin=0, vmax=clip)
            ax.set_xticks(range(len(words)), words, rotation=90, fontsize=7)
            ax.set_yticks(range(len(words)), words, fontsize=7)
            ax.set_title(title, fontsize=9)
            fig.colorbar(im, ax=ax, fraction=0.046)
    fig.suptitle(f"Tree distances between words (clipped at {clip:g})")
    save_figure(fig, path, dpi=110)


TREE_COLOURS = {"shared": "#4c72b0", "spacy_only": "#dd8452", "predicted_only": "#c44e52"}


def arc_differences(spacy_heads: np.ndarray, predicted_heads: np.ndarray) -> dict[str, set[frozenset[int]]]:
    """Undirected arcs (root = self, so roots add none) shared by two trees and found in one only."""

    def arcs(heads) -> set[frozenset[int]]:
        return {frozenset((i, int(h))) for i, h in enumerate(heads) if h != i}

    ours, theirs = arcs(predicted_heads), arcs(spacy_heads)
    return {"shared": ours & theirs, "spacy_only": theirs - ours, "predicted_only": ours - theirs}


def _draw_tree(ax, words: list[str], heads: np.ndarray, colour_of, title: str) -> None:
    """One dependency tree as arcs over its words (arrow head at the dependent, roots marked)."""
    from matplotlib.patches import FancyArrowPatch

    n = len(words)
    for i, h in enumerate(heads):
        if h == i:
            ax.annotate(
                "ROOT", (i, 0.15), (i, 1.1), ha="center", fontsize=7, arrowprops={"arrowstyle": "-|>", "lw": 0.8}
            )
            continue
        colour = colour_of(frozenset((i, int(h))))
        ax.add_patch(
            FancyArrowPatch(
                (h, 0.15),
                (i, 0.15),
                connectionstyle=f"arc3,rad={-0.45 if h < i else 0.45}",
                arrowstyle="-|>",
                mutation_scale=8,
                lw=1.4,
                color=colour,
            )
        )
    for i, word in enumerate(words):
        ax.text(i, 0, word, ha="center", va="top", fontsize=8, rotation=30 if n > 12 else 0)
    span = max([abs(int(h) - i) for i, h in enumerate(heads)] + [1])
    ax.set_xlim(-0.7, n - 0.3)
    ax.set_ylim(-0.9, max(1.5, 0.45 * span + 0.4))
    ax.set_title(title, fontsize=9, loc="left")
    ax.axis("off")


def plot_tree_comparison(examples: list[tuple[list[str], np.ndarray, np.ndarray]], path: Path) -> None:
    """For each (words, spaCy heads, predicted D̂): the spaCy tree above the tree decoded from D̂
    (export.predicted_tree), arcs coloured by agreement — blue in both trees, orange only spaCy's (missed),
    red only predicted. Direction is ignored when comparing: D̂ has none (the predicted root is a rule)."""
    from ..export.predicted_tree import heads_from_distances

    rows = max(1, len(examples))
    width = max(8.0, 0.75 * max((len(w) for w, _, _ in examples), default=8))
    fig, axes = plt.subplots(2 * rows, 1, figsize=(width, 2.2 * 2 * rows), squeeze=False)
    for r, (words, spacy_heads, distances) in enumerate(examples):
        predicted = heads_from_distances(np.asarray(distances)[: len(words), : len(words)])
        diff = arc_differences(np.asarray(spacy_heads), predicted)
        shared, total = len(diff["shared"]), len(diff["shared"]) + len(diff["spacy_only"])

        def colour(kind_if_not_shared):
            return lambda arc: TREE_COLOURS["shared" if arc in diff["shared"] else kind_if_not_shared]  # noqa: B023 (called within the iteration)

        _draw_tree(
            axes[2 * r, 0],
            words,
            np.asarray(spacy_heads),
            colour("spacy_only"),
            "spaCy's parser (orange: missed by the prediction)",
        )
        _draw_tree(
            axes[2 * r + 1, 0],
            words,
            predicted,
            colour("predicted_only"),
            f"predicted: {shared} of {total} of spaCy's arcs, direction ignored (red: not spaCy's)",
        )
    save_figure(fig, path, dpi=110)


def plot_throughput(speeds: dict[str, float], path: Path, threads: int) -> None:
    """Sentences per second end to end, one bar per model."""
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    names = list(speeds)
    bars = ax.barh(names, [speeds[n] for n in names], color=["#4c72b0" if "free" in n else "#dd8452" for n in names])
    ax.bar_label(bars, fmt="%.0f", fontsize=8)
    ax.set_xlabel(f"sentences/s — batch 32, {threads} threads, parsing or tokenising included")
    ax.set_xlim(0, 1.15 * max(speeds.values()))
    ax.set_title("End-to-end throughput")
    save_figure(fig, path, dpi=120)


def read_curves(metrics_csv: Path) -> dict[str, list[tuple[int, float]]]:
    """(step, value) series per logged metric from a Lightning CSVLogger file."""
    series: dict[str, list[tuple[int, float]]] = {}
    with open(metrics_csv) as fh:
        for row in csv.DictReader(fh):
            step = int(row.get("step") or 0)
            for key, value in row.items():
                if key in ("step", "epoch") or value in ("", None):
                    continue
                series.setdefault(key, []).append((step, float(value)))
    return series


def plot_training_curves(runs: dict[str, Path], path: Path) -> None:
    """Train task loss, validation metric, distance loss and validation UUAS of each run over steps."""
    panels = [
        ("train/task_loss", "train task loss"),
        ("val/metric", "validation task metric"),
        ("train/distance_loss", "train distance loss"),
        ("val/uuas", "validation UUAS of d̂"),
    ]
    fig, axes = plt.subplots(2, 2, figsize=(10, 6))
    for ax, (key, title) in zip(axes.flat, panels):
        for name, run in runs.items():
            f = Path(run) / "logs" / "metrics.csv"
            if not f.exists():
                continue
            points = read_curves(f).get(key, [])
            if points:
                values: tuple[float, ...] | np.ndarray  # smoothed below for the noisy per-step losses
                steps, values = zip(*points)
                if key.startswith("train/") and len(values) > 20:  # smooth the noisy per-step losses
                    k = max(1, len(values) // 20)
                    values = np.convolve(values, np.ones(k) / k, mode="valid")
                    steps = steps[: len(values)]
                ax.plot(steps, values, label=name, marker="o" if key.startswith("val/") else None, ms=3)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("step")
        if ax.lines:
            ax.legend(fontsize=8)
    save_figure(fig, path, dpi=110)


def plot_breakdown(result: Mapping[str, RowBreakdown], path: Path) -> None:
    """Accuracy with 95 % intervals per bucket, one panel per breakdown, one series per row."""
    first = next(iter(result.values()))
    groups = [g for g in GROUPS if g in first]
    fig, axes = plt.subplots(1, len(groups), figsize=(5.2 * len(groups), 4.2), squeeze=False)
    width = 0.8 / max(1, len(result))
    for ax, group in zip(axes[0], groups):
        buckets = GROUPS[group].buckets
        x = np.arange(len(buckets))
        for m, (name, r) in enumerate(result.items()):
            acc = np.array([r[group][b].accuracy for b in buckets], dtype=float)
            ci = np.array([r[group][b].ci95 for b in buckets], dtype=float)
            err = np.clip(
                np.nan_to_num(np.stack([acc - ci[:, 0], ci[:, 1] - acc])), 0, None
            )  # rounding at 0 % and 100 %
            ax.bar(x + (m - (len(result) - 1) / 2) * width, acc, width, yerr=err, capsize=2, label=name)
        ax.axhline(50, color="grey", lw=0.6, ls="--")
        ax.set_xticks(x, [f"{b}\nn={first[group][b].n:,}" for b in buckets], fontsize=8)
        ax.set_xlabel(GROUPS[group].title)
        ax.set_ylabel("accuracy %")
        ax.set_ylim(0, 100)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8)
    fig.suptitle("Accuracy by attractors, subject–verb distance and subject number (95 % intervals; dashed: chance)")
    save_figure(fig, path, dpi=120, rect=(0, 0.09, 1, 1))


def plot_curve(curve: dict, path: Path) -> None:
    """Mean ± sd of the test metric against the fraction of training data, one line per recipe; for a
    predictor-only curve (no task), UUAS and DSpr side by side against the number of training sentences."""
    metric = curve["runs"][0]["metric_name"] if curve["runs"] else "metric"
    panels = [("mean", "sd", f"test {'UUAS' if metric == 'uuas' else metric}")]
    if metric == "uuas":
        panels.append(("dspr_mean", "dspr_sd", "test DSpr"))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.2), squeeze=False)
    fractions = [float(f) for f in curve["summary"]]
    for ax, (mean, sd, label) in zip(axes[0], panels):
        ax.set_xscale("log")
        ticks = fractions
        for recipe in curve["recipes"]:
            points = [
                (f, by[recipe]) for f, by in zip(fractions, curve["summary"].values()) if mean in by.get(recipe, {})
            ]
            xs = [e["n_train"] if metric == "uuas" else f for f, e in points]
            ax.errorbar(
                xs, [e[mean] for _, e in points], yerr=[e[sd] for _, e in points], marker="o", capsize=3, label=recipe
            )
            ticks = xs
        ax.set_xticks(ticks, [f"{x:,}" if metric == "uuas" else f"{x:g}" for x in ticks])
        ax.minorticks_off()
        ax.set_xlabel("training sentences" if metric == "uuas" else "fraction of the training split")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(f"{curve['dataset']}: {curve['seeds']} seed{'s' if curve['seeds'] > 1 else ''}, mean ± sd")
    save_figure(fig, path, dpi=120)


def comparison_figures(
    out: Path,
    rows: Mapping[str, Any],
    parsed: dict,
    free_run: dict,
    table: Mapping[str, ModelRow],
    threads: int,
    breakdown: Mapping[str, RowBreakdown] | None,
) -> None:
    """A comparison's PNGs in ``out`` (seed 0, the headline domain): the bias curves of the biased rows
    (``compare.Row`` by name), distance heatmaps and tree pictures of a few sentences (the reference's parsed
    run and the parser-free run), throughput bars, the training curves of the rows with a run folder and
    the accuracy per breakdown bucket."""
    from ..core.trees import batch_tree_distances

    if breakdown:
        plot_breakdown(breakdown, out / "breakdown.png")
    curves = {}
    for name, row in rows.items():
        src = row.first
        if src.trained is not None and src.trained.model.encoder.bias.table is not None:
            bias = src.trained.model.encoder.bias
            values = bias.curve().detach().numpy()
            if values.ndim == 1:
                curves[name] = values
            else:  # per-head or per-layer tables: a line each
                curves.update({f"{name} {label}": values[:, c] for c, label in enumerate(bias.column_names())})
    if curves:
        plot_bias_curves(curves, out / "bias_curves.png")
    picks = [i for i, w in enumerate(parsed["words"]) if 8 <= len(w) <= 14 and list(w) == list(free_run["words"][i])][
        :3
    ]
    plot_distance_heatmaps(
        [
            (list(parsed["words"][i]), free_run["distances"][i], batch_tree_distances([parsed["parses"][i].heads])[0])
            for i in picks
        ],
        out / "distance_heatmaps.png",
    )
    plot_tree_comparison(
        [(list(parsed["words"][i]), parsed["parses"][i].heads, free_run["distances"][i]) for i in picks],
        out / "tree_comparison.png",
    )
    plot_throughput(
        {name: m.speed.sentences_per_s for name, m in table.items() if m.speed is not None},
        out / "throughput.png",
        threads,
    )
    runs = {name: row.first.run_dir for name, row in rows.items() if row.first.run_dir}
    if runs:
        plot_training_curves(runs, out / "training_curves.png")
