"""The parse-leak measure: how often the parser's trees of the two versions of a minimal pair differ.

A parser-fed row reads spaCy's tree of the text it classifies. When the flipped (ungrammatical) version of
a sentence gets another tree than the original, the tree itself can carry the label ("an odd tree means
an error"), which neither the locality row nor the parser-free graph sees. For every minimal pair of a
compared split (examples sharing a ``pair_id`` column) this counts the pairs whose two parses differ in any
head, in any label, and in the subject arcs (the words attached as ``nsubj`` / ``nsubjpass`` and their
heads). The parse-leak control row (``twin_grammatical_tree``) reads the grammatical version's tree for
both versions, so the report can tell "trees pay" from "the parser reacts to the error". In agreement's
number view both versions of a pair are one text, so every pair counts, with the same tree: 0 % by
construction.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.parse import Parse
from ..distill.data.agreement import judges_both_versions
from ..distill.data.datasets import Example
from ..reports.parts import ParseLeak
from .paired import pairs_of

SUBJECT_LABELS = ("nsubj", "nsubjpass")


def subject_arcs(parse: Parse) -> set[tuple[int, int]]:
    """(dependent, head) of every subject arc of one parse."""
    if parse.deps is None:
        return set()
    return {(i, int(parse.heads[i])) for i, d in enumerate(parse.deps) if d in SUBJECT_LABELS}


def pair_tree_differences(examples: Sequence[Example], parses: Sequence[Parse]) -> ParseLeak | None:
    """The ``ParseLeak`` (shares in %) over the minimal pairs of ``examples`` (parallel to ``parses``); None
    without pairs. Two versions of different lengths count as differing trees."""
    if judges_both_versions([e.columns for e in examples]):  # one text per pair: nothing to leak
        return ParseLeak(pairs=len(examples), trees_differ=0.0, labels_differ=0.0, subject_arcs_differ=0.0)
    pairs = [ids for ids in pairs_of([(e.columns or {}).get("pair_id") for e in examples]) if len(ids) == 2]
    if not pairs:
        return None
    trees = labels = subjects = 0
    for a, b in ((parses[i], parses[j]) for i, j in pairs):
        same_length = len(a.heads) == len(b.heads)
        trees += not (same_length and np.array_equal(a.heads, b.heads))
        labels += not (same_length and a.deps == b.deps)
        subjects += subject_arcs(a) != subject_arcs(b)
    n = len(pairs)
    return ParseLeak(
        pairs=n,
        trees_differ=100.0 * trees / n,
        labels_differ=100.0 * labels / n,
        subject_arcs_differ=100.0 * subjects / n,
    )
