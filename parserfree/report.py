"""The comparison report: report.json → report.md tables and the PNGs a person would rather look at.

Last step of the data flow. ``compare`` measures; this module only presents: the learned bias per
distance bucket of each biased model, predicted vs parser distance heatmaps with the words on the
axes, throughput bars, and training curves read from the runs' ``logs/metrics.csv``.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from parserfree.breakdown import breakdown_markdown  # noqa: E402


def plot_bias_curves(curves: dict[str, np.ndarray], path: Path) -> None:
    """Learned additive bias per clamped distance bucket (one line per model, or per head)."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for name, curve in curves.items():
        curve = np.asarray(curve)
        x = np.arange(curve.shape[0])
        if curve.ndim == 1:
            ax.plot(x, curve, marker="o", label=name)
        else:
            for h in range(curve.shape[1]):
                ax.plot(x, curve[:, h], marker=".", label=f"{name} head {h}")
    ax.axhline(0, color="grey", lw=0.6)
    ax.set_xlabel("tree distance bucket (last = max distance or more, other sentence)")
    ax.set_ylabel("bias added to attention score")
    ax.set_title("Learned syntax bias per tree distance")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_distance_heatmaps(examples: list[tuple[list[str], np.ndarray, np.ndarray]], path: Path, clip: float = 10.0) -> None:
    """Predicted D̂ (left) vs parser D (right) for a few sentences, words on both axes."""
    rows = max(1, len(examples))
    fig, axes = plt.subplots(rows, 2, figsize=(10, 4.2 * rows), squeeze=False)
    for r, (words, pred, gold) in enumerate(examples):
        for c, (matrix, title) in enumerate(((pred, "predicted d̂ (parser-free graph)"), (gold, "spaCy parser distance d"))):
            ax = axes[r, c]
            im = ax.imshow(np.minimum(matrix, clip), cmap="viridis_r", vmin=0, vmax=clip)
            ax.set_xticks(range(len(words)), words, rotation=90, fontsize=7)
            ax.set_yticks(range(len(words)), words, fontsize=7)
            ax.set_title(title, fontsize=9)
            fig.colorbar(im, ax=ax, fraction=0.046)
    fig.suptitle(f"Tree distances between words (clipped at {clip:g})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


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
            ax.annotate("ROOT", (i, 0.15), (i, 1.1), ha="center", fontsize=7, arrowprops={"arrowstyle": "-|>", "lw": 0.8})
            continue
        colour = colour_of(frozenset((i, int(h))))
        ax.add_patch(FancyArrowPatch((h, 0.15), (i, 0.15), connectionstyle=f"arc3,rad={-0.45 if h < i else 0.45}",
                                     arrowstyle="-|>", mutation_scale=8, lw=1.4, color=colour))
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
    from parserfree.export.predicted_tree import heads_from_distances

    rows = max(1, len(examples))
    width = max(8.0, 0.75 * max((len(w) for w, _, _ in examples), default=8))
    fig, axes = plt.subplots(2 * rows, 1, figsize=(width, 2.2 * 2 * rows), squeeze=False)
    for r, (words, spacy_heads, distances) in enumerate(examples):
        predicted = heads_from_distances(np.asarray(distances)[: len(words), : len(words)])
        diff = arc_differences(np.asarray(spacy_heads), predicted)
        shared, total = len(diff["shared"]), len(diff["shared"]) + len(diff["spacy_only"])
        def colour(kind_if_not_shared):
            return lambda arc: TREE_COLOURS["shared" if arc in diff["shared"] else kind_if_not_shared]
        _draw_tree(axes[2 * r, 0], words, np.asarray(spacy_heads), colour("spacy_only"),
                   "spaCy's parser (orange: missed by the prediction)")
        _draw_tree(axes[2 * r + 1, 0], words, predicted, colour("predicted_only"),
                   f"predicted: {shared} of {total} of spaCy's arcs, direction ignored (red: not spaCy's)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_throughput(speeds: dict[str, float], path: Path, threads: int) -> None:
    """Sentences per second end to end, one bar per model."""
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    names = list(speeds)
    bars = ax.barh(names, [speeds[n] for n in names], color=["#4c72b0" if "free" in n else "#dd8452" for n in names])
    ax.bar_label(bars, fmt="%.0f", fontsize=8)
    ax.set_xlabel(f"sentences/s — batch 32, {threads} threads, parsing or tokenising included")
    ax.set_xlim(0, 1.15 * max(speeds.values()))
    ax.set_title("End-to-end throughput")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


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
    panels = [("train/task_loss", "train task loss"), ("val/metric", "validation task metric"),
              ("train/distance_loss", "train distance loss"), ("val/uuas", "validation UUAS of d̂")]
    fig, axes = plt.subplots(2, 2, figsize=(10, 6))
    for ax, (key, title) in zip(axes.flat, panels):
        for name, run in runs.items():
            f = Path(run) / "logs" / "metrics.csv"
            if not f.exists():
                continue
            points = read_curves(f).get(key, [])
            if points:
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
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _fmt(value, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}" if isinstance(value, (int, float)) else str(value)


def headline_table(report: dict) -> str:
    """The models table of a report as Markdown."""
    lines = [
        "| model | recipe | " + report["models"][next(iter(report["models"]))]["metric_name"] + " | sentences/s | words/s | p50 ms | p95 ms |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, m in report["models"].items():
        lines.append(
            f"| {name} | {m.get('recipe', '–')} | {_fmt(m['metric'], 2)} | {_fmt(m['sentences_per_s'], 0)} | {_fmt(m['words_per_s'], 0)} "
            f"| {_fmt(m['latency_ms_p50'], 2)} | {_fmt(m['latency_ms_p95'], 2)} |"
        )
    return "\n".join(lines)


def relations_markdown(domains: dict[str, dict]) -> list[str]:
    """UUAS and relation recall (percent of the parser's arcs of each label group in the predicted tree)
    per domain and sentence length, as Markdown table lines."""
    first = next(dom["relations"] for dom in domains.values() if dom.get("relations"))
    groups = list(first["all"]["recall"])
    lines = ["Recall: percent of the parser's arcs of each relation found in the predicted tree (undirected, "
             "punctuation excluded, as UUAS); a sentence is one parser tree; n = arcs of that relation.", "",
             "| domain | sentence length | sentences | UUAS | " + " | ".join(groups) + " |",
             "|---|---|---:|---:|" + "---:|" * len(groups)]
    for name, dom in domains.items():
        for where, row in (dom.get("relations") or {}).items():
            if not row["sentences"]:
                continue
            cells = [f"{_fmt(row['recall'][g], 1)} (n {row['relation_arcs'][g]:,})" for g in groups]
            lines.append(f"| {name} | {'all' if where == 'all' else where} | {row['sentences']:,} | {_fmt(row['uuas'], 1)} | "
                         + " | ".join(cells) + " |")
    return lines


def variants_markdown(evaluation: dict | None) -> list[str]:
    """The parser-free bundle's model variants (fp32, optimised, int8) as the export measured them on the
    test split: metric, agreement with fp32 and graph speed side by side."""
    if not evaluation:
        return []
    lines = ["", "## Model variants of the parser-free bundle", ""]
    if "skipped" in evaluation:
        return lines + [f"The export could not evaluate its variants: {evaluation['skipped']}."]
    first = next(iter(evaluation["variants"].values()))
    lines += [f"Measured by the export on the {evaluation['source']} ({evaluation['n_examples']:,} sentences; speed of the "
              f"graph alone, batch {evaluation['batch_size']}, {evaluation['threads'] or 'default'} threads).", "",
              f"| variant | {first['metric_name']} | agreement with fp32 | D̂ rows as fp32 | sentences/s |",
              "|---|---:|---:|---:|---:|"]
    for name, v in evaluation["variants"].items():
        rows = v.get("distance_rows_as_fp32")
        lines.append(f"| {name} | {_fmt(v['metric'], 2)} | {_fmt(100 * v['agreement_with_fp32'], 1)}% | "
                     f"{_fmt(100 * rows, 1) + '%' if rows is not None else '–'} | {_fmt(v['sentences_per_s'], 0)} |")
    return lines


def write_markdown(report: dict, path: Path) -> None:
    """report.md: headline table, distances, agreement, speed-up, per-domain results, figures."""
    d = report["distance"]
    parts = [
        f"# parserfree comparison — {report['dataset']} ({report['split']}, {report['n_examples']:,} examples)",
        "",
        f"Threads: {report['threads']} · throughput at batch 32, latency at batch 1, parsing and tokenisation included.",
        "",
        headline_table(report),
        "",
        f"- End-to-end speed-up, parser-free ONNX vs parser-fed: **{_fmt(report['speedup_end_to_end'], 1)}×**",
        f"- Agreement of parser-free and parser-fed predictions: **{_fmt(100 * report['agreement'], 1)}%**",
        f"- Predicted distances vs spaCy: UUAS **{_fmt(d['uuas'], 1)}**, DSpr **{_fmt(d['dspr'], 3)}**, L1 {_fmt(d['l1'], 2)}"
        f" (|i−j| chain baseline: UUAS {_fmt(d.get('chain_uuas'), 1)}, DSpr {_fmt(d.get('chain_dspr'), 3)})",
    ]
    if d.get("argmax_cycle_rate") is not None:
        parts.append(f"- The predictor's raw argmax heads hold a cycle in {_fmt(d['argmax_cycle_rate'], 1)}% of examples; the graph"
                     " breaks every cycle, so its distances are those of a forest")
    extra = report.get("parser_free_with_parser_distances")
    if extra:
        parts.append(f"- The parser-free model fed the parser's distances instead of its own: {extra['metric_name']} {_fmt(extra['metric'], 2)}")
    if report.get("domains"):
        parts += ["", "## Per domain", "", "| domain | n | parser-fed | parser-free | no-syntax | agreement | UUAS | DSpr |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name, dom in report["domains"].items():
            parts.append(
                f"| {name} | {dom['n_examples']:,} | {_fmt(dom['parser_fed'], 2)} | {_fmt(dom['parser_free_onnx'], 2)} | "
                f"{_fmt(dom.get('no_syntax'), 2)} | {_fmt(100 * dom['agreement'], 1)}% | {_fmt(dom['uuas'], 1)} | {_fmt(dom['dspr'], 3)} |"
            )
    if any(dom.get("relations") for dom in report.get("domains", {}).values()):
        parts += ["", "## Predicted trees by relation and sentence length", "", *relations_markdown(report["domains"])]
    if report.get("contrasts"):
        parts += ["", "## Which rows differ in one thing only", "", "| model | vs | the one difference |", "|---|---|---|"]
        parts += [f"| {c['a']} ({c['recipes'][0]}) | {c['b']} ({c['recipes'][1]}) | {c['differs_in']} |" for c in report["contrasts"]]
    if report.get("breakdown"):
        parts += ["", "## By attractors and subject–verb distance", "", *breakdown_markdown(report["breakdown"])]
    parts += variants_markdown(report.get("variants"))
    parts += ["", "## Figures", ""]
    for png, caption in (("bias_curves.png", "Learned bias per distance"), ("distance_heatmaps.png", "Predicted vs parser distances"),
                         ("throughput.png", "Throughput"), ("training_curves.png", "Training curves"), ("breakdown.png", "Accuracy by attractors and distance"),
                         ("tree_comparison.png", "spaCy trees (top) and predicted trees (bottom); orange: missed, red: not spaCy's")):
        if (path.parent / png).exists():
            parts.append(f"![{caption}]({png})")
    parts += ["", f"Versions: {', '.join(f'{k} {v}' for k, v in report['versions'].items())}", ""]
    path.write_text("\n".join(parts))


def write_index(reports: dict[str, dict], out: Path, seconds: float, stages: dict[str, float | None] | None = None) -> None:
    """index.md and index.json of the main job: each task's headline models and a link to its report, and
    the wall time of every stage's last build."""
    from parserfree.encoder.files import write_json, write_text_atomic

    parts = ["# parserfree main job", "", f"All tasks in {seconds / 60:.1f} min.", ""]
    summary = {}
    for task, report in reports.items():
        summary[task] = {"dataset": report["dataset"], "metric_name": next(iter(report["models"].values()))["metric_name"],
                         "models": {name: m["metric"] for name, m in report["models"].items()},
                         "speedup_end_to_end": report["speedup_end_to_end"], "uuas": report["distance"]["uuas"]}
        parts += [f"## {task}: {report['dataset']} — [report]({task}/report/report.md)", "", headline_table(report), "",
                  f"Speed-up parser-free vs parser-fed {_fmt(report['speedup_end_to_end'], 1)}× · UUAS "
                  f"{_fmt(report['distance']['uuas'], 1)}", ""]
    if stages:
        parts += ["## Time per stage", "", "Wall seconds of each stage's last build (a stage reused by this run keeps "
                  "the time it took when built; a task's first run includes preparing and parsing its data).", "",
                  "| stage | seconds |", "|---|---:|"]
        parts += [f"| {name} | {'–' if s is None else f'{s:.0f}'} |" for name, s in stages.items()] + [""]
    write_json(out / "index.json", {"seconds": seconds, "stage_seconds": stages or {}, "tasks": summary})
    write_text_atomic(out / "index.md", "\n".join(parts))
