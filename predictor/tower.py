"""Parser tower: the predictor's own embeddings and Transformer layers — a parser of its own inside the model.

Without a tower the predictor reads h_k, the output of the shared encoder's unbiased layers 1..k, and with
``encoder.bias_all_layers`` those layers run twice (once unbiased for the predictor, once biased). With a
tower (``predictor.tower_layers`` ≥ 1, ``encoder.predictor_layer: 0``) the predictor embeds the same word and
feature ids in tables of its own width (``encoder/embeddings.py``) and runs its own unbiased ``EncoderLayer``
stack (the encoder's layer, padding mask only), while every encoder layer is biased by D̂ in a single pass.
Nothing is shared with the task layers but the vocabulary, so one pre-trained tower (``training.init_from``)
serves task encoders of any width and depth.
"""

from __future__ import annotations

from torch import Tensor, nn

from parserfree.encoder.config import EncoderConfig
from parserfree.encoder.embeddings import Embedded
from parserfree.encoder.layer import layer_stack, run_unbiased
from parserfree.predictor.config import TowerShape


class ParserTower(Embedded, nn.Module):
    """word_ids B×T, feature_ids B×T×F, mask B×T → its own embeddings → ``layers`` unbiased encoder layers →
    B×T×d_tower (the raw residual stream; the predictor normalises it)."""

    def __init__(self, encoder: EncoderConfig, shape: TowerShape) -> None:
        super().__init__()
        self.init_embeddings_of(encoder, shape.d_model)
        self.layers = layer_stack(shape.layers, shape.d_model, shape.n_heads, shape.d_ff, encoder.dropout)

    def forward(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor) -> Tensor:
        """→ B×T×d_tower."""
        return run_unbiased(self.layers, self.embed(word_ids, feature_ids), mask)
