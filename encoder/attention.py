"""Biased self-attention: multi-head scaled dot-product attention with an additive score bias.

In the data flow this is where the syntax bias acts: every encoder layer attends with
softmax(QKᵀ/√d_head + bias)·V, and the bias (from `encoder.distance_bias`) carries the padding mask and,
in layers k+1..N, the tree-distance preference. It is written by hand — one fused QKV projection,
reshapes whose sizes come from the input or −1 — because the library attention modules freeze the
batch and length when exported to ONNX.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class BiasedSelfAttention(nn.Module):
    """Attention(x) = W_o · concat_h softmax(Q_h K_hᵀ / √d_head + bias_h) V_h."""

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"n_heads={n_heads} must divide d_model={d_model}")
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, bias: Tensor) -> Tensor:
        """x B×T×d, bias B×1×1×T (padding only), B×1×T×T or B×H×T×T → B×T×d."""
        batch = x.size(0)
        qkv = self.qkv(x).reshape(batch, -1, 3, self.n_heads, self.head_dim)  # B×T×3×H×d_head
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each B×H×T×d_head
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim) + bias  # B×H×T×T
        weights = self.attn_dropout(torch.softmax(scores, dim=-1))
        context = (weights @ v).transpose(1, 2).reshape(batch, -1, self.n_heads * self.head_dim)  # B×T×d
        return self.out(context)
