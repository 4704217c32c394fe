"""Predictor losses: how the head learns the parser's trees (the λ·predictor term of co-training).

`heads` form: cross-entropy of each word's arc-score row against the parser's head (Dozat & Manning);
pad rows (head −1) are ignored. `probe` form: L1 between D̂ and the parser's distances D, per example
summed over the scored pairs and divided by their number (n² for one sentence, as Hewitt & Manning
normalise by length²; Σ n_t² over the trees of a forest), then averaged over the examples. Pad pairs and
cross-tree pairs are not scored.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

from parserfree.encoder.conventions import CROSS_TREE_DISTANCE, PAD_DISTANCE


def arc_loss(arc_scores: Tensor, heads: Tensor) -> Tensor:
    """Mean cross-entropy over words: arc_scores (B×T×T), gold heads (B×T long, −1 on pad) → scalar."""
    t = arc_scores.shape[-1]
    targets = heads.reshape(-1)
    if not bool((targets >= 0).any()):
        return arc_scores.sum() * 0.0  # no words: a zero that keeps the graph
    return F.cross_entropy(arc_scores.reshape(-1, t), targets, ignore_index=PAD_DISTANCE)


def probe_loss(predicted: Tensor, gold: Tensor, cross_tree_distance: int = CROSS_TREE_DISTANCE) -> Tensor:
    """Length²-normalised L1: D̂ (B×T×T float) vs D (B×T×T long, −1 pad, ``cross_tree_distance``) → scalar."""
    scored = (gold >= 0) & (gold != cross_tree_distance)  # B×T×T
    weight = scored.to(predicted.dtype)
    errors = (predicted - gold.to(predicted.dtype)).abs() * weight
    pairs = weight.sum(dim=(1, 2))  # B
    has_pairs = pairs > 0
    if not bool(has_pairs.any()):
        return predicted.sum() * 0.0
    per_example = errors.sum(dim=(1, 2)) / pairs.clamp(min=1.0)
    return per_example[has_pairs].mean()
