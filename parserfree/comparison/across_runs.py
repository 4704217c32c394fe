"""Rows of different runs on the same items: a student against its teacher and against the row it was before.

A job's report keeps every row's per-item predictions (``<task>/report/predictions/<dataset>/<row>.jsonl``,
``<row>-seed<s>.jsonl`` for further seeds). Rows of two jobs (say ``--size student`` and ``--size base``)
are compared here exactly as one report compares its own rows (``scoring.score_domain``: the same slices,
minimal-pair clusters, bootstrap and Holm correction), once it is checked that they scored the same items
in the same order: a row from another split, data setting or dataset is refused in one line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..distill.data.readers import DataError
from ..distill.predictions import read_predictions
from ..reports.report import MODEL
from .compare import dataset_slug
from .like_for_like import Pairing
from .scoring import DomainScores, score_domain


@dataclass(frozen=True)
class RunRow:
    """One row of one job: the task folder (``runs/base/agreement``), the row's name there, and the name
    it takes in the comparison (``teacher``, ``student · parser_free``)."""

    task_dir: Path
    row: str
    name: str


def row_predictions(row: RunRow, dataset: str, seeds: int | None = None) -> tuple[np.ndarray, list[dict]]:
    """A row's S×N predicted classes (one line per seed's file, seed 0 first; the first ``seeds`` only when
    given) and seed 0's records."""
    folder = Path(row.task_dir) / "report" / "predictions" / dataset_slug(dataset)
    first = folder / f"{row.row}.jsonl"
    if not first.is_file():
        raise DataError(f"{first}: no predictions of row '{row.row}' (run the job's comparison first)")
    paths = [first, *sorted(folder.glob(f"{row.row}-seed*.jsonl"), key=lambda p: int(p.stem.rsplit("seed", 1)[1]))]
    records = [read_predictions(p) for p in paths[:seeds]]
    return np.array([[r["prediction"] for r in seed] for seed in records]), records[0]


def compare_across_runs(
    rows: Sequence[RunRow],
    pairs: Sequence[tuple[str, str, str]],
    dataset: str,
    task: str,
    n_classes: int,
    seeds: int | None = None,
) -> DomainScores:
    """Scores of ``rows`` on one dataset's items (each row's first ``seeds``; None: all) and the paired
    verdict of each (a, b, what differs) in ``pairs``, overall and per breakdown bucket; every row must hold
    the same items as the first."""
    predictions: dict[str, np.ndarray] = {}
    reference: list[dict] | None = None
    for row in rows:
        found, records = row_predictions(row, dataset, seeds)
        if reference is None:
            reference = records
        elif [(r["index"], r["text"], r["gold"]) for r in records] != [
            (r["index"], r["text"], r["gold"]) for r in reference
        ]:
            raise DataError(
                f"{row.task_dir}: row '{row.row}' scored other items than {rows[0].task_dir} '{rows[0].row}' "
                f"on {dataset} (another split, dataset or data setting): they cannot be paired"
            )
        predictions[row.name] = found
    assert reference is not None
    gold = np.array([r["gold"] for r in reference])
    columns = [r.get("columns") or {} for r in reference]
    kinds: Mapping[str, str] = {name: MODEL for name in predictions}
    pairings = [Pairing(a, b, (a, b), differs) for a, b, differs in pairs]
    return score_domain(dataset, task, gold, columns, predictions, kinds, pairings, n_classes)
