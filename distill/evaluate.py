"""Evaluation of a trained model on a split: task metric and, where there is a predictor, D̂ quality.

Shared by the end of training (``metrics.json`` of a run) and the comparison report. Plain PyTorch over
the DataModule's loaders; the distance source is chosen explicitly, so the same parser-free model can
be scored on its own D̂ or fed the parser's D.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import DataLoader

from parserfree.distill.task_metrics import predictions, task_metrics
from parserfree.predictor import DistanceMetrics
from parserfree.predictor.syntax_model import SyntaxModel


def update_distance_metrics(metrics: DistanceMetrics, predicted, batch: dict) -> None:
    """Add every example of a batch (un-padded) to a DistanceMetrics accumulator."""
    dist = predicted.distances.detach().cpu().numpy()
    pred_heads = predicted.heads.cpu().numpy() if predicted.heads is not None else None
    for b, n in enumerate(batch["mask"].sum(1).tolist()):
        metrics.update(
            dist[b, :n, :n], batch["heads"][b, :n].numpy(), batch["punct"][b, :n].numpy(),
            gold=batch["distances"][b, :n, :n].numpy(),
            pred_heads=pred_heads[b, :n] if pred_heads is not None else None,
        )


@torch.no_grad()
def predict_loader(model: SyntaxModel, loader: DataLoader, source: str, distance_metrics: DistanceMetrics | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(predictions, gold labels) over a loader: class ids or scores; fills ``distance_metrics`` if given."""
    model.eval()
    preds, gold = [], []
    for batch in loader:
        out = model(batch["word_ids"], batch["feature_ids"], batch["mask"], batch["distances"], source=source, task=model.head is not None)
        if out.task is not None:
            preds.append(predictions(model.head.task, out.task).numpy())
            gold.append(batch["labels"].numpy())
        if distance_metrics is not None and out.predicted is not None:
            update_distance_metrics(distance_metrics, out.predicted, batch)
    if not preds:
        return np.zeros(0), np.zeros(0)
    return np.concatenate(preds), np.concatenate(gold)


def evaluate(model: SyntaxModel, loader: DataLoader, task: str, n_classes: int, source: str) -> dict:
    """Task metrics (when labelled) plus UUAS / DSpr / L1 of D̂ against the parser (when predicted)."""
    metrics = DistanceMetrics()
    pred, gold = predict_loader(model, loader, source, metrics if model.predictor is not None else None)
    result: dict = {"n_examples": len(loader.dataset), "source": source}
    if task != "none" and gold.size:
        result.update(task_metrics(task, pred, gold, n_classes))
    if metrics.n_sentences:
        result.update({k: v for k, v in metrics.compute().items() if k != "n_sentences"})
    return result
