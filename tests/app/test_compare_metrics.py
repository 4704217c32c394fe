"""The comparison's task metrics: macro-F1 over every class of the task, and the agreement of two models
that stays quiet (NaN, no warning) when one of them gives a constant score."""

import warnings

import numpy as np
import pytest
from fake_pipelines import NoBar, scripted_pipeline

from parserfree.distill.task_metrics import macro_f1


def test_macro_f1_of_a_three_class_domain_averages_all_three_classes():
    """Issue 21 item 2: compare called task_metrics without n_classes, so class 2 never counted."""
    from parserfree.compare import _run_domain

    gold = np.array([0, 1, 2, 2, 2, 1, 0, 2])
    pred = np.array([0, 1, 2, 0, 2, 1, 1, 1])
    texts = [f"text number {i}" + " x" * i for i in range(len(gold))]
    logits = {t: np.eye(3)[p] for t, p in zip(texts, pred)}
    pipes = {"parser_fed": scripted_pipeline(logits, False), "parser_free_onnx": scripted_pipeline(logits, True)}
    domain = _run_domain(pipes, texts, gold, "classification", 3, NoBar())
    expected = macro_f1(pred, gold, 3)
    assert expected != pytest.approx(macro_f1(pred, gold, 2))  # the fixture tells the two apart
    assert domain.scores["parser_fed"]["macro_f1"] == pytest.approx(expected)


def test_agreement_of_a_constant_regression_score_is_nan_without_a_warning():
    """Issue 21 item 7: compare's own agreement lacked task_metrics' guard for constant scores."""
    from parserfree.compare import _run_domain

    texts = [f"sentence {i}" + " y" * i for i in range(6)]
    gold = np.linspace(-2, 2, 6)
    constant = {t: np.float32(0.5) for t in texts}
    varying = {t: np.float32(i) for i, t in enumerate(texts)}
    pipes = {"parser_fed": scripted_pipeline(varying, False), "parser_free_onnx": scripted_pipeline(constant, True)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        domain = _run_domain(pipes, texts, gold, "regression", 3, NoBar())
    assert np.isnan(domain.agreement)
