"""Where ``parser_free`` loses to its reference: the gap split by whether its own tree is the parser's.

``parser_free`` reads D̂ where its reference reads the parser's D. When the two trees are the same, D̂ = D and
a ``parser_free`` row served from its twin's weights (the default, ``recipes.training_rule``) gives the
twin's output exactly; whatever it loses is lost on the sentences whose trees differ. ``tree_gap`` splits
the items of a compared split, seed by seed (each seed has its own predictor, so its own wrong trees), by
whether the predicted tree has (``tree``) the parser's edges (undirected, punctuation included: D̂ = D),
(``subject_arcs``) every subject arc of the parser's tree (``nsubj``, ``nsubjpass``) as an edge, and, for
items that name their verb (agreement's ``verb_index``), (``verb_subject``) the subject arcs of that verb
(the arcs whose head is the verb or, for the number view's "will" + base form, the verb's head; an item whose
parse gives that verb no subject has none to miss). For each part it gives its share of the items, both
rows' accuracy there, the gap within it, and its **contribution** to the overall gap (the part's summed
differences over all items, so a group's two contributions add up to the gap): a parser right on those
arcs would leave the right part's contribution, if the model read its trees as it reads these. Intervals
are the percentile bootstrap of ``parserfree.comparison.paired.Resampler`` (clusters: minimal pairs; seeds resampled
too). An item whose words are not the parse's, or that was cut to the model's length, counts as wrong in
every group. Its table is ``parserfree.reports.tables.tree_gap_markdown``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..distill.data.agreement import PAIR_ID, VERB_INDEX
from ..reports.parts import GAP_RIGHT, GAP_SUBJECT, GAP_TREE, GAP_VERB_SUBJECT, GAP_WRONG, GapPart, TreeGap
from .paired import RESAMPLES, Resampler, clusters_of
from .parse_leak import subject_arcs

if TYPE_CHECKING:
    from ..core.parse import Parse
    from .tree_quality import PredictedTree


def _edges(heads: np.ndarray) -> set[frozenset[int]]:
    return {frozenset((i, int(h))) for i, h in enumerate(heads) if int(h) != i}


def trees_right(
    trees: Sequence[PredictedTree],
    words: Sequence[Sequence[str]],
    parses: Sequence[Parse],
    verbs: Sequence[int] | None = None,
) -> tuple[dict[str, np.ndarray], int]:
    """Per group, per sentence (parallel lists), whether the predicted tree has the parse's edges, its
    subject arcs, and (given each sentence's verb index) that verb's subject arcs; and how many sentences
    could not be compared (words differ, cut, no heads: wrong in every group)."""
    groups = (GAP_TREE, GAP_SUBJECT) + ((GAP_VERB_SUBJECT,) if verbs is not None else ())
    right = {g: np.zeros(len(trees), dtype=bool) for g in groups}
    unread = 0
    for k, (t, w, p) in enumerate(zip(trees, words, parses)):
        if t.heads is None or list(w) != list(p.words) or len(t.heads) != len(p.heads):
            unread += 1
            continue
        predicted = _edges(t.heads)
        arcs = [arc for arc in subject_arcs(p) if arc[0] != arc[1]]
        right[GAP_TREE][k] = predicted == _edges(p.heads)
        right[GAP_SUBJECT][k] = all(frozenset(arc) in predicted for arc in arcs)
        if verbs is not None:
            verb = int(verbs[k])
            heads = {verb, int(p.heads[verb])} if 0 <= verb < len(p.heads) else set()
            right[GAP_VERB_SUBJECT][k] = all(frozenset(arc) in predicted for arc in arcs if arc[1] in heads)
    return right, unread


def _interval(values: np.ndarray) -> list[float]:
    return [float(v) for v in np.percentile(100 * values, [2.5, 97.5])]


def tree_gap(
    free: str,
    reference: str,
    free_correct: np.ndarray,
    reference_correct: np.ndarray,
    right: dict[str, np.ndarray],
    clusters: np.ndarray,
    unread: int = 0,
    resamples: int = RESAMPLES,
) -> TreeGap:
    """The ``TreeGap`` of two rows' S×N correctness on the same items, given per group an S×N mask of the items
    whose tree is right (``trees_right`` per seed, in item order) and the items' resampling clusters."""
    f, r = (np.asarray(c, dtype=float) for c in (free_correct, reference_correct))
    seeds, n = f.shape
    draws = Resampler(clusters, seeds, resamples)
    diff = f - r
    total = draws.accuracies(diff)
    parts: dict[str, dict[str, GapPart]] = {}
    for group in right:
        parts[group] = {}
        for name, mask in ((GAP_RIGHT, right[group]), (GAP_WRONG, ~right[group])):
            m = np.asarray(mask, dtype=float)
            share, contribution = draws.accuracies(m), draws.accuracies(m * diff)
            items = m.sum()
            with np.errstate(invalid="ignore", divide="ignore"):
                within = contribution / share
            finite = within[np.isfinite(within)]
            parts[group][name] = GapPart(
                share=100 * float(m.mean()),
                free_accuracy=100 * float((m * f).sum() / items) if items else float("nan"),
                reference_accuracy=100 * float((m * r).sum() / items) if items else float("nan"),
                gap=100 * float((m * diff).sum() / items) if items else None,
                gap_ci95=_interval(finite) if items and finite.size else None,
                contribution=100 * float((m * diff).sum() / (seeds * n)),
                contribution_ci95=_interval(contribution),
            )
    return TreeGap(
        free=free,
        reference=reference,
        seeds=seeds,
        n=n,
        gap=100 * float(diff.mean()),
        gap_ci95=_interval(total),
        parts=parts,
        unread=unread,
    )


def compared_tree_gap(
    free: str,
    reference: str,
    predicted: dict[str, np.ndarray],
    gold: np.ndarray,
    columns: Sequence[Mapping | None],
    trees: Sequence[Sequence[PredictedTree]],
    words: Sequence[Sequence[Sequence[str]]],
    parses: Sequence[Parse],
    order: np.ndarray,
    resamples: int = RESAMPLES,
) -> TreeGap | None:
    """``tree_gap`` of a compared domain: the rows' S×N predictions and the items' columns (pair ids, verb
    index) in item order; the parser-free row's trees and words per seed and the reference's parses in run
    order (``order``: run position → item). None when the predicted trees have no heads (a probe)."""
    if any(t.heads is None for seed in trees for t in seed):
        return None
    cols = [c or {} for c in columns]
    verbs = [cols[i].get(VERB_INDEX) for i in order]  # in run order, as the trees
    named = verbs if None not in verbs else None  # the verb's subject only where every item names its verb
    right: dict[str, np.ndarray] = {}
    unread = 0
    for s, (seed_trees, seed_words) in enumerate(zip(trees, words)):
        found, missed = trees_right(seed_trees, seed_words, parses, named)
        for group, mask in found.items():
            right.setdefault(group, np.zeros((len(trees), gold.size), dtype=bool))[s, order] = mask
        unread += missed
    return tree_gap(
        free,
        reference,
        predicted[free] == gold,
        predicted[reference] == gold,
        right,
        clusters_of([c.get(PAIR_ID) for c in cols], gold.size),
        unread,
        resamples,
    )
