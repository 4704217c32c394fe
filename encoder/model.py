"""The syntax-biased encoder, read top to bottom: embeddings → attention with the bias → layer → stack.

h_0 = dropout(E_word[w] + Σ_f E_feat[f] + E_pos[t] (+ P·V[w]));  layers 1..k run with the padding mask
only and give h_k, which the distance predictor reads;  the biased layers (all N from h_0 with
``bias_all_layers``, else k+1..N from h_k) add bias(D) to their attention scores;  h_N = LN(last layer).
The bias (``distance_bias.SyntaxBias``) is one module that every biased layer reads. Distances come in as
an argument, so the same weights run parser-fed (D from ``core.trees``), parser-free (D̂ from the
predictor) or without syntax (None).

``Encoder`` is the interface both encoders implement — this one over words and the pre-trained one
(``encoder/pretrained.py``) over its subwords — so nothing outside this package asks which it holds.
docs/design.md §2 walks the whole forward pass.
"""

from __future__ import annotations

import math
from typing import cast

import torch
from torch import Tensor, nn

from .config import EncoderConfig
from .distance_bias import SyntaxBias, key_padding_bias
from .errors import ParserfreeError
from .schema import ConfigError

STATIC_DTYPE = torch.float16  # the static vector table's storage: half the bytes of fp32


# --- embeddings ---------------------------------------------------------------------------------


class Embedded:
    """Mixin for an ``nn.Module`` with token embeddings, shared by the encoder and a parser tower
    (``predictor/distance_predictor.py``), which embeds the same ids in tables of its own width.

    h_0 = dropout(E_word[w] + Σ_f E_feat[f] + E_pos[t]): N(0, 0.02) tables, pad rows (id 0) zero. With
    static vectors, + P·V[w]: V is a frozen fp16 buffer (row i = word id i, filled where the vocabulary is
    known, ``distill/data/static_vectors.py``) and P a zero-initialised projection, so a model with vectors
    starts exactly as the same seed's model without.
    """

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
        ``static_width`` > 0, a zero static vector table and its projection to ``width``."""
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
            # Built without drawing from the random stream: every other weight is as without vectors.
            with torch.random.fork_rng(devices=[]):
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
            raise ConfigError("this model has no static vector table (encoder.static_vectors is null)")
        if tuple(table.shape) != tuple(self.static_vectors.shape):
            raise ConfigError(
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


# --- attention with the bias, the layer, the stack ----------------------------------------------


class BiasedSelfAttention(nn.Module):
    """Attention(x) = W_o · concat_h softmax(Q_h K_hᵀ / √d_head + bias_h) V_h.

    Written by hand — one fused QKV projection, reshapes sized from the input or −1 — because the library
    attention modules freeze the batch and length when exported to ONNX."""

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


class EncoderLayer(nn.Module):
    """Pre-LN block: x ← x + Dropout(Attention(LN(x), bias));  x ← x + Dropout(FF(LN(x))),
    FF = W₂·GELU(W₁·). The residual stream stays unnormalised, hence one final LayerNorm after the stack."""

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


# --- the interface, and the project's encoder ---------------------------------------------------


class Encoder(nn.Module):
    """What the model around an encoder reads: ``embed`` → ``lower_from`` (h_k) → ``upper`` (h_N), the
    positions' relation to words (``position_mask``, ``position_distances``, ``word_states``: here the
    identity, one position per word), ``width`` and ``first_biased_layer``. A subclass gives ``embed``,
    ``layers`` and ``run_layers``; the bias is added in one place, ``upper``."""

    config: EncoderConfig
    bias: SyntaxBias
    layers: nn.ModuleList  # the stack, in order
    reads_subwords = False  # whether positions are a tokenizer's subwords rather than words
    embedding_keys: tuple[str, ...] = ()  # the state-dict prefixes of what computes h_0 (its tables)

    @property
    def width(self) -> int:
        """d, the width of every state."""
        return self.config.d_model

    @property
    def first_biased_layer(self) -> int:
        """Index of the first layer that receives the bias: 0 with ``bias_all_layers``, else k."""
        return 0 if self.config.bias_all_layers else self.config.predictor_layer

    @property
    def word_table(self) -> Tensor | None:
        """The word embedding table V×d that a masked-word head scores against (None: no word table)."""
        return None

    def embed(self, word_ids: Tensor, feature_ids: Tensor) -> Tensor:
        """Ids B×T (B×T×F features) → h_0 B×T×d."""
        raise NotImplementedError

    def run_layers(self, layers: nn.ModuleList, h: Tensor, biases: list[Tensor]) -> Tensor:
        """``layers`` in order, each adding its own of ``biases`` (broadcastable to B×H×T×T) to its scores."""
        raise NotImplementedError

    def finish(self, h: Tensor) -> Tensor:
        """The last layer's states → h_N (a final LayerNorm for a pre-LN stack; here the identity)."""
        return h

    def load_pretrained(self, folder: str) -> None:
        """Read a pre-trained model's weights from ``folder`` (only a pre-trained encoder has them)."""
        raise ParserfreeError(f"{folder}: the project's own encoder starts from no pre-trained folder")

    def set_static_vectors(self, table: Tensor) -> None:
        """Fill the static vector table (only the project's encoder has one)."""
        raise ConfigError("this encoder has no static vector table (encoder.static_vectors)")

    def position_mask(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor) -> Tensor:
        """The positions attention may read, B×T: the words."""
        return mask

    def position_distances(self, distances: Tensor | None, feature_ids: Tensor) -> Tensor | None:
        """Word distances → position distances: the same."""
        return distances

    def word_states(self, h: Tensor, feature_ids: Tensor, mask: Tensor) -> Tensor:
        """Position states → word states: the same."""
        return h

    def lower_keys(self) -> tuple[str, ...]:
        """The state-dict prefixes (within the encoder) of what computes h_k: the embeddings and layers 1..k,
        the part a predictor pre-training trains and a task starts from."""
        names = {id(module): name for name, module in self.named_modules()}
        return self.embedding_keys + tuple(
            f"{names[id(layer)]}." for layer in self.layers[: self.config.predictor_layer]
        )

    def lower_from(self, h_0: Tensor, mask: Tensor) -> Tensor:
        """Layers 1..k with the padding mask only: h_0 B×T×d, mask B×T (positions) → h_k B×T×d."""
        k = self.config.predictor_layer
        return self.run_layers(self.layers[:k], h_0, [key_padding_bias(mask, h_0.dtype)] * k)

    def upper(self, h_0: Tensor, h_k: Tensor, mask: Tensor, distances: Tensor | None) -> Tensor:
        """The biased layers → h_N B×T×d: all N from h_0 with ``bias_all_layers`` (after the unbiased pass
        over 1..k that the predictor reads), else k+1..N from h_k. mask B×T (positions), distances B×T×T
        over positions (int64 or float; None → padding mask only)."""
        h = h_0 if self.config.bias_all_layers else h_k
        layers = self.layers[self.first_biased_layer :]
        bias = key_padding_bias(mask, h.dtype) if distances is None else self.bias(distances, mask)
        return self.finish(self.run_layers(layers, h, self.bias.for_layers(bias, len(layers))))

    def lower(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor) -> Tensor:
        """Word states of layer k (what the predictor reads), B×W×d."""
        positions = self.position_mask(word_ids, feature_ids, mask)
        return self.word_states(self.lower_from(self.embed(word_ids, feature_ids), positions), feature_ids, mask)

    def forward(
        self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor, distances: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """→ (h_N, h_k) over positions, both B×T×d."""
        positions = self.position_mask(word_ids, feature_ids, mask)
        h_0 = self.embed(word_ids, feature_ids)
        h_k = self.lower_from(h_0, positions)
        return self.upper(h_0, h_k, positions, self.position_distances(distances, feature_ids)), h_k


class SyntaxEncoder(Embedded, Encoder):
    """The project's encoder over words: ``Embedded`` tables, N pre-LN ``EncoderLayer``s, a final LayerNorm;
    ``bias`` is the one ``SyntaxBias`` every biased layer reads."""

    embedding_keys = (
        "word_embedding.",
        "feature_embedding.",
        "position_embedding.",
        "static_vectors",
        "static_projection.",
    )

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        config.validate()
        if config.vocab_size < 2:
            raise ConfigError(f"encoder.vocab_size={config.vocab_size}: the model needs the vocabulary's size (≥ 2)")
        self.config = config
        self.init_embeddings_of(config, config.d_model, config.static_width)
        self.layers = layer_stack(config.n_layers, config.d_model, config.n_heads, config.d_ff, config.dropout)
        self.bias = SyntaxBias(config.bias, config.n_heads, len(self.layers) - self.first_biased_layer)
        self.final_norm = nn.LayerNorm(config.d_model)

    @property
    def word_table(self) -> Tensor:
        return self.word_embedding.weight

    def run_layers(self, layers: nn.ModuleList, h: Tensor, biases: list[Tensor]) -> Tensor:
        for layer, bias in zip(layers, biases, strict=True):
            h = layer(h, bias)
        return h

    def finish(self, h: Tensor) -> Tensor:
        return self.final_norm(h)
