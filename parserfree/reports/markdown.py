"""The comparison report as Markdown: a ``Report`` (or its report.json) → report.md, the terminal summary
and the main job's index.

Last step of the data flow. ``compare`` measures; this module only presents: the headline table (rows
with mean ± sd, the other task metrics, minimal-pair accuracy and the margin over the best shortcut
baseline), the paired verdicts with their power, D̂ and the graph's trees against the parser's
(``quality_tables``), the breakdowns, the bundle's variants and links to the figures (drawn by
``parserfree.reports.figures``; this module loads no matplotlib). Every function takes the ``Report`` or its JSON
form.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..encoder.files import write_json, write_text_atomic
from .quality_tables import distance_lines, quality_table, relations_markdown, trees_markdown
from .report import LIKE_FOR_LIKE, Report, as_report
from .slices import ALL, GROUPS, breakdown_markdown, slice_name
from .tables import contrast_table, fmt, headline_table, score_cell, signed, tree_gap_markdown, variants_markdown

FIGURES = (  # PNG → caption, linked from report.md when compare drew it
    ("bias_curves.png", "Learned bias per distance"),
    ("distance_heatmaps.png", "Predicted vs parser distances"),
    ("throughput.png", "Throughput"),
    ("training_curves.png", "Training curves"),
    ("breakdown.png", "Accuracy by attractors, distance and subject number"),
    ("tree_comparison.png", "spaCy trees (top) and predicted trees (bottom); orange: missed, red: not spaCy's"),
)


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
            "| a | b | " + " | ".join(f"{b} (n={buckets[b].n:,})" for b in names) + " |",
            "|---|---|" + "---:|" * len(names),
        ]
        for c in wanted:
            cells = []
            for b in names:
                x = by_key.get((c.a, c.b, slice_name(group, b)))
                cells.append(
                    "–" if x is None else f"{signed(x.difference)} [{fmt(x.ci95[0])}, {fmt(x.ci95[1])}] {x.verdict}"
                )
            lines.append(f"| {c.a} | {c.b} | " + " | ".join(cells) + " |")
    return lines


def report_markdown(report: Report | dict, folder: Path | None = None) -> str:
    """report.md's text: headline table, speed-up, agreement, D̂ and the graph's trees, paired verdicts,
    per-domain results, trees by relation and length, breakdowns, the bundle's variants, and the figures
    found in ``folder``."""
    report = as_report(report)
    head = report.headline
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
        f"**{fmt(report.speedup_end_to_end, 1)}×**",
    ]
    if head.agreement is not None:
        parts.append(f"- Agreement of parser-free and parser-fed predictions: **{fmt(100 * head.agreement, 1)}%**")
    parts += distance_lines(head)
    leak = head.parse_leak
    if leak:
        parts.append(
            f"- Parse leak: spaCy's trees of the two versions of a pair differ in {fmt(leak.trees_differ, 1)}% of"
            f" the {leak.pairs:,} pairs (labels in {fmt(leak.labels_differ, 1)}%, the subject arcs in"
            f" {fmt(leak.subject_arcs_differ, 1)}%); `twin_grammatical_tree` reads the grammatical version's tree for both"
        )
    extra = report.parser_free_with_parser_distances
    if extra:
        parts.append(
            f"- The parser-free model fed the parser's distances instead of its own: {extra.metric_name} {score_cell(extra)}"
        )
    parts += verdict_markdown(report, report.dataset)
    if len(report.domains) > 1:
        parts += _per_domain(report)
    if any(dom.distance for dom in report.domains.values()):
        parts += ["", "## D̂ and the graph's trees against spaCy's", "", *quality_table(report)]
    relations = {name: dom.distance.relations if dom.distance else None for name, dom in report.domains.items()}
    if any(relations.values()):
        parts += ["", "## Predicted trees by relation and sentence length", "", *relations_markdown(relations)]
    trees = {name: dom.distance.tree if dom.distance else None for name, dom in report.domains.items()}
    if any(trees.values()):
        parts += ["", "## The graph's heads and labels by relation and sentence length", "", *trees_markdown(trees)]
    if head.tree_gap:
        parts += ["", "## Where the parser-free model loses to its reference", "", *tree_gap_markdown(head.tree_gap)]
    if head.breakdown:
        parts += [
            "",
            "## By attractors, subject–verb distance and subject number",
            "",
            *breakdown_markdown(head.breakdown),
        ]
    parts += variants_markdown(report.variants)
    figures = [f"![{caption}]({png})" for png, caption in FIGURES if folder is not None and (folder / png).exists()]
    parts += ["", "## Figures", "", *figures] if figures else []
    parts += ["", f"Versions: {', '.join(f'{k} {v}' for k, v in report.versions.items())}", ""]
    return "\n".join(parts)


def _per_domain(report: Report) -> list[str]:
    """The per-domain table (every row's score, agreement, UUAS, DSpr) and the other domains' verdicts."""
    names = [n for n in report.models if any(n in dom.scores for dom in report.domains.values())]
    parts = [
        "",
        "## Per domain",
        "",
        "| domain | n | " + " | ".join(names) + " | agreement | UUAS | DSpr |",
        "|---|---:|" + "---:|" * len(names) + "---:|---:|---:|",
    ]
    for name, dom in report.domains.items():
        cells = [score_cell(dom.scores[n]) if n in dom.scores else "–" for n in names]
        d = dom.distance
        parts.append(
            f"| {name} | {dom.n_examples:,} | "
            + " | ".join(cells)
            + f" | {fmt(100 * dom.agreement if dom.agreement is not None else None, 1)}% | "
            + f"{fmt(d.uuas if d else None, 1)} | {fmt(d.dspr if d else None, 3)} |"
        )
    for name in list(report.domains)[1:]:
        parts += verdict_markdown(report, name)
    return parts


def write_markdown(report: Report | dict, path: Path) -> None:
    """Write ``report_markdown`` to ``path`` (report.md), linking the figures beside it."""
    write_text_atomic(path, report_markdown(report, path.parent))


def summary_lines(report: Report | dict) -> list[str]:
    """A report in a few lines for the terminal: the headline table, speed-up, agreement and D̂ quality,
    and the like-for-like verdicts on all items."""
    report = as_report(report)
    head = report.headline
    d = head.distance
    lines = [
        headline_table(report),
        f"speed-up {fmt(report.speedup_end_to_end, 1)}× · agreement "
        f"{fmt(100 * head.agreement if head.agreement is not None else None, 1)}% · UUAS {fmt(d.uuas if d else None, 1)}"
        f" · DSpr {fmt(d.dspr if d else None, 3)}",
    ]
    for c in report.contrasts:
        if c.domain == report.dataset and c.slice == ALL and c.kind == LIKE_FOR_LIKE:
            power = f"detectable ±{fmt(c.detectable, 2)}" if c.detectable is not None else "no difference detectable"
            lines.append(
                f"{c.a} vs {c.b}: {signed(c.difference, 2)} points [{fmt(c.ci95[0], 2)}, {fmt(c.ci95[1], 2)}], {c.verdict} ({power})"
            )
    return lines


def write_index(
    reports: Mapping[str, Report | dict], out: Path, seconds: float, stages: dict[str, float | None] | None = None
) -> None:
    """index.md and index.json of the main job: each task's headline rows, its like-for-like verdicts and
    the power behind them, a link to its report, and the wall time of every stage's last build."""
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
            "uuas": head.distance.uuas if head.distance else None,
        }
        like = [c for c in overall if c.kind == LIKE_FOR_LIKE]
        parts += [
            f"## {task}: {report.dataset} — [report]({task}/report/report.md)",
            "",
            headline_table(report),
            "",
            f"Speed-up parser-free vs parser-fed {fmt(report.speedup_end_to_end, 1)}× · UUAS "
            f"{fmt(head.distance.uuas if head.distance else None, 1)}",
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
