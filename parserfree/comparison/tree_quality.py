"""Directed, labelled trees of a parser-free model against the parser's: UAS, LAS, by length and relation.

The parse-quality half of the comparison report (the other half, D̂'s UUAS, DSpr and L1, is the
report's ``distance_quality``). ``graph_trees`` runs a model's predictor on word lists — the bundle's
tree graph, or the checkpoint in PyTorch when there is no bundle — and returns per sentence D̂ and, from a
``heads`` predictor, the predicted heads and (from a labelled one) the label names; ``predicted_trees`` is
the same for a model with heads only. ``tree_quality`` scores them (computed there, or given by the caller
that already ran ``graph_trees``) against the parser's trees with ``predictor.metrics.RelationMetrics``:
UUAS, UAS and LAS (punctuation excluded, roots included, as spaCy's scorer counts), overall and by sentence
length, and per relation the undirected, directed and labelled recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..core.parse import Parse
from ..predictor.metrics import RelationMetrics
from .pipelines import ModelSource


@dataclass(frozen=True)
class PredictedTree:
    """One sentence as the predictor reads it: D̂ (n×n), heads (n, 0-based, root = self; None for a predictor
    without heads, a probe), labels (n names, None without a label scorer)."""

    distances: np.ndarray
    heads: np.ndarray | None
    labels: tuple[str, ...] | None


def has_heads(source: ModelSource) -> bool:
    """Whether the model's predictor gives heads (its bundle's tree graph outputs them, or its checkpoint's
    predictor has an arc scorer)."""
    if source.bundle is not None:
        return "heads" in source.bundle.tree_output_names
    predictor = source.trained.model.predictor
    return predictor is not None and predictor.arc_scorer is not None


def graph_trees(
    source: ModelSource, words: Sequence[Sequence[str]], batch_size: int = 32
) -> list[PredictedTree] | None:
    """The predicted tree of every word list (each cut to the model's max_len): D̂ and, from a ``heads``
    predictor, heads and labels — from the bundle's tree graph, or else the checkpoint's predictor in
    PyTorch; None when the model predicts no distances (no tree graph, no predictor)."""
    out: list[PredictedTree] = []
    if source.bundle is not None:
        bundle = source.bundle
        if not bundle.has_tree_graph:
            return None
        for start in range(0, len(words), batch_size):
            batch = [list(w)[: bundle.max_len] for w in words[start : start + batch_size]]
            got = bundle.run_outputs(batch, tree=True)
            for b, w in enumerate(batch):
                n = len(w)
                heads = got["heads"][b, :n] if "heads" in got else None
                labels = tuple(bundle.dep_label_names(got["dep_labels"][b, :n])) if "dep_labels" in got else None
                out.append(PredictedTree(got["distances"][b, :n, :n], heads, labels))
        return out
    trained = source.trained
    model = trained.model.eval()
    if model.predictor is None:
        return None
    max_len = trained.encoder_config.max_len
    for start in range(0, len(words), batch_size):
        batch = [list(w)[:max_len] for w in words[start : start + batch_size]]
        word_ids, feature_ids, mask = (torch.from_numpy(a) for a in trained.vocab.encode_batch(batch, max_len))
        with torch.no_grad():
            predicted = model.predict(word_ids, feature_ids, mask)
        for b, w in enumerate(batch):
            n = len(w)
            heads = predicted.heads[b, :n].numpy() if predicted.heads is not None else None
            labels = None
            if predicted.labels is not None:
                labels = tuple(trained.dep_labels[int(k)] for k in predicted.labels[b, :n])
            out.append(PredictedTree(predicted.distances[b, :n, :n].numpy(), heads, labels))
    return out


def predicted_trees(
    source: ModelSource, words: Sequence[Sequence[str]], batch_size: int = 32
) -> list[PredictedTree] | None:
    """``graph_trees`` of a model whose predictor gives heads; None for any other (a probe, no predictor)."""
    return graph_trees(source, words, batch_size) if has_heads(source) else None


def tree_quality(
    source: ModelSource | None,
    words: Sequence[Sequence[str]],
    parses: Sequence[Parse],
    trees: Sequence[PredictedTree] | None = None,
) -> dict | None:
    """UUAS, UAS and LAS of the model's predicted trees against the parser's ``parses`` (same words), overall
    and by sentence length, with per-relation recall (``RelationMetrics.compute``, plus ``skipped``: sentences
    whose words differ or were cut); None when the model predicts no heads or the parses carry no labels.
    ``trees``: the model's ``graph_trees`` of ``words`` when the caller already ran them (then ``source`` is
    not run), else computed here."""
    if trees is None:
        trees = predicted_trees(source, words) if source is not None else None
    if trees is None:
        return None
    metrics, skipped = RelationMetrics(), 0
    for w, p, tree in zip(words, parses, trees):
        if tree.heads is None or list(w) != list(p.words) or len(tree.heads) < len(w) or p.deps is None:
            skipped += 1  # no heads (a probe), words that differ, cut, or an unlabelled parse
            continue
        metrics.update(tree.distances, p.heads, p.deps, p.punct, pred_heads=tree.heads, pred_deps=tree.labels)
    if not metrics.sentences["all"]:
        return None
    return {**metrics.compute(), "skipped": skipped}
