"""The parse-leak measure counts the minimal pairs whose two versions the parser parses differently."""

import numpy as np

from parserfree.comparison.parse_leak import pair_tree_differences
from parserfree.core.parse import Parse
from parserfree.distill.data.datasets import Example
from parserfree.reports.parts import ParseLeak


def _parse(heads, deps):
    return Parse(tuple(f"w{i}" for i in range(len(heads))), np.array(heads), np.zeros(len(heads), bool), tuple(deps))


def _pair(pair_id, a, b):
    cols = {"pair_id": pair_id}
    return [Example(f"{pair_id} kept", 1, "s", columns=cols), Example(f"{pair_id} flipped", 0, "s", columns=cols)], [
        a,
        b,
    ]


def test_pairs_whose_versions_get_other_heads_labels_or_subject_arcs_are_counted_apart():
    same = _parse([1, 1, 1], ["det", "ROOT", "punct"])
    subject = _parse([1, 2, 2], ["nsubj", "aux", "ROOT"])
    pairs = [
        _pair("p1", same, same),  # identical trees
        _pair("p2", subject, _parse([2, 2, 2], ["nsubj", "aux", "ROOT"])),  # another head for the subject
        _pair("p3", subject, _parse([1, 2, 2], ["dobj", "aux", "ROOT"])),  # same heads, the subject relabelled
        _pair("p4", subject, subject),
    ]
    examples = [e for ex, _ in pairs for e in ex]
    parses = [p for _, ps in pairs for p in ps]
    unpaired = Example("alone", 1, "s", columns={"pair_id": "p5"})
    out = pair_tree_differences([*examples, unpaired], [*parses, same])
    assert out == ParseLeak(pairs=4, trees_differ=25.0, labels_differ=25.0, subject_arcs_differ=50.0)


def test_a_split_without_minimal_pairs_has_no_parse_leak_line():
    examples = [Example("a", 1, "s"), Example("b", 0, "s", columns={"other": 1})]
    assert pair_tree_differences(examples, [_parse([0], ["ROOT"])] * 2) is None
