"""MST decoding and the D̂ metrics on small cases worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import spearmanr

from parserfree.core.trees import tree_distances
from parserfree.encoder.conventions import CROSS_TREE_DISTANCE
from parserfree.predictor.decoding import mst_edges
from parserfree.predictor.metrics import (
    DistanceMetrics,
    RelationMetrics,
    chain_baseline,
    dspr,
    gold_distances,
    l1_error,
    row_spearman,
    sentence_dspr,
    uuas,
)

STAR = np.array([2, 2, 2, 2, 2])  # every word attaches to word 2 (the root)
CHAIN = np.array([1, 2, 3, 4, 4])  # 0 → 1 → 2 → 3 → 4 (the root)


def _edges(*pairs: tuple[int, int]) -> set[frozenset[int]]:
    return {frozenset(p) for p in pairs}


def test_mst_of_small_matrices():
    assert mst_edges(np.zeros((1, 1))) == set()
    assert mst_edges(np.zeros((2, 2))) == _edges((0, 1))  # a zero distance is still an edge
    assert mst_edges(chain_baseline(4)) == _edges((0, 1), (1, 2), (2, 3))
    assert mst_edges(tree_distances(STAR)) == _edges((0, 2), (1, 2), (3, 2), (4, 2))
    asymmetric = np.array([[0, 5, 1], [1, 0, 9], [1, 9, 0]])  # symmetrised: 0-1 = 3, 0-2 = 1, 1-2 = 9
    assert mst_edges(asymmetric) == _edges((0, 2), (0, 1))


def test_gold_distances_match_the_teacher():
    for heads in (STAR, CHAIN, np.array([0, 0, 2, 2, 3]), np.array([0])):
        np.testing.assert_array_equal(gold_distances(heads), tree_distances(heads))


def test_uuas_chain_prediction_on_star_tree():
    # MST of |i − j| is the chain 0-1, 1-2, 2-3, 3-4; the star's edges are 0-2, 1-2, 3-2, 4-2.
    # Shared: 1-2 and 2-3 → 2 of 4.
    assert uuas(chain_baseline(5), STAR) == (2, 4)
    # Word 4 is punctuation: MST over 0..3 is 0-1, 1-2, 2-3; gold without 4-2 is 0-2, 1-2, 3-2 → 2 of 3.
    assert uuas(chain_baseline(5), STAR, punct=np.array([0, 0, 0, 0, 1], dtype=bool)) == (2, 3)


def test_uuas_star_prediction_on_chain_tree():
    # MST of the star's distances is the star itself; the chain shares 1-2 and 2-3 with it.
    assert uuas(tree_distances(STAR), CHAIN) == (2, 4)
    assert uuas(tree_distances(CHAIN), CHAIN) == (4, 4)
    # Punctuation inside the tree (word 2): gold edges between non-punct words are 0-1 and 3-4 only; the
    # MST over words 0, 1, 3, 4 of the chain distances is 0-1, 1-3 (distance 2), 3-4 → both gold edges.
    assert uuas(tree_distances(CHAIN), CHAIN, punct=np.array([0, 0, 1, 0, 0], dtype=bool)) == (2, 2)


def test_sentence_dspr_chain_prediction_on_star_tree():
    # Star gold rows vs chain rows (ties take average ranks); Pearson of the rank vectors:
    #   row 0: gold [0,2,1,2,2] → ranks [1,4,2,4,4], chain [0,1,2,3,4] → [1,2,3,4,5]; ρ = 6/√(8·10)
    #   row 1: gold [2,0,1,2,2] → [4,1,2,4,4], chain [1,0,1,2,3] → [2.5,1,2.5,4,5]; ρ = 7/√(8·9.5)
    #   row 2: gold [1,1,0,1,1] → [3.5,3.5,1,3.5,3.5], chain [2,1,0,1,2] → [4.5,2.5,1,2.5,4.5]; ρ = 5/√(5·9)
    #   rows 3 and 4 mirror rows 1 and 0.
    expected = (2 * 6 / math.sqrt(80) + 2 * 7 / math.sqrt(76) + 5 / math.sqrt(45)) / 5
    ((length, rho),) = sentence_dspr(chain_baseline(5), tree_distances(STAR))
    assert length == 5 and rho == pytest.approx(expected)
    assert sentence_dspr(tree_distances(STAR), tree_distances(STAR)) == [(5, pytest.approx(1.0))]


def test_sentence_dspr_splits_a_forest_and_scores_constant_rows_zero():
    gold = tree_distances([0, 0, 0, 3, 3])  # a 3-word tree and a 2-word tree
    pred = np.zeros((5, 5))
    pred[:3, :3] = chain_baseline(3)
    # tree {0,1,2}, ranks of gold rows vs chain rows:
    #   row 0: [1,2.5,2.5] vs [1,2,3] → ρ = 1.5/√(1.5·2) = √3/2
    #   row 1: [2,1,3] vs [2.5,1,2.5] → ρ = 1.5/√(2·1.5) = √3/2
    #   row 2: [2,3,1] vs [3,2,1] → ρ = 1/√(2·2) = 1/2
    # tree {3,4}: the D̂ rows are constant → 0.
    scores = sentence_dspr(pred, gold)
    assert [length for length, _ in scores] == [3, 2]
    assert scores[0][1] == pytest.approx((math.sqrt(3) / 2 * 2 + 0.5) / 3)
    assert scores[1][1] == 0.0


@pytest.mark.filterwarnings("ignore:An input array is constant")
def test_row_spearman_equals_scipy_row_by_row():
    rng = np.random.default_rng(0)
    pred = rng.integers(0, 4, size=(7, 7)).astype(float)  # many ties
    gold = rng.integers(0, 5, size=(7, 7)).astype(float)
    pred[3] = 2.0  # a constant row
    expected = [spearmanr(p, g).statistic for p, g in zip(pred, gold)]
    np.testing.assert_allclose(row_spearman(pred, gold), np.nan_to_num(expected, nan=0.0), atol=1e-12)
    assert row_spearman(pred, gold)[3] == 0.0


def test_dspr_averages_per_length_then_over_lengths_5_to_50():
    scores = [(5, 0.2), (5, 0.4), (6, 0.9), (4, 0.0), (51, 0.0)]
    assert dspr(scores) == pytest.approx((0.3 + 0.9) / 2)
    assert math.isnan(dspr([(4, 1.0)]))


def test_l1_clamps_at_length_and_skips_cross_tree_pairs():
    gold = tree_distances([0, 0, 2])  # words 0-1 in one tree, 2 alone
    pred = np.array([[0.0, 7.0, 0.0], [2.0, 0.0, 1.0], [5.0, 5.0, 0.0]])
    # scored pairs (0,1), (1,0): |min(7, 3) − 1| + |2 − 1| = 3 over 2 pairs
    assert l1_error(pred, gold) == (3.0, 2)
    assert gold[0, 2] == CROSS_TREE_DISTANCE


def test_distance_metrics_accumulates_and_reports_percent():
    metrics = DistanceMetrics()
    metrics.update(chain_baseline(5), STAR, pred_heads=np.array([1, 2, 2, 2, 3]))
    metrics.update(
        tree_distances(CHAIN),
        CHAIN,
        punct=np.array([0, 0, 0, 0, 1], dtype=bool),
        gold=tree_distances(CHAIN),
        pred_heads=np.array([1, 2, 3, 3, 4]),
    )
    result = metrics.compute()
    assert result["uuas"] == pytest.approx(100 * (2 + 3) / (4 + 3))
    assert result["n_sentences"] == 2
    assert result["root_acc"] == 0.5
    # DSpr: both sentences have length 5 → mean of the star/chain score and 1.0
    star_rho = sentence_dspr(chain_baseline(5), tree_distances(STAR))[0][1]
    assert result["dspr"] == pytest.approx((star_rho + 1.0) / 2)
    # L1 over 20 + 20 ordered pairs; only the star sentence has errors: Σ |i − j| − D over its pairs
    star_errors = np.abs(chain_baseline(5) - tree_distances(STAR)).sum()
    assert result["l1"] == pytest.approx(star_errors / 40)
    metrics.reset()
    assert metrics.compute()["n_sentences"] == 0 and metrics.compute()["root_acc"] is None


def test_cycle_rates_count_examples_with_a_cycle_before_and_after_cycle_breaking():
    metrics = DistanceMetrics()
    tree = tree_distances(STAR)
    metrics.update(tree, STAR, pred_heads=STAR, argmax_heads=np.array([1, 0, 2, 2, 2]))  # 0 ↔ 1
    metrics.update(tree, STAR, pred_heads=STAR, argmax_heads=STAR)
    metrics.update(tree, STAR, pred_heads=STAR, argmax_heads=np.array([3, 2, 3, 4, 1]))  # 1 → 2 → 3 → 4 → 1
    metrics.update(tree, STAR, pred_heads=np.array([1, 0, 2, 2, 2]), argmax_heads=STAR)  # a broken repair
    result = metrics.compute()
    assert result["argmax_cycle_rate"] == pytest.approx(50.0)
    assert result["cycle_rate"] == pytest.approx(25.0)
    assert DistanceMetrics().compute()["argmax_cycle_rate"] is None


def test_relation_recall_and_uuas_by_sentence_length():
    # "The old man saw a dog that barked ." with spaCy-style labels; the prediction attaches "man" to "dog"
    # and "barked" to "saw" (a wrong nsubj and a wrong relcl), everything else right.
    heads = np.array([2, 2, 3, 3, 5, 3, 7, 5, 3])
    deps = ("det", "amod", "nsubj", "ROOT", "det", "dobj", "nsubj", "relcl", "punct")
    punct = np.array([False] * 8 + [True])
    predicted = tree_distances(np.array([2, 2, 5, 3, 5, 3, 7, 3, 3]))
    metrics = RelationMetrics()
    metrics.update(predicted, heads, deps, punct)
    chain = np.minimum(np.arange(12) + 1, 11)  # a second example: one 12-word sentence, all right
    metrics.update(tree_distances(chain), chain, ("dep",) * 11 + ("ROOT",))
    result = metrics.compute()
    short, mid = result["≤10"], result["11–20"]
    assert (short["sentences"], short["arcs"]) == (1, 7) and short["uuas"] == pytest.approx(100 * 5 / 7)
    assert short["recall"] == {"nsubj": 50.0, "obj": 100.0, "amod": 100.0, "prep/pobj": None, "relcl": 0.0}
    assert short["relation_arcs"]["nsubj"] == 2
    assert (mid["sentences"], mid["arcs"], mid["uuas"]) == (1, 11, 100.0) and mid["recall"]["nsubj"] is None
    assert result["all"]["arcs"] == 18 and result["all"]["uuas"] == pytest.approx(100 * 16 / 18)
    assert result["21–40"]["sentences"] == 0 and result[">40"]["uuas"] is None
