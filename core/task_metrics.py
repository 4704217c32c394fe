"""Task metrics: accuracy and macro-F1 for classification, Pearson r and MAE for regression.

Used on validation during co-training and by the comparison report; plain numpy on collected
predictions, so every stage scores a model the same way.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

import numpy as np


class TaskScores(TypedDict):
    """What ``task_metrics`` returns: the task's metric under its name and as ``metric``, and the others."""

    metric_name: str  # "accuracy" (classification) or "pearson" (regression)
    metric: float
    accuracy: NotRequired[float]  # classification: % of ids right
    macro_f1: NotRequired[float]
    pearson: NotRequired[float]  # regression: Pearson r
    mae: NotRequired[float]


def predictions(task: str, outputs):
    """Task outputs → predictions: class ids (argmax of B×C logits) or the B scores of a regression.
    Works on numpy arrays and torch tensors alike."""
    return outputs if task == "regression" else outputs.argmax(-1)


def agreement(task: str, a: np.ndarray, b: np.ndarray) -> float:
    """How far two models' predictions agree: the share of identical class ids (classification) or the
    Pearson r of their scores (regression); NaN when undefined."""
    a, b = np.asarray(a), np.asarray(b)
    if task == "regression":
        return float(np.corrcoef(a, b)[0, 1]) if a.size > 1 and np.std(a) > 0 and np.std(b) > 0 else float("nan")
    return float(np.mean(a == b)) if a.size else float("nan")


def macro_f1(pred: np.ndarray, gold: np.ndarray, n_classes: int) -> float:
    """Unweighted mean of per-class F1 (a class absent from both pred and gold is skipped)."""
    scores = []
    for c in range(n_classes):
        tp = np.sum((pred == c) & (gold == c))
        fp = np.sum((pred == c) & (gold != c))
        fn = np.sum((pred != c) & (gold == c))
        if tp + fp + fn:
            scores.append(2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores)) if scores else float("nan")


def task_metrics(task: str, pred: np.ndarray, gold: np.ndarray, n_classes: int = 2) -> TaskScores:
    """{metric_name, metric, ...}: accuracy (%) + macro-F1 for classification, Pearson r + MAE for regression.

    ``pred`` holds class ids (classification) or scores (regression).
    """
    pred, gold = np.asarray(pred), np.asarray(gold)
    if task in ("binary", "classification"):
        acc = 100.0 * float(np.mean(pred == gold)) if gold.size else float("nan")
        return {"metric_name": "accuracy", "metric": acc, "accuracy": acc, "macro_f1": macro_f1(pred, gold, n_classes)}
    if task == "regression":
        ok = gold.size > 1 and np.std(pred) > 0 and np.std(gold) > 0
        r = float(np.corrcoef(pred, gold)[0, 1]) if ok else 0.0
        mae = float(np.mean(np.abs(pred - gold))) if gold.size else float("nan")
        return {"metric_name": "pearson", "metric": r, "pearson": r, "mae": mae}
    raise ValueError(f"no task metric for task '{task}'")
