"""The report's tables as Markdown: the models table, the paired verdicts and the bundle's variants.

Shared by report.md and the main job's index (``parserfree.reports.markdown``) and by the results pages
(``parserfree.reports.results_page``), so a table reads the same everywhere. Numbers are formatted by ``fmt`` and
``signed`` (an absent or NaN value is "–").
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from .parts import GAP_SUBJECT, GAP_TREE, GAP_VERB_SUBJECT, TreeGap, Variants
from .report import MODEL, Contrast, Margin, Report, Score, as_report

# Task metrics of ``Score.per_seed`` shown beside the main one, mean ± sd over seeds: key → (header, digits)
SECONDARY_METRICS = {"macro_f1": ("macro-F1", 3), "mae": ("MAE", 3)}


def fmt(value, digits: int = 1) -> str:
    """A number with thousands separators and ``digits`` decimals; "–" for None or NaN; text as it is."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}" if isinstance(value, (int, float)) else str(value)


def signed(value, digits: int = 1) -> str:
    """A difference with its sign; "–" for None or NaN."""
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:+.{digits}f}"


def percent(share: float | None, digits: int = 1) -> str:
    """A share (0–1) in percent, "–" when absent."""
    return fmt(None if share is None else 100 * share, digits)


def score_cell(score: Score, digits: int = 2) -> str:
    """A row's metric as "mean ± sd" over seeds (the mean alone for one seed)."""
    return fmt(score.metric, digits) + (f" ± {score.metric_sd:.{digits}f}" if score.metric_sd is not None else "")


def secondary_cell(score: Score, key: str) -> str:
    """A secondary task metric (``SECONDARY_METRICS``) of a row as "mean ± sd" over its seeds."""
    digits = SECONDARY_METRICS[key][1]
    values = [float(s[key]) for s in score.per_seed if s.get(key) is not None]  # type: ignore[literal-required]
    if not values:
        return "–"
    sd = f" ± {statistics.stdev(values):.{digits}f}" if len(values) > 1 else ""
    return fmt(statistics.fmean(values), digits) + sd


def margin_cell(margin: Margin | None) -> str:
    """How far a row is from the best baseline: "+3.1 [1.2, 5.0] ahead of bag_of_words"."""
    if margin is None:
        return "–"
    lo, hi = margin.ci95
    return f"{signed(margin.difference)} [{fmt(lo)}, {fmt(hi)}] {margin.verdict} ({margin.baseline})"


def headline_table(report: Report | dict) -> str:
    """The rows of a report on its headline domain as Markdown: metric (mean ± sd over seeds), the other
    task metrics (macro-F1, or MAE), minimal-pair accuracy, the margin over the best shortcut baseline, and
    speed."""
    report = as_report(report)
    domain = report.headline
    name = next(iter(domain.scores.values())).metric_name
    pairs = domain.n_pairs > 0
    extra = [k for k in SECONDARY_METRICS if any(k in s for score in domain.scores.values() for s in score.per_seed)]
    lines = [
        f"| row | kind | {name} | "
        + "".join(f"{SECONDARY_METRICS[k][0]} | " for k in extra)
        + ("pairs both right % | " if pairs else "")
        + "vs best baseline (points) | sentences/s | p50 ms | p95 ms |",
        "|---|---|---:|" + "---:|" * len(extra) + ("---:|" if pairs else "") + "---|---:|---:|---:|",
    ]
    for row_name, row in report.models.items():
        score = domain.scores.get(row_name)
        if score is None:
            continue
        kind = f"{row.recipe} · {row.role}" if row.kind == MODEL else "shortcut baseline"
        speed = row.speed
        cells = [row_name, kind, score_cell(score), *(secondary_cell(score, k) for k in extra)]
        cells += [fmt(score.pair_accuracy, 1)] if pairs else []
        cells += [
            margin_cell(score.over_best_baseline) if row.kind == MODEL else "–",
            fmt(speed.sentences_per_s, 0) if speed else "–",
            fmt(speed.latency_ms_p50, 2) if speed else "–",
            fmt(speed.latency_ms_p95, 2) if speed else "–",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def contrast_table(contrasts: Sequence[Contrast]) -> list[str]:
    """Paired verdicts as Markdown lines: difference [95 % interval], discordant items, p, Holm's p, the
    verdict and the smallest difference the test split detects (α 0.05, power 0.8)."""
    lines = [
        "| a | b | differs in | a − b (points) [95 % interval] | only a / only b right | p | p (Holm) | verdict | detectable |",
        "|---|---|---|---:|---:|---:|---:|---|---:|",
    ]
    for c in contrasts:
        lo, hi = c.ci95
        lines.append(
            f"| {c.a} | {c.b} | {c.differs_in} | {signed(c.difference, 2)} [{fmt(lo, 2)}, {fmt(hi, 2)}] | "
            f"{fmt(c.discordant[0], 0)} / {fmt(c.discordant[1], 0)} | {c.p:.3g} | {c.p_holm:.3g} | **{c.verdict}** | "
            f"{'±' + fmt(c.detectable, 2) if c.detectable is not None else 'none'} |"
        )
    return lines


def variants_markdown(evaluation: Variants | None) -> list[str]:
    """The parser-free bundle's model variants (fp32, optimised, int8) as the export measured them on the
    test split: metric, the shares of predictions, D̂ rows, heads and labels equal to fp32's, and the graph's
    speed side by side."""
    if evaluation is None:
        return []
    lines = ["", "## Model variants of the parser-free bundle", ""]
    if evaluation.skipped is not None:
        return lines + [f"The export could not evaluate its variants: {evaluation.skipped}."]
    first = next(iter(evaluation.variants.values()))
    lines += [
        f"Measured by the export on the {evaluation.source} ({fmt(evaluation.n_examples, 0)} sentences; speed of the "
        f"graph alone, batch {evaluation.batch_size}, {evaluation.threads or 'default'} threads). *as fp32*: the "
        "share of words whose D̂ row, head or label equals the fp32 graph's; *tree graph*: the speed of the graph "
        "that outputs the trees, where the bundle has one apart from the task graph.",
        "",
        f"| variant | {first.metric_name} | agreement with fp32 | D̂ rows as fp32 | heads as fp32 | labels as fp32 | "
        "sentences/s | tree graph sentences/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, v in evaluation.variants.items():
        shares = (v.distance_rows_as_fp32, v.heads_as_fp32, v.labels_as_fp32)
        lines.append(
            f"| {name} | {fmt(v.metric, 2)} | {percent(v.agreement_with_fp32)}% | "
            + " | ".join(percent(x) + ("%" if x is not None else "") for x in shares)
            + f" | {fmt(v.sentences_per_s, 0)} | {fmt(v.tree_sentences_per_s, 0)} |"
        )
    return lines


GAP_TITLES = {GAP_TREE: "the tree", GAP_SUBJECT: "every subject arc", GAP_VERB_SUBJECT: "the verb's subject arc"}


def _ci(ci: list[float] | None) -> str:
    return f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else ""


def tree_gap_markdown(gap: TreeGap | None) -> list[str]:
    """One table: per part, its share, both rows' accuracy, the gap within it and its contribution."""
    if gap is None:
        return []
    lines = [
        f"`{gap.free}` − `{gap.reference}`: **{gap.gap:+.2f}**{_ci(gap.gap_ci95)} points over {gap.n:,} items"
        + (f" and {gap.seeds} seeds" if gap.seeds > 1 else "")
        + f", by whether `{gap.free}`'s own tree has the parser's edges (the tree: D̂ = D), every subject arc"
        " of the parser's tree, or (agreement) the verb's subject arc"
        + (f"; {gap.unread:,} items could not be compared and count as wrong" if gap.unread else "")
        + ":",
        "",
        f"| {gap.free}'s tree has | items % | {gap.free} % | {gap.reference} % | gap within [95 %] |"
        " contribution to the gap [95 %] |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for group, parts in gap.parts.items():
        for name, p in parts.items():
            if p.gap is None:  # no item in this part in any seed
                free, ref, within = "–", "–", "–"
            else:
                free, ref = f"{p.free_accuracy:.2f}", f"{p.reference_accuracy:.2f}"
                within = f"{p.gap:+.2f}{_ci(p.gap_ci95)}"
            lines.append(
                f"| {GAP_TITLES.get(group, group)}: {name} | {p.share:.1f} | {free} | {ref} | {within} |"
                f" {p.contribution:+.2f}{_ci(p.contribution_ci95)} |"
            )
    return lines
