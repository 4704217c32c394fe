"""The comparison report: a ``Report`` (or its report.json) → report.md tables, the main job's index, and
the PNGs a person would rather look at.

Last step of the data flow. ``compare`` measures; this module only presents: the headline table (rows
with mean ± sd, minimal-pair accuracy and the margin over the best shortcut baseline), the paired
verdicts with their power, the learned bias per distance bucket of each biased model, predicted vs
parser distance heatmaps with the words on the axes, throughput bars, and training curves read from the
runs' ``logs/metrics.csv``. Every function that renders a report takes the ``Report`` or its JSON form.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from parserfree.breakdown import ALL, GROUPS, breakdown_markdown, slice_name  # noqa: E402
from parserfree.encoder.files import write_text_atomic  # noqa: E402
from parserfree.report_types import LIKE_FOR_LIKE, MODEL, Contrast, Margin, Report, Score, as_report  # noqa: E402


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
    from parserfree.export.predicted_tree import heads_from_distances

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
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _fmt(value, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}" if isinstance(value, (int, float)) else str(value)


def _signed(value, digits: int = 1) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:+.{digits}f}"


def score_cell(score: Score, digits: int = 2) -> str:
    """A row's metric as "mean ± sd" over seeds (the mean alone for one seed)."""
    return _fmt(score.metric, digits) + (f" ± {score.metric_sd:.{digits}f}" if score.metric_sd is not None else "")


def margin_cell(margin: Margin | None) -> str:
    """How far a row is from the best baseline: "+3.1 [1.2, 5.0] ahead of bag_of_words"."""
    if margin is None:
        return "–"
    lo, hi = margin.ci95
    return f"{_signed(margin.difference)} [{_fmt(lo)}, {_fmt(hi)}] {margin.verdict} ({margin.baseline})"


def headline_table(report: Report | dict) -> str:
    """The rows of a report on its headline domain as Markdown: metric (mean ± sd over seeds), minimal-pair
    accuracy, the margin over the best shortcut baseline, and speed."""
    report = as_report(report)
    domain = report.headline
    name = next(iter(domain.scores.values())).metric_name
    pairs = domain.n_pairs > 0
    lines = [
        f"| row | kind | {name} | "
        + ("pairs both right % | " if pairs else "")
        + "vs best baseline (points) | sentences/s | p50 ms | p95 ms |",
        "|---|---|---:|" + ("---:|" if pairs else "") + "---|---:|---:|---:|",
    ]
    for row_name, row in report.models.items():
        score = domain.scores.get(row_name)
        if score is None:
            continue
        kind = f"{row.recipe} · {row.role}" if row.kind == MODEL else "shortcut baseline"
        speed = row.speed
        cells = [row_name, kind, score_cell(score)] + ([_fmt(score.pair_accuracy, 1)] if pairs else [])
        cells += [
            margin_cell(score.over_best_baseline) if row.kind == MODEL else "–",
            _fmt(speed.sentences_per_s, 0) if speed else "–",
            _fmt(speed.latency_ms_p50, 2) if speed else "–",
            _fmt(speed.latency_ms_p95, 2) if speed else "–",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def contrast_table(contrasts: list[Contrast]) -> list[str]:
    """Paired verdicts as Markdown lines: difference [95 % interval], discordant items, p, Holm's p, the
    verdict and the smallest difference the test split detects (α 0.05, power 0.8)."""
    lines = [
        "| a | b | differs in | a − b (points) [95 % interval] | only a / only b right | p | p (Holm) | verdict | detectable |",
        "|---|---|---|---:|---:|---:|---:|---|---:|",
    ]
    for c in contrasts:
        lo, hi = c.ci95
        lines.append(
            f"| {c.a} | {c.b} | {c.differs_in} | {_signed(c.difference, 2)} [{_fmt(lo, 2)}, {_fmt(hi, 2)}] | "
            f"{_fmt(c.discordant[0], 0)} / {_fmt(c.discordant[1], 0)} | {c.p:.3g} | {c.p_holm:.3g} | **{c.verdict}** | "
            f"{'±' + _fmt(c.detectable, 2) if c.detectable is not None else 'none'} |"
        )
    return lines


def verdict_markdown(report: Report, domain: str) -> list[str]:
    """The paired verdicts of one domain: every contrast on all items, then the like-for-like ones and
    each model against the best baseline per breakdown bucket."""
    overall = [c for c in report.contrasts if c.domain == domain and c.slice == ALL]
    if not overall:
        return []
    note = report.statistics
    lines = [
        "",
        f"## Paired verdicts — {domain}",
        "",
        f"Every row's prediction for every item, compared pairwise ({note.test}; 95 % percentile bootstrap over "
        f"{note.resampling_unit}s{' and seeds' if report.seeds > 1 else ''}, {note.resamples:,} resamples; Holm over "
        f"the {len(overall)} contrasts of a slice). A verdict (ahead / behind) needs Holm's p < {note.alpha:g} and the "
        f"interval on one side of 0. *detectable*: the smallest paired difference this split detects at α "
        f"{note.alpha:g} with power {note.power:g} given the observed discordance ({note.power_method}) — "
        '"no difference shown" rules out only differences at least that large.',
        "",
        *contrast_table(overall),
    ]
    best = {
        c.a: s.over_best_baseline.baseline
        for c in overall
        if (s := report.domains[domain].scores.get(c.a)) and s.over_best_baseline
    }
    wanted = [c for c in overall if c.kind == LIKE_FOR_LIKE or best.get(c.a) == c.b]
    breakdown = report.domains[domain].breakdown
    if not breakdown or not wanted:
        return lines
    groups = next(iter(breakdown.values()))
    by_key = {(c.a, c.b, c.slice): c for c in report.contrasts if c.domain == domain}
    for group, buckets in groups.items():
        names = list(buckets)
        lines += [
            "",
            f"By {GROUPS[group].title}: a − b in points [95 % interval], verdict",
            "",
            "| a | b | " + " | ".join(f"{b} (n={buckets[b]['n']:,})" for b in names) + " |",
            "|---|---|" + "---:|" * len(names),
        ]
        for c in wanted:
            cells = []
            for b in names:
                x = by_key.get((c.a, c.b, slice_name(group, b)))
                cells.append(
                    "–" if x is None else f"{_signed(x.difference)} [{_fmt(x.ci95[0])}, {_fmt(x.ci95[1])}] {x.verdict}"
                )
            lines.append(f"| {c.a} | {c.b} | " + " | ".join(cells) + " |")
    return lines


def relations_markdown(domains: dict[str, dict]) -> list[str]:
    """UUAS and relation recall (percent of the parser's arcs of each label group in the predicted tree)
    per domain and sentence length, as Markdown table lines."""
    first = next(dom["relations"] for dom in domains.values() if dom.get("relations"))
    groups = list(first["all"]["recall"])
    lines = [
        "Recall: percent of the parser's arcs of each relation found in the predicted tree (undirected, "
        "punctuation excluded, as UUAS); a sentence is one parser tree; n = arcs of that relation.",
        "",
        "| domain | sentence length | sentences | UUAS | " + " | ".join(groups) + " |",
        "|---|---|---:|---:|" + "---:|" * len(groups),
    ]
    for name, dom in domains.items():
        for where, row in (dom.get("relations") or {}).items():
            if not row["sentences"]:
                continue
            cells = [f"{_fmt(row['recall'][g], 1)} (n {row['relation_arcs'][g]:,})" for g in groups]
            lines.append(
                f"| {name} | {'all' if where == 'all' else where} | {row['sentences']:,} | {_fmt(row['uuas'], 1)} | "
                + " | ".join(cells)
                + " |"
            )
    return lines


def domain_relations(report: Report) -> dict[str, dict]:
    """{domain: {"relations": …}} of a report: the relation recall ``relations_markdown`` draws."""
    return {n: {"relations": (dom.distance or {}).get("relations")} for n, dom in report.domains.items()}


def variants_markdown(evaluation: dict | None) -> list[str]:
    """The parser-free bundle's model variants (fp32, optimised, int8) as the export measured them on the
    test split: metric, agreement with fp32 and graph speed side by side."""
    if not evaluation:
        return []
    lines = ["", "## Model variants of the parser-free bundle", ""]
    if "skipped" in evaluation:
        return lines + [f"The export could not evaluate its variants: {evaluation['skipped']}."]
    first = next(iter(evaluation["variants"].values()))
    lines += [
        f"Measured by the export on the {evaluation['source']} ({evaluation['n_examples']:,} sentences; speed of the "
        f"graph alone, batch {evaluation['batch_size']}, {evaluation['threads'] or 'default'} threads).",
        "",
        f"| variant | {first['metric_name']} | agreement with fp32 | D̂ rows as fp32 | sentences/s |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, v in evaluation["variants"].items():
        rows = v.get("distance_rows_as_fp32")
        lines.append(
            f"| {name} | {_fmt(v['metric'], 2)} | {_fmt(100 * v['agreement_with_fp32'], 1)}% | "
            f"{_fmt(100 * rows, 1) + '%' if rows is not None else '–'} | {_fmt(v['sentences_per_s'], 0)} |"
        )
    return lines


def write_markdown(report: Report | dict, path: Path) -> None:
    """report.md: headline table, speed-up, agreement, distances, paired verdicts, per-domain results,
    breakdowns, the bundle's variants, figures."""
    report = as_report(report)
    head = report.headline
    d = head.distance or {}
    seeds = f" · {report.seeds} seeds per model row (mean ± sd; speed of seed 0)" if report.seeds > 1 else ""
    parts = [
        f"# parserfree comparison — {report.dataset} ({report.split}, {head.n_examples:,} examples"
        + (f", {head.n_pairs:,} minimal pairs" if head.n_pairs else "")
        + ")",
        "",
        f"Threads: {report.threads} · throughput at batch {report.batch_size}, latency at batch 1, parsing and tokenisation included{seeds}.",
        "",
        headline_table(report),
        "",
        f"- End-to-end speed-up, parser-free vs parser-fed ({report.roles['parser_free']} vs {report.roles['reference']}): "
        f"**{_fmt(report.speedup_end_to_end, 1)}×**",
        f"- Agreement of parser-free and parser-fed predictions: **{_fmt(100 * head.agreement, 1)}%**"
        if head.agreement is not None
        else None,
        f"- Predicted distances vs spaCy: UUAS **{_fmt(d.get('uuas'), 1)}**, DSpr **{_fmt(d.get('dspr'), 3)}**, L1 {_fmt(d.get('l1'), 2)}"
        f" (|i−j| chain baseline: UUAS {_fmt(d.get('chain_uuas'), 1)}, DSpr {_fmt(d.get('chain_dspr'), 3)})",
    ]
    if head.distance_by_seed:
        parts.append("- UUAS by seed: " + ", ".join(_fmt(x.get("uuas"), 1) for x in head.distance_by_seed))
    if d.get("argmax_cycle_rate") is not None:
        parts.append(
            f"- The predictor's raw argmax heads hold a cycle in {_fmt(d['argmax_cycle_rate'], 1)}% of examples; the graph"
            " breaks every cycle, so its distances are those of a forest"
        )
    leak = head.parse_leak
    if leak:
        parts.append(
            f"- Parse leak: spaCy's trees of the two versions of a pair differ in {_fmt(leak['trees_differ'], 1)}% of"
            f" the {leak['pairs']:,} pairs (labels in {_fmt(leak['labels_differ'], 1)}%, the subject arcs in"
            f" {_fmt(leak['subject_arcs_differ'], 1)}%); `twin_grammatical_tree` reads the grammatical version's tree for both"
        )
    extra = report.parser_free_with_parser_distances
    if extra:
        parts.append(
            f"- The parser-free model fed the parser's distances instead of its own: {extra.metric_name} {score_cell(extra)}"
        )
    parts = [p for p in parts if p is not None]
    parts += verdict_markdown(report, report.dataset)
    if len(report.domains) > 1:
        names = [n for n in report.models if any(n in dom.scores for dom in report.domains.values())]
        parts += [
            "",
            "## Per domain",
            "",
            "| domain | n | " + " | ".join(names) + " | agreement | UUAS | DSpr |",
            "|---|---:|" + "---:|" * len(names) + "---:|---:|---:|",
        ]
        for name, dom in report.domains.items():
            cells = [score_cell(dom.scores[n]) if n in dom.scores else "–" for n in names]
            dd = dom.distance or {}
            parts.append(
                f"| {name} | {dom.n_examples:,} | "
                + " | ".join(cells)
                + f" | {_fmt(100 * dom.agreement if dom.agreement is not None else None, 1)}% | {_fmt(dd.get('uuas'), 1)} | {_fmt(dd.get('dspr'), 3)} |"
            )
        for name in list(report.domains)[1:]:
            parts += verdict_markdown(report, name)
    domains = domain_relations(report)
    if any(dom["relations"] for dom in domains.values()):
        parts += ["", "## Predicted trees by relation and sentence length", "", *relations_markdown(domains)]
    if head.breakdown:
        parts += [
            "",
            "## By attractors, subject–verb distance and subject number",
            "",
            *breakdown_markdown(head.breakdown),
        ]
    parts += variants_markdown(report.variants)
    figures = [
        f"![{caption}]({png})"
        for png, caption in (
            ("bias_curves.png", "Learned bias per distance"),
            ("distance_heatmaps.png", "Predicted vs parser distances"),
            ("throughput.png", "Throughput"),
            ("training_curves.png", "Training curves"),
            ("breakdown.png", "Accuracy by attractors, distance and subject number"),
            ("tree_comparison.png", "spaCy trees (top) and predicted trees (bottom); orange: missed, red: not spaCy's"),
        )
        if (path.parent / png).exists()
    ]
    parts += ["", "## Figures", "", *figures] if figures else []
    parts += ["", f"Versions: {', '.join(f'{k} {v}' for k, v in report.versions.items())}", ""]
    write_text_atomic(path, "\n".join(parts))


def summary_lines(report: Report | dict) -> list[str]:
    """A report in a few lines for the terminal: the headline table, speed-up, agreement and D̂ quality,
    and the like-for-like verdicts on all items."""
    report = as_report(report)
    head = report.headline
    d = head.distance or {}
    lines = [
        headline_table(report),
        f"speed-up {_fmt(report.speedup_end_to_end, 1)}× · agreement "
        f"{_fmt(100 * head.agreement if head.agreement is not None else None, 1)}% · UUAS {_fmt(d.get('uuas'), 1)} · DSpr {_fmt(d.get('dspr'), 3)}",
    ]
    for c in report.contrasts:
        if c.domain == report.dataset and c.slice == ALL and c.kind == LIKE_FOR_LIKE:
            power = f"detectable ±{_fmt(c.detectable, 2)}" if c.detectable is not None else "no difference detectable"
            lines.append(
                f"{c.a} vs {c.b}: {_signed(c.difference, 2)} points [{_fmt(c.ci95[0], 2)}, {_fmt(c.ci95[1], 2)}], {c.verdict} ({power})"
            )
    return lines


def write_index(
    reports: Mapping[str, Report | dict], out: Path, seconds: float, stages: dict[str, float | None] | None = None
) -> None:
    """index.md and index.json of the main job: each task's headline rows, its like-for-like verdicts and
    the power behind them, a link to its report, and the wall time of every stage's last build."""
    from parserfree.encoder.files import write_json

    parts = ["# parserfree main job", "", f"All tasks in {seconds / 60:.1f} min.", ""]
    summary = {}
    for task, report in reports.items():
        report = as_report(report)
        head = report.headline
        overall = [c for c in report.contrasts if c.domain == report.dataset and c.slice == ALL]
        summary[task] = {
            "dataset": report.dataset,
            "seeds": report.seeds,
            "metric_name": next(iter(head.scores.values())).metric_name,
            "rows": {
                n: {
                    "kind": report.models[n].kind,
                    "metric": s.metric,
                    "metric_sd": s.metric_sd,
                    "pair_accuracy": s.pair_accuracy,
                }
                for n, s in head.scores.items()
                if n in report.models
            },
            "contrasts": [
                {k: getattr(c, k) for k in ("a", "b", "kind", "difference", "ci95", "p_holm", "verdict", "detectable")}
                for c in overall
            ],
            "speedup_end_to_end": report.speedup_end_to_end,
            "uuas": (head.distance or {}).get("uuas"),
        }
        like = [c for c in overall if c.kind == LIKE_FOR_LIKE]
        parts += [
            f"## {task}: {report.dataset} — [report]({task}/report/report.md)",
            "",
            headline_table(report),
            "",
            f"Speed-up parser-free vs parser-fed {_fmt(report.speedup_end_to_end, 1)}× · UUAS "
            f"{_fmt((head.distance or {}).get('uuas'), 1)}",
            "",
        ]
        if like:
            parts += [
                f"Like-for-like verdicts on all {head.n_examples:,} items ({report.statistics.test}; Holm; *detectable*: "
                f"smallest difference detectable at α {report.statistics.alpha:g}, power {report.statistics.power:g}):",
                "",
                *contrast_table(like),
                "",
            ]
    if stages:
        parts += [
            "## Time per stage",
            "",
            "Wall seconds of each stage's last build (a stage reused by this run keeps "
            "the time it took when built; a task's first run includes preparing and parsing its data).",
            "",
            "| stage | seconds |",
            "|---|---:|",
        ]
        parts += [f"| {name} | {'–' if s is None else f'{s:.0f}'} |" for name, s in stages.items()] + [""]
    write_json(out / "index.json", {"seconds": seconds, "stage_seconds": stages or {}, "tasks": summary})
    write_text_atomic(out / "index.md", "\n".join(parts))
