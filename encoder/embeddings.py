"""Token embeddings: word ids and hashed feature ids → the input states of a Transformer stack.

The one input layer of the project, used by the syntax encoder (``encoder/model.py``) and by a parser tower
(``predictor/tower.py``), which embeds the same ids in tables of its own width: a word table, a feature table
summed over a word's F feature ids and a learned position table, each N(0, 0.02)-initialised with the pad
rows (id 0) zero, then dropout:  h_0 = dropout(E_word[w] + Σ_f E_feat[f] + E_pos[t]).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class Embedded:
    """Mixin for an ``nn.Module`` with token embeddings (``word_embedding``, ``feature_embedding``,
    ``position_embedding``, ``embedding_dropout``): ``init_embeddings`` builds them, ``embed`` applies them."""

    def init_embeddings(
        self, vocab_size: int, n_feature_buckets: int, max_len: int, n_features: int, width: int, dropout: float
    ) -> None:
        """Build the three tables of ``width`` columns (call after ``nn.Module.__init__``)."""
        self.max_len, self.n_features = max_len, n_features
        self.word_embedding = nn.Embedding(vocab_size, width, padding_idx=0)
        self.feature_embedding = nn.Embedding(n_feature_buckets, width, padding_idx=0)
        self.position_embedding = nn.Embedding(max_len, width)
        for table in (self.word_embedding, self.feature_embedding, self.position_embedding):
            nn.init.normal_(table.weight, std=0.02)
        with torch.no_grad():
            self.word_embedding.weight[0].zero_()
            self.feature_embedding.weight[0].zero_()
        self.embedding_dropout = nn.Dropout(dropout)

    def embed(self, word_ids: Tensor, feature_ids: Tensor) -> Tensor:
        """word_ids B×T, feature_ids B×T×F (int64; 0 = pad) → B×T×width."""
        length = word_ids.size(1)
        if not torch.jit.is_tracing():  # Python checks; a traced graph keeps none
            if length > self.max_len:
                raise ValueError(f"input length {length} exceeds encoder.max_len={self.max_len}")
            if feature_ids.size(-1) != self.n_features:
                raise ValueError(
                    f"feature_ids has {feature_ids.size(-1)} columns, encoder.n_features={self.n_features}"
                )
        positions = self.position_embedding.weight[:length]  # T×width
        h = self.word_embedding(word_ids) + self.feature_embedding(feature_ids).sum(dim=-2) + positions
        return self.embedding_dropout(h)
