"""D̂ and the parser-free graph's trees against the parser's, as Markdown: a domain's lines, a table per
domain, relation recall by sentence length, and the graph's directed and labelled trees by length.

What ``tree_scores`` measures (a report domain's ``DistanceQuality``), drawn for report.md
(``parserfree.reports.markdown``) and the results pages (``parserfree.reports.results_page``). UUAS and relation recall are
of the tree decoded from D̂ (undirected); UAS, LAS and the directed and labelled recall are of the heads
and labels the graph outputs, counted as spaCy's scorer counts them (punctuation excluded, roots included).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .parts import RelationRow, TreeQuality
from .report import DomainResult, Report
from .tables import fmt, percent


def _skipped(n: int, what: str = "sentences") -> str:
    return f", {n:,} {what} skipped" if n else ""


def distance_lines(domain: DomainResult) -> list[str]:
    """Markdown bullets of one domain's D̂ quality: UUAS, DSpr and L1 with the chain baseline's, UUAS per
    seed, the graph's own trees (UAS, LAS, roots, cycles) and the cycles of the raw argmax heads."""
    d = domain.distance
    if d is None:
        return []
    lines = [
        f"- Predicted distances vs spaCy ({fmt(d.n_sentences, 0)} sentences{_skipped(d.skipped)}): UUAS "
        f"**{fmt(d.uuas, 1)}**, DSpr **{fmt(d.dspr, 3)}**, L1 {fmt(d.l1, 2)} (|i−j| chain baseline: UUAS "
        f"{fmt(d.chain_uuas, 1)}, DSpr {fmt(d.chain_dspr, 3)})"
    ]
    if domain.distance_by_seed:
        lines.append("- UUAS by seed: " + ", ".join(fmt(x.uuas, 1) for x in domain.distance_by_seed))
    graph = []
    if d.tree is not None:
        tree = d.tree.overall
        graph.append(
            f"UAS **{fmt(tree.uas, 1)}**, LAS **{fmt(tree.las, 1)}** over {fmt(tree.words, 0)} words (punctuation "
            f"excluded, roots included{_skipped(d.tree.skipped)})"
        )
    if d.root_acc is not None:
        graph.append(f"the roots right in {percent(d.root_acc)}% of sentences")
    if d.cycle_rate is not None:
        graph.append(f"a cycle in {fmt(d.cycle_rate, 1)}% of them")
    if graph:
        lines.append("- The graph's own trees vs spaCy's: " + "; ".join(graph))
    if d.argmax_cycle_rate is not None:
        lines.append(
            f"- The predictor's raw argmax heads hold a cycle in {fmt(d.argmax_cycle_rate, 1)}% of examples; the graph"
            " breaks every cycle, so its distances are those of a forest"
        )
    return lines


def quality_table(report: Report) -> list[str]:
    """One row per domain: D̂ against spaCy's trees (UUAS, DSpr, L1, the chain's UUAS) and the graph's own
    trees (UAS, LAS, roots right, heads with a cycle; the raw argmax heads with one), as Markdown lines."""
    rows = {name: dom.distance for name, dom in report.domains.items() if dom.distance is not None}
    if not rows:
        return []
    lines = [
        "D̂ against spaCy's trees (UUAS of the tree decoded from D̂, punctuation excluded; DSpr; L1; the |i−j| "
        "chain's UUAS) and the graph's own heads and labels (UAS, LAS; sentences with the roots right, with a "
        "cycle in the graph's heads and in the predictor's raw argmax heads); all but DSpr and L1 in %:",
        "",
        "| domain | sentences | UUAS | DSpr | L1 | chain UUAS | UAS | LAS | roots right | cycles | argmax cycles |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, d in rows.items():
        tree = d.tree.overall if d.tree is not None else None
        cells = [
            fmt(d.n_sentences, 0),
            fmt(d.uuas, 1),
            fmt(d.dspr, 3),
            fmt(d.l1, 2),
            fmt(d.chain_uuas, 1),
            fmt(tree.uas if tree else None, 1),
            fmt(tree.las if tree else None, 1),
            percent(d.root_acc),
            fmt(d.cycle_rate, 1),
            fmt(d.argmax_cycle_rate, 1),
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _by_length(
    bins_of: Mapping[str, Mapping[str, RelationRow]],
    intro: str,
    columns: list[str],
    cells: Callable[[RelationRow, list[str]], list[str]],
) -> list[str]:
    """A table with a row per domain and sentence-length bin (empty bins left out): ``columns`` then one
    column per relation group, filled by ``cells(row, groups)``."""
    groups = list(next(iter(next(iter(bins_of.values())).values())).recall)
    lines = [
        intro,
        "",
        "| domain | sentence length | " + " | ".join(columns + groups) + " |",
        "|---|---|" + "---:|" * (len(columns) + len(groups)),
    ]
    for name, bins in bins_of.items():
        lines += [
            f"| {name} | {where} | " + " | ".join(cells(row, groups)) + " |"
            for where, row in bins.items()
            if row.sentences
        ]
    return lines


def relations_markdown(relations: Mapping[str, Mapping[str, RelationRow] | None]) -> list[str]:
    """UUAS and relation recall (percent of the parser's arcs of each label group in the tree decoded from
    D̂) per domain (name → sentence-length bin → row) and sentence length, as Markdown table lines."""
    rows = {name: bins for name, bins in relations.items() if bins}
    if not rows:
        return []
    return _by_length(
        rows,
        "Recall: percent of the parser's arcs of each relation found in the predicted tree (undirected, "
        "punctuation excluded, as UUAS); a sentence is one parser tree; n = arcs of that relation.",
        ["sentences", "UUAS"],
        lambda row, groups: [
            f"{row.sentences:,}",
            fmt(row.uuas, 1),
            *(f"{fmt(row.recall[g], 1)} (n {row.relation_arcs[g]:,})" for g in groups),
        ],
    )


def trees_markdown(trees: Mapping[str, TreeQuality | None]) -> list[str]:
    """The graph's own trees per domain and sentence length: UAS, LAS and, per relation, the percent of the
    parser's arcs whose head the graph finds (directed) and whose head and label (labelled)."""
    rows = {name: tree.by_length for name, tree in trees.items() if tree is not None}
    if not rows:
        return []
    return _by_length(
        rows,
        "The graph's heads and labels against spaCy's, punctuation excluded, roots included: UAS and LAS over the "
        "words; per relation, directed / labelled recall in percent of the parser's arcs of that relation.",
        ["sentences", "words", "UAS", "LAS"],
        lambda row, groups: [
            f"{row.sentences:,}",
            fmt(row.words, 0),
            fmt(row.uas, 1),
            fmt(row.las, 1),
            *(
                f"{fmt((row.directed_recall or {}).get(g), 1)} / {fmt((row.labelled_recall or {}).get(g), 1)}"
                for g in groups
            ),
        ],
    )
