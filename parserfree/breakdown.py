"""Breakdowns: accuracy by number of attractors and by subject–verb distance, with 95 % Wilson intervals.

For classification datasets whose examples carry ``attractors`` and ``distance`` columns (the built-in
``agreement`` dataset), where a model's overall accuracy hides what matters: items with nouns of the
other number between subject and verb, and long dependencies. Buckets: attractors 0, 1, 2+; distance 1,
2–3, 4–6, 7+ words (``distill/agreement.py``). ``compare`` stores the result in ``report.json`` under
``breakdown.<model>.<attractors|distance>.<bucket>.{n, accuracy, ci95}`` (accuracy and interval in %);
this module also renders it as a Markdown table and a plot.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from parserfree.distill.agreement import ATTRACTOR_BUCKETS, DISTANCE_BUCKETS, attractor_bucket, distance_bucket

COLUMNS = {"attractors": (attractor_bucket, ATTRACTOR_BUCKETS), "distance": (distance_bucket, DISTANCE_BUCKETS)}
TITLES = {"attractors": "attractors", "distance": "subject–verb distance (words)"}


def wilson(correct: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion, in % (NaNs when n = 0)."""
    if n == 0:
        return float("nan"), float("nan")
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return 100 * max(0.0, centre - half), 100 * min(1.0, centre + half)


def breakdown(pred: np.ndarray, gold: np.ndarray, columns: Sequence[Mapping | None]) -> dict | None:
    """{column: {bucket: {n, accuracy, ci95}}} for one model's class predictions; None when the examples
    do not all carry the ``attractors`` and ``distance`` columns."""
    if not columns or any(c is None or not all(k in c for k in COLUMNS) for c in columns):
        return None
    correct = np.asarray(pred) == np.asarray(gold)
    out: dict = {}
    for column, (bucket_of, buckets) in COLUMNS.items():
        keys = np.array([bucket_of(int(c[column])) for c in columns])
        out[column] = {}
        for b in buckets:
            hits = correct[keys == b]
            n, k = int(hits.size), int(hits.sum())
            out[column][b] = {"n": n, "accuracy": 100 * k / n if n else float("nan"), "ci95": list(wilson(k, n))}
    return out


def breakdowns(preds: Mapping[str, np.ndarray], gold: np.ndarray, columns: Sequence[Mapping | None]) -> dict | None:
    """``breakdown`` of every model (name → class predictions); None when the data has no such columns."""
    if breakdown(gold, gold, columns) is None:
        return None
    return {name: breakdown(p, gold, columns) for name, p in preds.items()}


def _cell(entry: dict) -> str:
    if not entry["n"]:
        return "–"
    lo, hi = entry["ci95"]
    return f"{entry['accuracy']:.1f} [{lo:.1f}, {hi:.1f}]"


def breakdown_markdown(result: dict) -> list[str]:
    """Markdown lines: one table per column, a row per model, accuracy [95 % interval] per bucket, n in the header."""
    lines: list[str] = []
    first = next(iter(result.values()))
    for column, (_, buckets) in COLUMNS.items():
        header = " | ".join(f"{b} (n={first[column][b]['n']:,})" for b in buckets)
        lines += [f"Accuracy % by {TITLES[column]}, [95 % Wilson interval]:", "", f"| model | {header} |",
                  "|---|" + "---:|" * len(buckets)]
        lines += [f"| {name} | " + " | ".join(_cell(r[column][b]) for b in buckets) + " |" for name, r in result.items()]
        lines.append("")
    return lines


def plot_breakdown(result: dict, path: Path) -> None:
    """Accuracy with 95 % intervals per bucket, one panel per column, one series per model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(COLUMNS), figsize=(5.2 * len(COLUMNS), 4.2), squeeze=False)
    width = 0.8 / max(1, len(result))
    for ax, (column, (_, buckets)) in zip(axes[0], COLUMNS.items()):
        x = np.arange(len(buckets))
        for m, (name, r) in enumerate(result.items()):
            acc = np.array([r[column][b]["accuracy"] for b in buckets], dtype=float)
            ci = np.array([r[column][b]["ci95"] for b in buckets], dtype=float)
            err = np.clip(np.nan_to_num(np.stack([acc - ci[:, 0], ci[:, 1] - acc])), 0, None)  # rounding at 0 % and 100 %
            ax.bar(x + (m - (len(result) - 1) / 2) * width, acc, width, yerr=err, capsize=2, label=name)
        ax.axhline(50, color="grey", lw=0.6, ls="--")
        ax.set_xticks(x, [f"{b}\nn={next(iter(result.values()))[column][b]['n']:,}" for b in buckets])
        ax.set_xlabel(TITLES[column])
        ax.set_ylabel("accuracy %")
        ax.set_ylim(0, 100)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8)
    fig.suptitle("Accuracy by attractors and subject–verb distance (95 % Wilson intervals; dashed: chance)")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
