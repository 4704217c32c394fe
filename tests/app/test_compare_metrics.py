"""The comparison's task metrics: macro-F1 over every class of the task, and the agreement of two models
that stays quiet (NaN, no warning) when one of them gives a constant score."""

import warnings

import numpy as np
import pytest

from parserfree.comparison.compare import score_outputs, seed_agreement
from parserfree.core.task_metrics import macro_f1
from parserfree.distill.data.datasets import Example


def test_macro_f1_of_a_three_class_domain_averages_all_three_classes():
    """Issue 21 item 2: compare called task_metrics without n_classes, so class 2 never counted."""
    gold = np.array([0, 1, 2, 2, 2, 1, 0, 2])
    pred = np.array([0, 1, 2, 0, 2, 1, 1, 1])
    examples = [Example(f"text {i}", int(g), "f") for i, g in enumerate(gold)]
    scored, _ = score_outputs(
        "three", examples, "classification", ["a", "b", "c"], {"parser_fed_twin": [np.eye(3)[pred]]}, [], []
    )
    expected = macro_f1(pred, gold, 3)
    assert expected != pytest.approx(macro_f1(pred, gold, 2))  # the fixture tells the two apart
    assert scored.scores["parser_fed_twin"].per_seed[0]["macro_f1"] == pytest.approx(expected)


def test_agreement_of_a_constant_regression_score_is_nan_without_a_warning():
    """Issue 21 item 7: compare's own agreement lacked task_metrics' guard for constant scores."""
    constant, varying = np.full((2, 6), 0.5), np.tile(np.arange(6.0), (2, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(seed_agreement("regression", constant, varying))
    assert seed_agreement("binary", np.array([[1, 0, 1, 1]]), np.array([[1, 1, 1, 1]])) == 0.75
