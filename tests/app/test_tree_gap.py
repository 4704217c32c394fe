"""parser_free's gap to its reference split by whether its tree is the parser's: trees compared as undirected
edges, masks per seed and in item order, contributions that add up to the gap."""

from __future__ import annotations

import numpy as np
import pytest

from parserfree.comparison.tree_gap import (
    compared_tree_gap,
    tree_gap,
    trees_right,
)
from parserfree.comparison.tree_quality import PredictedTree
from parserfree.core.parse import Parse
from parserfree.reports.parts import GAP_RIGHT as RIGHT
from parserfree.reports.parts import GAP_SUBJECT as SUBJECT
from parserfree.reports.parts import GAP_TREE as TREE
from parserfree.reports.parts import GAP_VERB_SUBJECT as VERB_SUBJECT
from parserfree.reports.parts import GAP_WRONG as WRONG
from parserfree.reports.tables import tree_gap_markdown


def _parse(words: str, heads: list[int], deps: list[str]) -> Parse:
    w = tuple(words.split())
    return Parse(w, np.array(heads), np.array([x == "punct" for x in deps]), tuple(deps))


def _tree(heads: list[int]) -> PredictedTree:
    return PredictedTree(np.zeros((len(heads), len(heads))), np.array(heads), None)


# "the dog barks ." : the → dog, dog → barks (nsubj), barks root, . → barks
PARSE = _parse("the dog barks .", [1, 2, 2, 2], ["det", "nsubj", "ROOT", "punct"])


def test_a_tree_with_the_parsers_edges_in_either_direction_is_right_and_a_missed_subject_arc_is_not():
    same = _tree([1, 2, 2, 2])
    flipped = _tree([1, 1, 1, 2])  # dog as root, barks → dog: the same undirected edges, so D̂ = D
    no_subject = _tree([1, 3, 3, 3])  # dog → "." instead of dog → barks
    punct_only = _tree([1, 2, 2, 1])  # every subject arc kept, "." attached elsewhere: tree wrong
    words = [list(PARSE.words)] * 4
    right, unread = trees_right([same, flipped, no_subject, punct_only], words, [PARSE] * 4)
    assert right[TREE].tolist() == [True, True, False, False]
    assert right[SUBJECT].tolist() == [True, True, False, True]
    assert VERB_SUBJECT not in right and unread == 0
    right, unread = trees_right([same], [["a", "dog", "barks", "."]], [PARSE])  # words are not the parse's
    assert (right[TREE].tolist(), right[SUBJECT].tolist(), unread) == ([False], [False], 1)


def test_the_verbs_subject_arc_is_told_apart_from_a_relative_clauses():
    """Agreement needs the subject of its verb; a missed subject inside a relative clause is another arc. With
    the number view's "will" the verb index names "will", whose subject hangs from the base form."""
    relative = _parse(
        "the dog that cats chase barks .",
        [1, 5, 4, 4, 1, 5, 5],
        ["det", "nsubj", "dobj", "nsubj", "relcl", "ROOT", "punct"],
    )
    modal = _parse("the dog will bark .", [1, 3, 3, 3, 3], ["det", "nsubj", "aux", "ROOT", "punct"])
    cats_elsewhere = _tree([1, 5, 4, 1, 1, 5, 5])  # cats → dog: the clause's subject arc missed
    dog_elsewhere = _tree([1, 4, 4, 4, 5, 5, 5])  # dog → chase: the verb's subject arc missed
    words = [list(relative.words), list(relative.words), list(modal.words)]
    trees = [cats_elsewhere, dog_elsewhere, _tree([1, 3, 3, 3, 3])]
    right, _ = trees_right(trees, words, [relative, relative, modal], verbs=[5, 5, 2])
    assert right[SUBJECT].tolist() == [False, False, True]
    assert right[VERB_SUBJECT].tolist() == [True, False, True]


def test_the_parts_are_each_seeds_own_and_their_contributions_add_up_to_the_gap():
    """Two seeds with different wrong trees: a mask taken from seed 0 for both, or shares counted over one
    seed, gives other numbers."""
    free = np.array([[1, 0, 1, 0, 1, 1], [1, 1, 0, 1, 0, 0]], dtype=bool)
    ref = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0]], dtype=bool)
    right = np.array([[1, 0, 1, 0, 1, 1], [1, 1, 0, 1, 0, 1]], dtype=bool)  # free = ref wherever right
    gap = tree_gap("free", "ref", free, ref, {TREE: right, SUBJECT: right}, np.arange(6), resamples=200)
    assert gap.gap == pytest.approx(100 * (-2 - 2) / 12)
    part_right, part_wrong = gap.parts[TREE][RIGHT], gap.parts[TREE][WRONG]
    assert part_right.gap == 0 and part_right.contribution == 0
    assert part_wrong.share == pytest.approx(100 * 4 / 12)
    assert part_wrong.gap == -100.0  # seed 0 loses items 1 and 3, seed 1 items 2 and 4
    assert part_wrong.free_accuracy == 0.0 and part_wrong.reference_accuracy == 100.0
    assert part_right.contribution + part_wrong.contribution == pytest.approx(gap.gap)
    lo, hi = part_wrong.contribution_ci95
    assert lo <= part_wrong.contribution <= hi


def test_trees_in_run_order_are_matched_to_their_items():
    """compare runs the items length-sorted: the run's trees must be put back in item order before they meet
    the predictions (else a right tree is paired with another item's outputs)."""
    short = _parse("dogs bark", [1, 1], ["nsubj", "ROOT"])
    words = [list(short.words), list(PARSE.words)]  # run order: the short item (item 1) first
    trees = [[_tree([1, 1]), _tree([1, 3, 3, 3])]]  # item 1's tree right, item 0's subject arc missed
    order = np.array([1, 0])
    predicted = {"free": np.array([[0, 1]]), "ref": np.array([[1, 1]])}  # free loses item 0 only
    gap = compared_tree_gap(
        "free", "ref", predicted, np.array([1, 1]), [None, None], trees, [words], [short, PARSE], order
    )
    assert gap is not None
    assert gap.parts[SUBJECT][WRONG].gap == -100.0 and gap.parts[SUBJECT][RIGHT].gap == 0.0
    assert gap.parts[TREE][WRONG].share == 50.0


def test_a_part_without_items_renders_as_dashes_not_nan():
    """Where every tree is right the wrong part is empty: its accuracies are undefined, not 'nan' in the table."""
    right = np.ones((1, 3), dtype=bool)
    gap = tree_gap("free", "ref", right, right, {TREE: right, SUBJECT: right}, np.arange(3), resamples=50)
    row = next(line for line in tree_gap_markdown(gap) if line.startswith("| the tree: wrong"))
    assert "nan" not in row and row.startswith("| the tree: wrong | 0.0 | – | – | – |")
