"""Breakdowns by attractors and subject–verb distance: Wilson intervals, buckets, and the compare path that
must keep each example's columns with its prediction when it sorts examples by length."""

import math

import numpy as np
import pytest

from parserfree.breakdown import breakdown, breakdown_markdown, breakdowns, plot_breakdown, wilson
from parserfree.distill.teacher import Parse
from parserfree.distill.trees import batch_tree_distances


def test_wilson_interval_matches_the_textbook_values():
    lo, hi = wilson(8, 10)
    assert (round(lo, 1), round(hi, 1)) == (49.0, 94.3)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and round(hi, 1) == 27.8
    assert all(math.isnan(x) for x in wilson(0, 0))


def test_examples_fall_into_their_buckets_with_counts_and_accuracy():
    columns = [{"attractors": a, "distance": d} for a, d in [(0, 1), (0, 2), (1, 3), (2, 4), (5, 7), (0, 6), (1, 12)]]
    gold = np.array([1, 0, 1, 0, 1, 0, 1])
    pred = np.array([1, 0, 0, 0, 0, 1, 1])
    got = breakdown(pred, gold, columns)
    assert {b: (e["n"], e["accuracy"]) for b, e in got["attractors"].items()} == {"0": (3, pytest.approx(200 / 3)), "1": (2, 50.0), "2+": (2, 50.0)}
    assert {b: e["n"] for b, e in got["distance"].items()} == {"1": 1, "2-3": 2, "4-6": 2, "7+": 2}
    assert got["distance"]["4-6"]["accuracy"] == 50.0 and got["distance"]["4-6"]["ci95"] == pytest.approx(list(wilson(1, 2)))


def test_datasets_without_the_columns_get_no_breakdown():
    assert breakdowns({"m": np.array([1, 0])}, np.array([1, 1]), [None, None]) is None
    assert breakdowns({"m": np.array([1])}, np.array([1]), [{"source": "x"}]) is None


def test_markdown_has_a_row_per_model_and_counts_and_the_plot_is_written(tmp_path):
    columns = [{"attractors": i % 3, "distance": 1 + i % 8} for i in range(40)]
    gold = np.arange(40) % 2
    result = breakdowns({"parser_fed": gold, "no_syntax": 1 - gold}, gold, columns)
    text = "\n".join(breakdown_markdown(result))
    assert "| parser_fed | 100.0 [" in text and "| no_syntax | 0.0 [" in text and "2+ (n=13)" in text
    plot_breakdown(result, tmp_path / "b.png")
    assert (tmp_path / "b.png").stat().st_size > 0


def fake_pipeline(with_distances: bool):
    """Predicts class 1 iff the text contains 'good'; chain trees; D̂ (parser-free) or parses (parser-fed)."""

    def run(texts):
        words = [t.split() for t in texts]
        out = np.array([[0.0, 1.0] if "good" in t else [1.0, 0.0] for t in texts])
        heads = [np.minimum(np.arange(len(w)) + 1, len(w) - 1) for w in words]
        if with_distances:
            return out, words, [batch_tree_distances([h])[0].astype(float) for h in heads], None
        return out, words, None, [Parse(tuple(w), h, np.zeros(len(w), bool)) for w, h in zip(words, heads)]

    return run


def test_compare_keeps_each_examples_columns_with_it_when_sorting_by_length():
    from parserfree.compare import _run_domain

    class Bar:
        def update(self, n):
            pass

    # long texts are right and carry attractors; short texts are wrong and carry none: sorting by length
    # without moving the columns along would mix them
    texts = [("good " * (12 - i)).strip() if i % 2 else "bad" + " x" * i for i in range(12)]
    gold = np.array([1] * 12)
    columns = [{"attractors": 1 if i % 2 else 0, "distance": 1} for i in range(12)]
    pipes = {"parser_fed": fake_pipeline(False), "parser_free_onnx": fake_pipeline(True)}
    domain = _run_domain(pipes, texts, gold, "binary", 4, Bar(), columns)
    for model in pipes:
        assert domain.breakdown[model]["attractors"]["1"] == {"n": 6, "accuracy": 100.0, "ci95": pytest.approx(list(wilson(6, 6)))}
        assert domain.breakdown[model]["attractors"]["0"]["accuracy"] == 0.0
