"""Breakdowns by attractors, subject–verb distance and subject number × attractors: Wilson intervals,
buckets, minimal-pair accuracy, and the compare path that must keep each example's columns with its
prediction when it runs the examples sorted by length."""

import math

import numpy as np
import pytest
from fake_pipelines import NoBar, scripted_pipeline

from parserfree.comparison.breakdown import (
    breakdown,
    breakdowns,
    item_slices,
    pair_accuracy,
    wilson,
)
from parserfree.comparison.compare import run_domain, score_outputs
from parserfree.distill.data.agreement import PAIR_ID
from parserfree.distill.data.datasets import Example
from parserfree.reports.figures import plot_breakdown
from parserfree.reports.slices import ALL, breakdown_markdown


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
    got = breakdown((pred == gold)[None], item_slices(columns, 7, 1, 200, PAIR_ID))
    assert {b: (e.n, e.accuracy) for b, e in got["attractors"].items()} == {
        "0": (3, pytest.approx(200 / 3)),
        "1": (2, 50.0),
        "2+": (2, 50.0),
    }
    assert {b: e.n for b, e in got["distance"].items()} == {"1": 1, "2-3": 2, "4-6": 2, "7+": 2}
    assert got["distance"]["4-6"].accuracy == 50.0 and got["distance"]["4-6"].ci95 == pytest.approx(list(wilson(1, 2)))
    assert "subject_number×attractors" not in got  # no subject number column: no such breakdown


def test_subject_number_by_attractors_and_minimal_pairs():
    """Two pairs of singular subjects with one attractor, one plural pair without: a row that gets one version of
    a pair right and the other wrong has item accuracy 50 % but pair accuracy 0 %."""
    columns = (
        [{"attractors": 1, "distance": 3, "subject_number": "sg", "pair_id": "p1"}] * 2
        + [{"attractors": 1, "distance": 3, "subject_number": "sg", "pair_id": "p2"}] * 2
        + [{"attractors": 0, "distance": 1, "subject_number": "pl", "pair_id": "p3"}] * 2
    )
    correct = np.array([[True, False, True, True, True, False]])
    slices = item_slices(columns, 6, 1, 500, PAIR_ID)
    got = breakdown(correct, slices)["subject_number×attractors"]
    assert (
        got["sg/1"].n == 4
        and got["sg/1"].accuracy == 75.0
        and got["sg/1"].pair_accuracy == 50.0
        and got["sg/1"].n_pairs == 2
    )
    assert got["pl/0"].accuracy == 50.0 and got["pl/0"].pair_accuracy == 0.0
    assert got["sg/0"].n == 0 and got["pl/2+"].n == 0
    assert pair_accuracy(correct, slices.pair_ids, slices.masks[ALL]) == (pytest.approx(100 / 3), 3)
    lo, hi = got["sg/1"].ci95  # pairs: the bootstrap over the 2 pairs, not Wilson over 4 items
    assert (lo, hi) == (50.0, 100.0)


def test_datasets_without_the_columns_get_no_breakdown():
    assert breakdowns({"m": np.array([[True, False]])}, item_slices([None, None], 2, 1, 100, PAIR_ID)) is None
    assert breakdowns({"m": np.array([[True]])}, item_slices([{"source": "x"}], 1, 1, 100, PAIR_ID)) is None


def test_markdown_has_a_row_per_model_and_counts_and_the_plot_is_written(tmp_path):
    columns = [
        {"attractors": i % 3, "distance": 1 + i % 8, "subject_number": "sg" if i % 4 else "pl"} for i in range(40)
    ]
    gold = np.arange(40) % 2
    result = breakdowns(
        {"parser_fed_twin": (gold == gold)[None], "no_syntax": (gold != gold)[None]},
        item_slices(columns, 40, 1, 100, PAIR_ID),
    )
    text = "\n".join(breakdown_markdown(result))
    assert "| parser_fed_twin | 100.0 [" in text and "| no_syntax | 0.0 [" in text and "2+ (n=13)" in text
    assert "pl/0 (n=" in text
    plot_breakdown(result, tmp_path / "b.png")
    assert (tmp_path / "b.png").stat().st_size > 0


def test_compare_keeps_each_examples_columns_with_it_when_sorting_by_length():
    # long texts are right and carry attractors; short texts are wrong and carry none: sorting by length
    # without moving the columns along would mix them
    texts = [("good " * (12 - i)).strip() if i % 2 else "bad" + " x" * i for i in range(12)]
    examples = [
        Example(t, 1, "f", columns={"attractors": 1 if i % 2 else 0, "distance": 1}) for i, t in enumerate(texts)
    ]

    def output(text):
        return np.array([0.0, 1.0]) if "good" in text else np.array([1.0, 0.0])

    pipes = {"parser_fed_twin": [scripted_pipeline(output, False)], "parser_free": [scripted_pipeline(output, True)]}
    run = run_domain(pipes, texts, 4, NoBar())
    assert [texts[i] for i in run.order] != texts  # the run did reorder them
    scored, _ = score_outputs(
        "fixture", examples, "binary", ["negative", "positive"], {n: run.outputs(n) for n in pipes}, [], []
    )
    for model in pipes:
        assert (
            scored.breakdown[model]["attractors"]["1"].accuracy == 100.0
            and scored.breakdown[model]["attractors"]["1"].n == 6
        )
        assert scored.breakdown[model]["attractors"]["0"].accuracy == 0.0
