"""Rows of two jobs compared on the same items (parserfree/comparison/across_runs.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from parserfree.comparison.across_runs import RunRow, compare_across_runs
from parserfree.distill.data.readers import DataError


def write_row(task_dir, row, gold, predicted, texts=None, seed=0):
    folder = task_dir / "report" / "predictions" / "movies"
    folder.mkdir(parents=True, exist_ok=True)
    texts = texts or [f"text {i} ." for i in range(len(gold))]
    lines = [
        json.dumps({"index": i, "text": t, "gold": int(g), "prediction": int(p), "columns": {}})
        for i, (t, g, p) in enumerate(zip(texts, gold, predicted))
    ]
    (folder / f"{row}{'' if seed == 0 else f'-seed{seed}'}.jsonl").write_text("\n".join(lines) + "\n")


def test_two_jobs_rows_are_paired_item_by_item_and_seeds_are_read(tmp_path):
    """A teacher right on 200 more items of 400 than its student is ahead with a verdict; the student's second
    seed's file is read (S = 2), the single-seed teacher stands for both."""
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 2, 400)
    student = gold.copy()
    student[:200] = 1 - student[:200]  # wrong on the first half
    write_row(tmp_path / "base", "parser_fed_twin", gold, gold)
    write_row(tmp_path / "student", "parser_free", gold, student)
    write_row(tmp_path / "student", "parser_free", gold, student, seed=1)
    rows = [RunRow(tmp_path / "base", "parser_fed_twin", "teacher"), RunRow(tmp_path / "student", "parser_free", "s")]
    found = compare_across_runs(rows, [("s", "teacher", "student against teacher")], "movies", "binary", 2)
    assert found.scores["teacher"].metric == 100 and found.scores["s"].metric == 50
    assert len(found.scores["s"].per_seed) == 2
    (contrast,) = found.contrasts
    assert contrast.difference == -50 and contrast.verdict == "behind" and contrast.seeds == 2
    first = compare_across_runs(rows, [("s", "teacher", "x")], "movies", "binary", 2, seeds=1)
    assert len(first.scores["s"].per_seed) == 1  # --seeds 1: seed 0's file only


def test_rows_that_scored_other_items_are_refused_in_one_line(tmp_path):
    gold = np.array([0, 1, 0, 1])
    write_row(tmp_path / "a", "r", gold, gold)
    write_row(tmp_path / "b", "r", gold, gold, texts=["w .", "x .", "y .", "z ."])
    rows = [RunRow(tmp_path / "a", "r", "a"), RunRow(tmp_path / "b", "r", "b")]
    with pytest.raises(DataError, match="scored other items .* cannot be paired"):
        compare_across_runs(rows, [("a", "b", "x")], "movies", "binary", 2)
    with pytest.raises(DataError, match="no predictions of row 'missing'"):
        compare_across_runs([RunRow(tmp_path / "a", "missing", "m")], [], "movies", "binary", 2)
