"""Parser tower: the predictor's own Transformer layers, so parsing gets capacity the task layers need not share.

Without a tower the predictor reads h_k, the output of the shared encoder's unbiased layers 1..k, and with
``encoder.bias_all_layers`` those layers run twice (once unbiased for the predictor, once biased). With a
tower (``predictor.tower_layers`` ≥ 1, ``encoder.predictor_layer: 0``) the predictor reads the shared
embeddings h_0 — through a linear projection when the tower's width differs from the encoder's — and its
own unbiased ``EncoderLayer`` stack (the encoder's layer, padding mask only), while every encoder layer is
biased by D̂ in a single pass. The shared part is then the embeddings alone, which is what a pre-trained
predictor hands to a task model (``training.init_from``).
"""

from __future__ import annotations

from torch import Tensor, nn

from parserfree.encoder.distance_bias import key_padding_bias
from parserfree.encoder.layer import EncoderLayer
from parserfree.predictor.config import TowerShape


class ParserTower(nn.Module):
    """h_0 (B×T×d) → [projection to the tower's width] → ``layers`` unbiased encoder layers → B×T×d_tower
    (the raw residual stream; the predictor normalises it)."""

    def __init__(self, d_model: int, shape: TowerShape, dropout: float = 0.0) -> None:
        super().__init__()
        self.projection = nn.Linear(d_model, shape.d_model) if shape.d_model != d_model else None
        self.layers = nn.ModuleList(EncoderLayer(shape.d_model, shape.n_heads, shape.d_ff, dropout)
                                    for _ in range(shape.layers))

    def forward(self, h: Tensor, mask: Tensor) -> Tensor:
        """h_0 B×T×d, mask B×T bool → B×T×d_tower."""
        if self.projection is not None:
            h = self.projection(h)
        padding = key_padding_bias(mask, h.dtype)  # B×1×1×T
        for layer in self.layers:
            h = layer(h, padding)
        return h
