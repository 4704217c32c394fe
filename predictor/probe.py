"""Structural probe: encoder states h_k → squared distances in a learned low-rank space.

The `probe` form of the predictor (Hewitt & Manning): D̂_ij = |B(h_i − h_j)|², B of rank r. With
z = B h it is computed as ‖z_i‖² + ‖z_j‖² − 2 z_i·z_j, one B×T×T product and never a B×T×T×r tensor,
then clamped at 0 (rounding can dip below). Unlike the `heads` form it has no notion of separate trees:
cross-tree pairs get whatever the probe says, and the loss (``loss.probe_loss``) pushes them at least as
far apart as the bias can tell (a hinge max(0, far − D̂), far = the bias's max_distance; design §3).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from parserfree.encoder.conventions import PAD_DISTANCE
from parserfree.predictor.tree_ops import pair_mask


class StructuralProbe(nn.Module):
    """D̂_ij = |B(h_i − h_j)|² with B: d_model → rank (no bias)."""

    def __init__(self, d_model: int, rank: int = 64) -> None:
        super().__init__()
        self.proj = nn.Linear(d_model, rank, bias=False)  # B

    def forward(self, h: Tensor, mask: Tensor) -> Tensor:
        """h (B×T×d), mask (B×T bool) → D̂ (B×T×T float, ≥ 0 on word pairs, PAD_DISTANCE on pad pairs)."""
        z = self.proj(h)  # B×T×r
        norms = (z * z).sum(dim=-1)  # B×T, ‖z_i‖²
        gram = torch.matmul(z, z.transpose(1, 2))  # B×T×T, z_i·z_j
        distances = torch.clamp(norms.unsqueeze(2) + norms.unsqueeze(1) - 2.0 * gram, min=0.0)
        return torch.where(pair_mask(mask), distances, torch.full_like(distances, PAD_DISTANCE))
