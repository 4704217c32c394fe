"""Evaluation of a trained model on a split: task metric and, where there is a predictor, D̂ quality.

Shared by the end of training (``metrics.json`` of a run) and the comparison report. Plain PyTorch over
the DataModule's loaders; the distance source is chosen explicitly, so the same parser-free model can
be scored on its own D̂ or fed the parser's D.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import DataLoader

from ..core.task_metrics import predictions, task_metrics
from ..encoder.vocabulary import AnyVocabulary
from ..predictor import DistanceMetrics
from ..predictor.syntax_model import SyntaxModel


def update_distance_metrics(metrics: DistanceMetrics, predicted, batch: dict) -> None:
    """Add every example of a batch (un-padded) to a DistanceMetrics accumulator."""
    dist = predicted.distances.detach().cpu().numpy()
    pred_heads = predicted.heads.cpu().numpy() if predicted.heads is not None else None
    argmax_heads = predicted.argmax_heads.cpu().numpy() if predicted.argmax_heads is not None else None
    pred_labels = predicted.labels.cpu().numpy() if predicted.labels is not None else None
    gold_labels = batch["dep_labels"].numpy() if "dep_labels" in batch else None
    for b, n in enumerate(batch["mask"].sum(1).tolist()):
        metrics.update(
            dist[b, :n, :n],
            batch["heads"][b, :n].numpy(),
            batch["punct"][b, :n].numpy(),
            gold=batch["distances"][b, :n, :n].numpy(),
            pred_heads=pred_heads[b, :n] if pred_heads is not None else None,
            argmax_heads=argmax_heads[b, :n] if argmax_heads is not None else None,
            pred_labels=pred_labels[b, :n] if pred_labels is not None else None,
            gold_labels=gold_labels[b, :n] if gold_labels is not None and pred_labels is not None else None,
        )


def dataset_size(loader: DataLoader) -> int:
    """Examples in a loader's dataset (a list: ``SyntaxDataModule.loader``)."""
    return len(loader.dataset)  # type: ignore[arg-type]  # torch's Dataset type declares no __len__; a list has one


@torch.no_grad()
def loader_outputs(
    model: SyntaxModel, loader: DataLoader, source: str, distance_metrics: DistanceMetrics | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(task outputs, gold labels) over a loader, in the dataset's order (not the loader's length-sorted
    one): B×C logits or B scores; fills ``distance_metrics`` if given."""
    model.eval()
    outputs, gold = [], []
    for batch in loader:
        out = model(
            batch["word_ids"],
            batch["feature_ids"],
            batch["mask"],
            batch["distances"],
            source=source,
        )
        if out.task is not None:
            outputs.append(out.task.numpy())
            gold.append(batch["labels"].numpy())
        if distance_metrics is not None and out.predicted is not None:
            update_distance_metrics(distance_metrics, out.predicted, batch)
    if not outputs:
        return np.zeros(0), np.zeros(0)
    return in_dataset_order(loader, np.concatenate(outputs)), in_dataset_order(loader, np.concatenate(gold))


def in_dataset_order(loader: DataLoader, served_values: np.ndarray) -> np.ndarray:
    """Values computed example by example in the order ``loader`` served them → the dataset's order."""
    served = loader.sampler.order() if hasattr(loader.sampler, "order") else np.arange(dataset_size(loader))
    inverse = np.empty_like(served)
    inverse[served] = np.arange(served.size)
    return served_values[inverse]


def evaluate_with_outputs(
    model: SyntaxModel, loader: DataLoader, task: str, n_classes: int, source: str
) -> tuple[dict, np.ndarray]:
    """``evaluate``'s metrics and the task outputs behind them, in the dataset's order."""
    metrics = DistanceMetrics()
    outputs, gold = loader_outputs(model, loader, source, metrics if model.predictor is not None else None)
    result: dict = {"n_examples": dataset_size(loader), "source": source}
    if task != "none" and gold.size:
        result.update(task_metrics(task, predictions(task, outputs), gold, n_classes))
    if metrics.n_sentences:
        result.update({k: v for k, v in metrics.compute().items() if k != "n_sentences"})
    return result, outputs


def evaluate(model: SyntaxModel, loader: DataLoader, task: str, n_classes: int, source: str) -> dict:
    """Task metrics (when labelled) plus UUAS / DSpr / L1 of D̂ and UAS / LAS of the predicted heads and
    labels against the parser (when predicted)."""
    return evaluate_with_outputs(model, loader, task, n_classes, source)[0]


@torch.no_grad()
def argmax_heads(
    model: SyntaxModel, vocab: AnyVocabulary, words: list[list[str]], max_len: int, batch_size: int = 64
) -> list[np.ndarray] | None:
    """The predictor's raw argmax heads (before cycle breaking) of every word list (n ≤ max_len each),
    for the argmax cycle rate of a report; None when the model has no `heads` predictor."""
    if model.predictor is None or model.predictor.arc_scorer is None:
        return None
    model.eval()
    out = []
    for i in range(0, len(words), batch_size):
        word_ids, feature_ids, mask = (
            torch.from_numpy(a) for a in vocab.encode_batch(words[i : i + batch_size], max_len)
        )
        heads = model.predict(word_ids, feature_ids, mask).argmax_heads.numpy()  # through its tower, if any
        out += [heads[b, :n] for b, n in enumerate(mask.sum(1).tolist())]
    return out
