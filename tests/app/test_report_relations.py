"""The comparison report's tree quality: relation recall by sentence length and the argmax cycle rate
pass from the parser's labelled parses through ``tree_scores.distance_quality`` into report.md."""

import numpy as np

from parserfree.comparison.tree_scores import distance_quality
from parserfree.core.parse import Parse
from parserfree.core.trees import tree_distances
from parserfree.reports.quality_tables import distance_lines, relations_markdown
from parserfree.reports.report import DomainResult

WORDS = ("The", "old", "man", "saw", "a", "dog", "that", "barked", ".")
HEADS = np.array([2, 2, 3, 3, 5, 3, 7, 5, 3])
DEPS = ("det", "amod", "nsubj", "ROOT", "det", "dobj", "nsubj", "relcl", "punct")


def test_relation_recall_and_cycle_rate_reach_the_report():
    parse = Parse(WORDS, HEADS, np.array([False] * 8 + [True]), DEPS)
    predicted = tree_distances(np.array([2, 2, 5, 3, 5, 3, 7, 3, 3])).astype(float)  # nsubj and relcl wrong
    cyclic = np.array([1, 0, 3, 3, 5, 3, 7, 5, 3])  # 0 ↔ 1
    quality = distance_quality([predicted, predicted], [list(WORDS)] * 2, [parse, parse], [cyclic, HEADS])
    assert quality.argmax_cycle_rate == 50.0
    short = quality.relations["≤10"]
    assert short.sentences == 2 and short.recall["nsubj"] == 50.0 and short.recall["relcl"] == 0.0
    lines = relations_markdown({"movies": quality.relations})
    row = next(line for line in lines if line.startswith("| movies | ≤10 |"))
    assert "| 2 | 71.4 |" in row and "50.0 (n 4)" in row
    assert not any("21–40" in line for line in lines)  # empty length bins are left out


def test_parses_without_labels_give_uuas_but_no_relation_rows():
    parse = Parse(WORDS, HEADS, np.zeros(9, dtype=bool))
    quality = distance_quality([tree_distances(HEADS).astype(float)], [list(WORDS)], [parse])
    assert quality.uuas == 100.0 and quality.argmax_cycle_rate is None
    assert quality.relations["all"].sentences == 0


def test_the_graphs_heads_give_root_accuracy_and_a_cycle_rate_in_report_md():
    """They were computed only from predicted heads, which the comparison never passed: every report held
    root_acc and cycle_rate None, and report.md drew neither."""
    parse = Parse(WORDS, HEADS, np.array([False] * 8 + [True]), DEPS)
    d = tree_distances(HEADS).astype(float)
    cyclic = np.array([1, 0, 3, 3, 5, 3, 7, 5, 3])  # 0 ↔ 1, the root right
    other_root = np.array([2, 2, 2, 2, 5, 3, 7, 5, 3])  # the root at 2, no cycle
    quality = distance_quality([d, d], [list(WORDS)] * 2, [parse, parse], heads=[cyclic, other_root])
    assert quality.root_acc == 0.5 and quality.cycle_rate == 50.0
    domain = DomainResult(
        dataset="d", task="binary", n_examples=2, n_pairs=0, scores={}, agreement=None, distance=quality
    )
    line = next(x for x in distance_lines(domain) if x.startswith("- The graph's own trees"))
    assert "the roots right in 50.0% of sentences; a cycle in 50.0% of them" in line
