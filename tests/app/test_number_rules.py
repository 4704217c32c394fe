"""The number rules among the shortcut baselines (prev_word, nearest_noun, nearest_noun_s, first_noun) in both
agreement views, and the minimal-pair metrics of the number view, where one text stands for both versions."""

from __future__ import annotations

import numpy as np
import pytest
from agreement_items import candidates

from parserfree.comparison.baselines import fit_baselines, named_rule
from parserfree.comparison.breakdown import breakdown, item_slices, pair_accuracy
from parserfree.comparison.parse_leak import pair_tree_differences
from parserfree.core.parse import Parse
from parserfree.distill.data import agreement
from parserfree.distill.data.agreement import LABEL_NAMES, NUMBER_LABELS, PAIR_ID
from parserfree.distill.data.agreement_views import agreement_examples
from parserfree.distill.data.datasets import Example
from parserfree.reports.parts import ParseLeak
from parserfree.reports.slices import ALL


def examples(task: str, split: str = "test") -> list[Example]:
    labels = NUMBER_LABELS if task == "number" else LABEL_NAMES
    raw = agreement_examples(candidates(), [0.8, 0.1, 0.1], task=task)
    return [Example(r.text, labels.index(r.label), r.source, columns=r.columns) for r in raw if r.split == split]


def accuracy(rule, items: list[Example]) -> float:
    return float((rule.predict(items)[0] == np.array([e.label for e in items])).mean())


@pytest.mark.parametrize("task", ["number", "grammaticality"])
def test_nearest_noun_is_right_without_attractors_and_wrong_with_them_in_both_views(task):
    """The fixture's nearest noun is the subject without attractors and an attractor (other number) with them:
    the heuristic must score 100 % and 0 % there — in the grammaticality view through the shown verb's number."""
    labels = list(NUMBER_LABELS if task == "number" else LABEL_NAMES)
    items = examples(task)
    rule = named_rule("nearest_noun", labels)
    plain = [e for e in items if e.columns["attractors"] == 0]
    attracted = [e for e in items if e.columns["attractors"] > 0]
    assert plain and attracted
    assert accuracy(rule, plain) == 1.0 and accuracy(rule, attracted) == 0.0
    assert accuracy(named_rule("first_noun", labels), items) == 1.0  # the fixture's first noun is the subject


def test_number_view_gets_the_number_rules_and_no_verb_form_lookup():
    """The number view's text shows no verb form, so a lookup of it has nothing to read (its columns lack it)."""
    train = examples("number", "train")
    names = [b.name for b in fit_baselines(train, examples("number", "dev"), list(NUMBER_LABELS))]
    assert names == ["majority", "prev_word", "nearest_noun", "nearest_noun_s", "first_noun", "bag_of_words"]
    grammaticality = examples("grammaticality", "train")
    assert "verb_form" in [b.name for b in fit_baselines(grammaticality, grammaticality[:50], list(LABEL_NAMES))]


def test_the_s_rule_reads_the_nearest_nouns_spelling_not_its_tag():
    rule = named_rule("nearest_noun_s", list(NUMBER_LABELS))
    items = [
        Example("x", 0, "f", columns={"nearest_noun": "news", "nearest_noun_number": "sg"}),
        Example("x", 1, "f", columns={"nearest_noun": "people", "nearest_noun_number": "pl"}),
    ]
    assert rule.predict(items)[0].tolist() == [1, 0]  # "news" reads plural, "people" singular: its blind spots


def test_number_view_item_right_is_its_minimal_pair_judged_right_on_both_versions():
    """One number item per pair: "pairs both right" is the item accuracy, over every item — not "no pairs"."""
    items = examples("number")
    columns = [e.columns for e in items]
    correct = (np.arange(len(items)) % 3 != 0)[None]
    slices = item_slices(columns, len(items), 1, 200, PAIR_ID)
    assert slices.whole_pairs
    share, n_pairs = pair_accuracy(correct, slices.pair_ids, slices.masks[ALL], slices.whole_pairs)
    assert n_pairs == len(items) and share == pytest.approx(100 * correct.mean())
    by = breakdown(correct, slices)["attractors"]["0"]
    assert by.pair_accuracy == pytest.approx(by.accuracy) and by.n_pairs == by.n
    grammaticality = [e.columns for e in examples("grammaticality")]
    assert not item_slices(grammaticality, len(grammaticality), 1, 200, PAIR_ID).whole_pairs


def test_parse_leak_of_the_number_view_counts_every_pair_and_reads_zero():
    items = examples("number")
    parses = [Parse(("a", "b"), np.zeros(2, dtype=np.int64), np.zeros(2, dtype=bool), ("nsubj", "ROOT")) for _ in items]
    leak = pair_tree_differences(items, parses)
    assert leak == ParseLeak(pairs=len(items), trees_differ=0.0, labels_differ=0.0, subject_arcs_differ=0.0)
    assert agreement.judges_both_versions([e.columns for e in items])


def test_items_whose_nearest_noun_is_an_attractor_are_a_slice_of_their_own():
    """The slice where "agree with the nearest noun" fails: the fixture's attractor items, exactly."""
    items = examples("number")
    slices = item_slices([e.columns for e in items], len(items), 1, 200, PAIR_ID)
    attracted = np.array([e.columns["attractors"] > 0 for e in items])
    assert np.array_equal(slices.masks["nearest_noun:attractor"], attracted) and attracted.any()
    rule = named_rule("nearest_noun", list(NUMBER_LABELS))
    correct = (rule.predict(items)[0] == np.array([e.label for e in items]))[None]
    got = breakdown(correct, slices)["nearest_noun"]
    assert got["attractor"].accuracy == 0.0 and got["subject's number"].accuracy == 100.0
