"""bench.sizes reads a task's report from parser-free's side whichever way round the contrast was stored, and
marks as the Pareto front only the points that no other point beats on both speed and accuracy."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from parserfree.comparison.paired import AHEAD, BEHIND

from bench.sizes import bounds_of, pareto, ratios_of, report_scores, student_ratios_of


def _report(a: str, b: str, difference: float, verdict: str) -> SimpleNamespace:
    score = SimpleNamespace(metric=90.0, metric_sd=0.5)
    contrast = SimpleNamespace(
        domain="d", slice="all", a=a, b=b, difference=difference, ci95=(difference - 1, difference + 1), p_holm=0.01
    )
    contrast.verdict = verdict
    other = SimpleNamespace(domain="d", slice="attractor", a=a, b=b, difference=9.0, ci95=(8, 10), p_holm=0.0)
    other.verdict = AHEAD
    return SimpleNamespace(
        dataset="d",
        seeds=3,
        domains={"d": SimpleNamespace(scores={"parser_free": score, "parser_fed_twin": score})},
        contrasts=[other, contrast],
    )


def test_a_contrast_stored_twin_first_is_read_from_parser_frees_side():
    _, stored_free_first, _ = report_scores(_report("parser_free", "parser_fed_twin", -0.8, BEHIND))
    _, stored_twin_first, _ = report_scores(_report("parser_fed_twin", "parser_free", 0.8, AHEAD))
    for found in (stored_free_first, stored_twin_first):
        assert found["difference"] == -0.8
        assert found["ci95"] == pytest.approx([-1.8, 0.2])
        assert found["verdict"] == BEHIND


def test_only_points_no_other_beats_on_both_axes_are_on_the_front():
    points = [
        {"model": "fast", "sentences_per_s": 900.0, "accuracy": 90.0},
        {"model": "accurate", "sentences_per_s": 100.0, "accuracy": 95.0},
        {"model": "beaten", "sentences_per_s": 90.0, "accuracy": 94.0},
        {"model": "tied_slower", "sentences_per_s": 800.0, "accuracy": 90.0},
    ]
    pareto(points)
    assert {p["model"]: p["front"] for p in points} == {
        "fast": True,
        "accurate": True,
        "beaten": False,
        "tied_slower": False,
    }


def test_the_speed_ratio_pairs_parser_free_with_the_twin_of_its_own_size_task_and_batch():
    points = [
        {"task": "t", "size": size, "batch": batch, "model": model, "sentences_per_s": rate}
        for size, batch, model, rate in (
            ("base", 32, "parser-free fp32", 300.0),
            ("base", 32, "parser-free int8", 900.0),
            ("base", 32, "parser-fed twin", 200.0),
            ("small", 32, "parser-free fp32", 3000.0),
            ("small", 32, "parser-fed twin", 1000.0),
            ("base", 1, "parser-free fp32", 120.0),
            ("base", 1, "parser-fed twin", 80.0),
        )
    ]
    assert ratios_of(points) == {"base/t/batch_32": 1.5, "small/t/batch_32": 3.0, "base/t/batch_1": 1.5}


def test_the_parse_bound_takes_the_parse_from_the_small_size_and_the_graph_from_base():
    points = [
        {"task": "t", "size": size, "batch": 32, "model": model, "sentences_per_s": rate}
        for size, model, rate in (
            ("small", "parser-free fp32", 1000.0),  # 1 ms a sentence
            ("small", "parser-fed twin", 250.0),  # 4 ms: the parse costs 3 ms
            ("base", "parser-free fp32", 200.0),  # 5 ms
            ("base", "parser-fed twin", 120.0),
        )
    ]
    bound = bounds_of(points)["t/batch_32"]
    assert bound["parse_ms"] == pytest.approx(3.0)
    assert bound["base_graph_ms"] == pytest.approx(5.0)
    assert bound["ratio_bound"] == pytest.approx(1.6)


def test_the_students_speed_goal_is_against_the_base_twin_not_its_own():
    """The student's ratio divides by the base parser-fed twin (the teacher's kind), at each batch size."""
    points = [
        {"size": "student", "task": "t", "batch": 32, "model": "parser-free fp32", "sentences_per_s": 2000.0},
        {"size": "student", "task": "t", "batch": 32, "model": "parser-fed twin", "sentences_per_s": 700.0},
        {"size": "base", "task": "t", "batch": 32, "model": "parser-fed twin", "sentences_per_s": 200.0},
        {"size": "student", "task": "t", "batch": 1, "model": "parser-free fp32", "sentences_per_s": 900.0},
    ]
    assert student_ratios_of(points) == {"student/t/batch_32": 10.0}  # no base twin at batch 1: no ratio
