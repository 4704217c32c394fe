"""Syntax encoder: embeddings, an unbiased pass over layers 1..k for the predictor, then the biased layers.

This is the model at the centre of the data flow. Word ids and hashed feature ids (from
`encoder.vocabulary`) are embedded and summed with learned positions (h_0); layers 1..k
(`predictor_layer`) run with the padding mask only and give h_k, which the distance predictor reads.
By default (`bias_all_layers: true`) the whole stack 1..N then runs again from h_0 with the syntax bias,
so layers 1..k run twice; with `bias_all_layers: false` only layers k+1..N run, biased, from h_k. Every
biased layer reads the one shared `SyntaxBias` module (a single table for all of them, the method's
choice). Distances come in as an argument, so the same weights run parser-fed (integer D from
`core.trees`) or parser-free (D̂ from the predictor), or without syntax (distances=None).
docs/design.md §2 ("The parser-free graph, call by call") walks the whole forward pass.
"""

from __future__ import annotations

from torch import Tensor, nn

from .config import EncoderConfig
from .distance_bias import SyntaxBias, key_padding_bias
from .embeddings import Embedded
from .layer import layer_stack, run_unbiased
from .schema import ConfigError


class SyntaxEncoder(Embedded, nn.Module):
    """h_0 = E_word[w] + Σ_f E_feat[f] + E_pos[t] (+ P·V[w] with static vectors);  h_k = layers 1..k(h_0);
    h_N = LN(layers k+1..N(h_k, bias(D))).  The `bias` attribute is the one `SyntaxBias` they share."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        config.validate()
        if config.vocab_size < 2:
            raise ConfigError(f"encoder.vocab_size={config.vocab_size}: the model needs the vocabulary's size (≥ 2)")
        self.config = config
        self.init_embeddings_of(config, config.d_model, config.static_width)
        self.layers = layer_stack(config.n_layers, config.d_model, config.n_heads, config.d_ff, config.dropout)
        self.bias = SyntaxBias(config.bias, config.n_heads)
        self.final_norm = nn.LayerNorm(config.d_model)

    def lower(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor) -> Tensor:
        """Embeddings then layers 1..k without syntax bias → h_k B×T×d (residual stream, not normalised)."""
        return self.lower_from(self.embed(word_ids, feature_ids), mask)

    def lower_from(self, h_0: Tensor, mask: Tensor) -> Tensor:
        """Layers 1..k without syntax bias on embeddings h_0 B×T×d → h_k B×T×d."""
        return run_unbiased(self.layers[: self.config.predictor_layer], h_0, mask)

    def upper(self, h_0: Tensor, h_k: Tensor, mask: Tensor, distances: Tensor | None) -> Tensor:
        """The biased layers → h_N B×T×d: all N from the embeddings h_0 with ``bias_all_layers`` (after the
        unbiased pass over 1..k that the predictor reads), else layers k+1..N from h_k. The one place that
        choice is made. mask B×T, distances B×T×T (int64 or float; None → padding mask only)."""
        h = h_0 if self.config.bias_all_layers else h_k
        bias = key_padding_bias(mask, h.dtype) if distances is None else self.bias(distances, mask)
        for layer in self.layers[self.first_biased_layer :]:
            h = layer(h, bias)
        return self.final_norm(h)

    @property
    def first_biased_layer(self) -> int:
        """Index of the first layer that receives the bias: 0 with ``bias_all_layers``, else k."""
        return 0 if self.config.bias_all_layers else self.config.predictor_layer

    # The positions the layers run over are the words themselves; a pre-trained encoder's are its subwords
    # (encoder/pretrained.py), and these three say how words map to positions: here, one to one.
    def position_mask(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor) -> Tensor:
        """The positions attention may read: the words (B×T)."""
        return mask

    def position_distances(self, distances: Tensor | None, feature_ids: Tensor) -> Tensor | None:
        """Word distances are position distances."""
        return distances

    def word_states(self, h: Tensor, feature_ids: Tensor, mask: Tensor) -> Tensor:
        """Position states are word states."""
        return h

    def forward(
        self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor, distances: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """→ (h_N, h_k), both B×T×d; h_N is final-LayerNorm'd, h_k is the raw output of layer k."""
        h_0 = self.embed(word_ids, feature_ids)
        h_k = self.lower_from(h_0, mask)
        return self.upper(h_0, h_k, mask, distances), h_k
