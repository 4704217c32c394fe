"""Token embeddings: word ids and hashed feature ids → the input states of a Transformer stack.

The one input layer of the project, used by the syntax encoder (``encoder/model.py``) and by a parser tower
(``predictor/tower.py``), which embeds the same ids in tables of its own width: a word table, a feature table
summed over a word's F feature ids and a learned position table, each N(0, 0.02)-initialised with the pad
rows (id 0) zero, then dropout:  h_0 = dropout(E_word[w] + Σ_f E_feat[f] + E_pos[t]).

The syntax encoder may also read static word vectors (``encoder.static_vectors``): a frozen table V with one
row per word id, like E_word (a buffer, not a parameter: no optimiser moves it; checkpoints and the ONNX graph
carry it), stored in fp16 and read in the model's dtype, through a learned projection P, zero-initialised and
built without drawing from the random stream, so a model starts exactly as it would without vectors:
h_0 = dropout(E_word[w] + Σ_f E_feat[f] + E_pos[t] + P·V[w]). The table is zero until it is filled from the
vectors' package where the vocabulary is known (``distill/data/static_vectors.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import torch
from torch import Tensor, nn

if TYPE_CHECKING:
    from .config import EncoderConfig

STATIC_DTYPE = torch.float16  # the static vector table's storage: half the checkpoint and graph bytes of fp32


class Embedded:
    """Mixin for an ``nn.Module`` with token embeddings (``word_embedding``, ``feature_embedding``,
    ``position_embedding``, ``embedding_dropout``; optionally ``static_vectors`` and ``static_projection``):
    ``init_embeddings`` builds them, ``embed`` applies them."""

    static_vectors: Tensor | None
    static_projection: nn.Linear | None

    def init_embeddings(
        self,
        vocab_size: int,
        n_feature_buckets: int,
        max_len: int,
        n_features: int,
        width: int,
        dropout: float,
        static_width: int = 0,
    ) -> None:
        """Build the three tables of ``width`` columns (call after ``nn.Module.__init__``) and, with
        ``static_width`` > 0, a zero static vector table of that many columns and its projection to ``width``."""
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
        vectors = torch.zeros(vocab_size, static_width, dtype=STATIC_DTYPE) if static_width else None
        cast(nn.Module, self).register_buffer("static_vectors", vectors)  # persistent: in the state dict
        self.static_projection = None
        if static_width:
            with torch.random.fork_rng(devices=[]):  # draws nothing: every other weight is as without vectors
                self.static_projection = nn.Linear(static_width, width)
            nn.init.zeros_(self.static_projection.weight)
            nn.init.zeros_(self.static_projection.bias)

    def init_embeddings_of(self, config: EncoderConfig, width: int, static_width: int = 0) -> None:
        """``init_embeddings`` with the vocabulary, length and dropout of an encoder config."""
        self.init_embeddings(
            config.vocab_size,
            config.n_feature_buckets,
            config.max_len,
            config.n_features,
            width,
            config.dropout,
            static_width,
        )

    def set_static_vectors(self, table: Tensor) -> None:
        """Fill the static vector table (vocab_size × static_width, row i = word id i)."""
        if self.static_vectors is None:
            raise ValueError("this model has no static vector table (encoder.static_vectors is null)")
        if tuple(table.shape) != tuple(self.static_vectors.shape):
            raise ValueError(
                f"static vector table of shape {tuple(table.shape)}, the model needs {tuple(self.static_vectors.shape)}"
            )
        with torch.no_grad():
            self.static_vectors.copy_(table.to(STATIC_DTYPE))

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
        if self.static_projection is not None and self.static_vectors is not None:
            h = h + self.static_projection(self.static_vectors[word_ids].to(h.dtype))
        return self.embedding_dropout(h)
