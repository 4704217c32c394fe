"""UAS and LAS by hand on a tiny tree: punctuation excluded, roots counted, labels only where the data has them."""

from __future__ import annotations

import numpy as np
import pytest

from parserfree.predictor.metrics import DistanceMetrics, RelationMetrics, gold_distances

# "The film is great ." — spaCy's tree; the prediction attaches "great" to "film" and calls "film" an object
WORDS = ("The", "film", "is", "great", ".")
GOLD_HEADS = np.array([1, 2, 2, 2, 2])
GOLD_DEPS = ("det", "nsubj", "ROOT", "acomp", "punct")
PUNCT = np.array([False, False, False, False, True])
PRED_HEADS = np.array([1, 2, 2, 1, 2])
PRED_DEPS = ("det", "dobj", "ROOT", "acomp", "punct")
INVENTORY = ("ROOT", "acomp", "det", "dobj", "nsubj", "punct")


def ids(labels) -> np.ndarray:
    return np.array([INVENTORY.index(label) if label in INVENTORY else -1 for label in labels])


def test_uas_and_las_count_words_not_punctuation_roots_included():
    metrics = DistanceMetrics()
    metrics.update(
        gold_distances(PRED_HEADS),
        GOLD_HEADS,
        PUNCT,
        pred_heads=PRED_HEADS,
        pred_labels=ids(PRED_DEPS),
        gold_labels=ids(GOLD_DEPS),
    )
    got = metrics.compute()
    assert got["uas"] == pytest.approx(100 * 3 / 4)  # The, film, is right; great wrong; "." not scored
    assert got["las"] == pytest.approx(100 * 2 / 4)  # film has its head but the wrong label


def test_las_is_taken_over_labelled_examples_only_and_an_unknown_gold_label_is_wrong():
    metrics = DistanceMetrics()
    unlabelled = np.array([-1, -1])
    metrics.update(
        gold_distances(np.array([1, 1])),
        np.array([1, 1]),
        pred_heads=np.array([1, 1]),
        pred_labels=np.array([2, 0]),
        gold_labels=unlabelled,
    )  # no gold labels: UAS only
    gold = ids(GOLD_DEPS)
    gold[0] = -1  # "det" unknown to the model
    metrics.update(
        gold_distances(PRED_HEADS),
        GOLD_HEADS,
        PUNCT,
        pred_heads=PRED_HEADS,
        pred_labels=ids(PRED_DEPS),
        gold_labels=gold,
    )
    got = metrics.compute()
    assert got["uas"] == pytest.approx(100 * 5 / 6)
    assert got["las"] == pytest.approx(100 * 1 / 4)  # only "is" is right in the labelled example
    assert DistanceMetrics().compute()["las"] is None


def test_relation_metrics_give_directed_and_labelled_recall_by_hand():
    metrics = RelationMetrics()
    metrics.update(gold_distances(PRED_HEADS), GOLD_HEADS, GOLD_DEPS, PUNCT, pred_heads=PRED_HEADS, pred_deps=PRED_DEPS)
    overall = metrics.compute()["all"]
    assert overall["words"] == 4 and overall["uas"] == pytest.approx(75.0) and overall["las"] == pytest.approx(50.0)
    assert overall["directed_recall"]["nsubj"] == 100.0 and overall["labelled_recall"]["nsubj"] == 0.0
    assert overall["recall"]["nsubj"] == 100.0 and overall["directed_recall"]["obj"] is None
    assert metrics.compute()["≤10"]["uas"] == pytest.approx(75.0) and metrics.compute()[">40"]["words"] == 0
    undirected_only = RelationMetrics()
    undirected_only.update(gold_distances(PRED_HEADS), GOLD_HEADS, GOLD_DEPS, PUNCT)
    assert "uas" not in undirected_only.compute()["all"]
