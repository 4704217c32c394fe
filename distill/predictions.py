"""Per-item predictions: one JSON line per item of a split, so that any two models can be compared item by
item later (paired tests) without running them again.

Written beside a training run's ``metrics.json`` (its test split, by ``distill/train.py``) and beside a
comparison report (every row on every compared dataset, by ``parserfree compare``). A line holds the item's
``index`` in its split, ``text``, ``gold`` label, the ``prediction`` and, for a classifier, its class
``probabilities`` (None for a rule that has none) or, for a regression, its ``score``, and the dataset's
``columns`` of the item (e.g. agreement's attractors and pair id). Lines are in index order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import softmax

from ..encoder.files import write_text_atomic
from .data.readers import DataError


def item_records(
    examples: Sequence[Any], predictions: np.ndarray, probabilities: np.ndarray | None, task: str
) -> list[dict]:
    """One record per example (objects with ``text``, ``label`` and ``columns``), in the order given."""
    out = []
    for i, e in enumerate(examples):
        record: dict = {"index": i, "text": e.text, "gold": e.label}
        if task == "regression":
            record.update(prediction=float(predictions[i]), score=float(predictions[i]))
        else:
            record.update(
                prediction=int(predictions[i]),
                probabilities=None if probabilities is None else [round(float(p), 6) for p in probabilities[i]],
            )
        record["columns"] = dict(e.columns) if e.columns else {}
        out.append(record)
    return out


def records_from_outputs(examples: Sequence[Any], outputs: np.ndarray, task: str) -> list[dict]:
    """Records of a model's task outputs (B×C logits → class and softmax probabilities; B scores as they are)."""
    outputs = np.asarray(outputs, dtype=float)
    if task == "regression":
        return item_records(examples, outputs, None, task)
    return item_records(examples, outputs.argmax(-1), softmax(outputs, axis=-1), task)


def write_predictions(path: str | Path, records: Sequence[dict]) -> None:
    """Write records as JSON lines, atomically."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(Path(path), "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in records))


def read_predictions(path: str | Path) -> list[dict]:
    """The records of a predictions file; a line that is not a JSON record with index, gold and prediction
    is a DataError naming the file and line."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            try:
                record = json.loads(line)
            except ValueError:
                raise DataError(f"{path}:{number}: not a JSON line") from None
            if not isinstance(record, dict) or not all(k in record for k in ("index", "gold", "prediction")):
                raise DataError(f"{path}:{number}: a prediction needs 'index', 'gold' and 'prediction'")
            out.append(record)
    return out
