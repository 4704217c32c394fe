"""Encoder layer: one pre-LayerNorm Transformer block built on `BiasedSelfAttention`.

In the data flow the encoder stacks N of these; each receives the residual stream B×T×d and an
additive attention bias (padding only in layers 1..k, padding + syntax bias in layers k+1..N). Pre-LN
(normalise, transform, add back) keeps the residual stream unnormalised, so the encoder applies one final
LayerNorm after the last layer.
"""

from __future__ import annotations

from torch import Tensor, nn

from .attention import BiasedSelfAttention
from .distance_bias import key_padding_bias


class EncoderLayer(nn.Module):
    """x ← x + Dropout(Attention(LN(x), bias));  x ← x + Dropout(FF(LN(x))),  FF = W₂·GELU(W₁·)."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.attn_norm = nn.LayerNorm(d_model)
        self.attention = BiasedSelfAttention(d_model, n_heads, dropout)
        self.ff_norm = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(
            nn.Linear(d_model, d_ff), nn.GELU(), nn.Dropout(dropout), nn.Linear(d_ff, d_model)
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, bias: Tensor) -> Tensor:
        """x B×T×d, bias broadcastable to B×H×T×T → B×T×d."""
        x = x + self.dropout(self.attention(self.attn_norm(x), bias))
        return x + self.dropout(self.feed_forward(self.ff_norm(x)))


def layer_stack(n_layers: int, d_model: int, n_heads: int, d_ff: int, dropout: float) -> nn.ModuleList:
    """``n_layers`` encoder layers of one shape (the encoder's stack, a parser tower's)."""
    return nn.ModuleList(EncoderLayer(d_model, n_heads, d_ff, dropout) for _ in range(n_layers))


def run_unbiased(layers: nn.ModuleList, h: Tensor, mask: Tensor) -> Tensor:
    """Layers with the padding mask only (no syntax bias): h B×T×d, mask B×T → B×T×d."""
    padding = key_padding_bias(mask, h.dtype)  # B×1×1×T
    for layer in layers:
        h = layer(h, padding)
    return h
