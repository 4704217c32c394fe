"""Arc scorer: encoder states h_k → scores of every word j as the head of every word i.

First stage of the `heads` predictor (h_k → arc scores → parents → D̂, see tree_ops.py). A biaffine
scorer in the style of Dozat & Manning: two small projections give each word a "dependent" and a "head"
view, and

    score_ij = dep_iᵀ W head_j + uᵀ head_j + rel[clip(j − i, −R, R)]       (j ≠ i)
    score_ii = rootᵀ dep_i + b                                              (i is a root)

The diagonal is the root choice (the project's "a root points to itself"). Columns of pad positions get
the most negative finite value of the dtype, so a softmax over a row never picks them and never turns
into NaN. Trained by cross-entropy against the parser's heads (loss.py).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class ArcScorer(nn.Module):
    """Biaffine arc scores with a clipped relative-position term and a separate root score."""

    def __init__(self, d_model: int, arc_dim: int = 128, max_relative_position: int = 16) -> None:
        super().__init__()
        self.max_relative_position = max_relative_position
        self.dep = nn.Sequential(nn.Linear(d_model, arc_dim), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(d_model, arc_dim), nn.ReLU())
        # Zero-initialised bilinear terms: every candidate head starts equally likely.
        self.weight = nn.Parameter(torch.zeros(arc_dim, arc_dim))  # W
        self.head_bias = nn.Parameter(torch.zeros(arc_dim))  # u
        self.relative = nn.Embedding(2 * max_relative_position + 1, 1)  # rel, one scalar per clipped offset
        nn.init.zeros_(self.relative.weight)
        self.root = nn.Linear(arc_dim, 1)

    def forward(self, h: Tensor, mask: Tensor) -> Tensor:
        """h (B×T×d), mask (B×T bool, True = word) → arc scores (B×T×T), row i over candidate heads j."""
        dep = self.dep(h)  # B×T×a
        head = self.head(h)  # B×T×a
        scores = torch.matmul(torch.matmul(dep, self.weight), head.transpose(1, 2))  # B×T×T
        scores = scores + torch.matmul(head, self.head_bias).unsqueeze(1)  # + uᵀ head_j
        t = h.shape[1]
        idx = torch.arange(t, device=h.device)
        offset = idx.unsqueeze(0) - idx.unsqueeze(1)  # T×T, entry (i, j) = j − i
        r = self.max_relative_position
        scores = scores + self.relative(torch.clamp(offset, -r, r) + r).squeeze(-1)  # + rel[clip(j − i)]
        root = self.root(dep)  # B×T×1
        diagonal = offset == 0  # T×T
        scores = torch.where(diagonal, root, scores)  # score_ii = root score of i
        pad_column = ~mask.unsqueeze(1)  # B×1×T
        return scores.masked_fill(pad_column, torch.finfo(scores.dtype).min)
