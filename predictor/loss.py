"""Predictor losses: how the head learns the parser's trees (the λ·predictor term of co-training).

`heads` form: cross-entropy of each word's arc-score row against the parser's head (Dozat & Manning);
pad rows (head −1) are ignored; with a label scorer, plus the cross-entropy of each word's label scores at
its gold head against the parser's label (words without a known label, id −1, are ignored). `probe` form: L1 between D̂ and the parser's distances D on
pairs in the same sentence; on pairs in different sentences of one example (D = CROSS_TREE_DISTANCE) a
hinge max(0, far − D̂), where ``far`` is the syntax bias's max_distance: teacher-forced batches put such
pairs in the bias's last bucket, and any D̂ ≥ far lands there too, so the probe is pushed exactly as far
as the bias can tell. Per example the errors are summed over the word pairs and divided by their number
(n², as Hewitt & Manning normalise by length²), then averaged over the examples. Pad pairs are not
scored.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from ..encoder.conventions import CROSS_TREE_DISTANCE, NO_LABEL, PAD_DISTANCE


def arc_loss(arc_scores: Tensor, heads: Tensor) -> Tensor:
    """Mean cross-entropy over words: arc_scores (B×T×T), gold heads (B×T long, −1 on pad) → scalar."""
    t = arc_scores.shape[-1]
    targets = heads.reshape(-1)
    if not bool((targets >= 0).any()):
        return arc_scores.sum() * 0.0  # no words: a zero that keeps the graph
    return F.cross_entropy(arc_scores.reshape(-1, t), targets, ignore_index=PAD_DISTANCE)


def label_loss(label_scores: Tensor, labels: Tensor) -> Tensor:
    """Mean cross-entropy over labelled words: label scores at the gold heads (B×T×L), gold label ids
    (B×T long, −1 on pad and unknown labels) → scalar (a zero that keeps the graph when none is labelled)."""
    targets = labels.reshape(-1)
    if not bool((targets >= 0).any()):
        return label_scores.sum() * 0.0
    return F.cross_entropy(label_scores.reshape(-1, label_scores.shape[-1]), targets, ignore_index=NO_LABEL)


def probe_loss(predicted: Tensor, gold: Tensor, far: float) -> Tensor:
    """Length²-normalised L1: D̂ (B×T×T float) vs D (B×T×T long, −1 pad, CROSS_TREE_DISTANCE) → scalar;
    cross-tree pairs score max(0, far − D̂)."""
    scored = gold >= 0  # B×T×T
    weight = scored.to(predicted.dtype)
    cross = gold == CROSS_TREE_DISTANCE
    errors = torch.where(cross, (far - predicted).clamp(min=0.0), (predicted - gold.to(predicted.dtype)).abs()) * weight
    pairs = weight.sum(dim=(1, 2))  # B
    has_pairs = pairs > 0
    if not bool(has_pairs.any()):
        return predicted.sum() * 0.0
    per_example = errors.sum(dim=(1, 2)) / pairs.clamp(min=1.0)
    return per_example[has_pairs].mean()
