"""The comparison report's tree quality: relation recall by sentence length and the argmax cycle rate
pass from the parser's labelled parses through ``compare.distance_quality`` into report.md."""

import numpy as np

from parserfree.compare import distance_quality
from parserfree.distill.teacher import Parse
from parserfree.distill.trees import tree_distances
from parserfree.report import relations_markdown

WORDS = ("The", "old", "man", "saw", "a", "dog", "that", "barked", ".")
HEADS = np.array([2, 2, 3, 3, 5, 3, 7, 5, 3])
DEPS = ("det", "amod", "nsubj", "ROOT", "det", "dobj", "nsubj", "relcl", "punct")


def test_relation_recall_and_cycle_rate_reach_the_report():
    parse = Parse(WORDS, HEADS, np.array([False] * 8 + [True]), DEPS)
    predicted = tree_distances(np.array([2, 2, 5, 3, 5, 3, 7, 3, 3])).astype(float)  # nsubj and relcl wrong
    cyclic = np.array([1, 0, 3, 3, 5, 3, 7, 5, 3])  # 0 ↔ 1
    quality = distance_quality([predicted, predicted], [list(WORDS)] * 2, [parse, parse], [cyclic, HEADS])
    assert quality["argmax_cycle_rate"] == 50.0
    short = quality["relations"]["≤10"]
    assert short["sentences"] == 2 and short["recall"]["nsubj"] == 50.0 and short["recall"]["relcl"] == 0.0
    lines = relations_markdown({"movies": {"relations": quality["relations"]}})
    row = next(line for line in lines if line.startswith("| movies | ≤10 |"))
    assert "| 2 | 71.4 |" in row and "50.0 (n 4)" in row
    assert not any("21–40" in line for line in lines)  # empty length bins are left out


def test_parses_without_labels_give_uuas_but_no_relation_rows():
    parse = Parse(WORDS, HEADS, np.zeros(9, dtype=bool))
    quality = distance_quality([tree_distances(HEADS).astype(float)], [list(WORDS)], [parse])
    assert quality["uuas"] == 100.0 and quality["argmax_cycle_rate"] is None
    assert quality["relations"]["all"]["sentences"] == 0
