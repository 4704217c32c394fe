"""Encoder configuration: the named, validated settings of the syntax-biased Transformer.

The record that fixes every shape and option of `encoder/`: the vocabulary sizes the embeddings are
built from, the layer stack, where the distance predictor taps the stack (`predictor_layer`) and how tree
distances become an attention bias (`BiasConfig`). Both are sections of the one config schema
(`encoder.schema`): `from_dict`/`to_dict` move them to and from YAML and checkpoints, and `validate()`
rejects impossible values naming the key (``encoder.n_heads=3 must divide encoder.d_model=128``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from .schema import ConfigError, check_choice, check_int, check_number, from_settings, to_settings

BIAS_MODES = ("learned", "fixed_decay", "hard_mask", "none")
# static word vectors the encoder can read (``encoder.static_vectors``) → their width; the tables are filled
# from the vectors' package where the vocabulary is known (``distill/data/static_vectors.py``)
STATIC_VECTOR_WIDTHS = {"en_core_web_md": 300}


@dataclass
class BiasConfig:
    """How a distance matrix becomes an additive attention bias (see `encoder.distance_bias`).

    Each field's meaning is its docstring (what ``parserfree config`` and docs/config.md show). Distances
    above max_distance, and pairs of different sentences, share the last bucket; with mode ``none`` the
    padding mask still applies.
    """

    mode: str = "learned"
    """How distances become a bias: learned (a table), fixed_decay (−α·d), hard_mask or none."""
    max_distance: int = 10
    """Distances are clamped to 0..max_distance (about 5 suits very short texts, 15–20 long ones)."""
    per_head: bool = False
    """One table column per attention head instead of one table shared by all heads."""
    per_layer: bool = False
    """One table per biased layer instead of one table every biased layer reads (mode learned)."""
    learned_scale: bool = True
    """A learned global multiplier (initialised to 1) on the learned table."""
    log_buckets_from: int | None = None
    """If set, distances above it share log-spaced buckets up to max_distance (T5-style); null: one per distance."""
    decay_alpha: float = 0.5
    """fixed_decay: the slope α of the bias −α·min(d, max_distance)."""
    learn_alpha: bool = True
    """fixed_decay: α is learned (from decay_alpha) instead of fixed."""
    hard_mask_k: int = 1
    """hard_mask: only pairs at most this many tree steps apart are visible."""
    zero_init: bool = True
    """Start the table at zero, so training starts from a plain Transformer."""
    prior_slope: float = 0.0
    """Add −prior_slope·d to the table's start (a prior shape: near words first, a decay in distance) —
    e.g. 0.5 for a table that starts at 0 at distance 0 and −5 at 10; 0: no prior."""

    def validate(self, section: str = "encoder.bias") -> None:
        """Raise ConfigError naming the first impossible field."""
        check_choice(f"{section}.mode", self.mode, BIAS_MODES)
        check_int(f"{section}.max_distance", self.max_distance, 1)
        for name in ("per_head", "per_layer", "learned_scale", "learn_alpha", "zero_init"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{section}.{name}={getattr(self, name)!r} must be true or false")
        if self.log_buckets_from is not None:
            check_int(f"{section}.log_buckets_from", self.log_buckets_from, 1)
            if self.log_buckets_from >= self.max_distance:
                raise ConfigError(
                    f"{section}.log_buckets_from={self.log_buckets_from} must be below "
                    f"{section}.max_distance={self.max_distance}"
                )
        check_number(f"{section}.decay_alpha", self.decay_alpha, low=0)
        check_number(f"{section}.prior_slope", self.prior_slope, low=0)
        check_int(f"{section}.hard_mask_k", self.hard_mask_k, 0)

    @classmethod
    def from_dict(cls, data: dict[str, Any], section: str = "encoder.bias") -> BiasConfig:
        """Build from a plain dict (unknown keys and wrong types named) and validate."""
        return from_settings(cls, data, section)

    def to_dict(self) -> dict[str, Any]:
        return to_settings(self)


@dataclass
class EncoderConfig:
    """Shapes and options of the encoder (``encoder.model.build_encoder``: the project's or a pre-trained one).

    Layers 1..predictor_layer run without bias (their output h_k feeds the distance predictor);
    layers predictor_layer+1..n_layers receive the syntax bias. predictor_layer = 0 biases every layer.
    With bias_all_layers (the default) every layer receives the bias even with a predictor: layers 1..k run
    once without bias (the predictor reads their h_k) and again, with the bias, as the start of the biased
    stack (docs/design.md §5). Each field's meaning is its docstring.
    """

    vocab_size: int = 0
    """Rows of the word embedding; 0: taken from the vocabulary when the model is built."""
    n_features: int = 3
    """Hashed sub-word features per word (3-letter prefix, suffix, shape); must match the vocabulary."""
    n_feature_buckets: int = 4096
    """Hash buckets of the sub-word features; must equal vocab.n_feature_buckets."""
    d_model: int = 128
    """Width of every layer."""
    n_heads: int = 4
    """Attention heads per layer (must divide d_model)."""
    n_layers: int = 4
    """Transformer layers N."""
    d_ff: int = 512
    """Width of each layer's feed-forward block."""
    dropout: float = 0.1
    """Dropout in embeddings, attention, feed-forward blocks and the task head."""
    max_len: int = 256
    """Longest input in words; longer texts are truncated."""
    predictor_layer: int = 2
    """k: layers 1..k run unbiased and the predictor reads their output h_k (0: every layer biased, no predictor)."""
    bias_all_layers: bool = True
    """Bias every layer: layers 1..k run once unbiased (for the predictor), then the whole stack biased."""
    static_vectors: str | None = None
    """Frozen static word vectors added to the embeddings through a learned projection (en_core_web_md: spaCy's 300-d md vectors); null: none."""
    ngram_buckets: int = 0
    """Hash buckets of the task head's linear term over word pairs, beside one weight per word (a bag of 1- and 2-grams trained with the encoder, zero at the start); 0: no such term."""
    bias: BiasConfig = field(default_factory=BiasConfig)
    """How distances become the attention bias."""
    pretrained: str | None = None
    """A pre-trained Hugging Face encoder to start from, its own layers biased: builtin:minilm-l6, or a local BERT, RoBERTa or DistilBERT folder (config.json, model.safetensors, tokenizer.json); its sizes replace d_model, n_heads, n_layers, d_ff and vocab_size, its tokenizer the vocabulary; null: the project's own encoder."""
    architecture: dict[str, Any] | None = None
    """The pre-trained encoder's config.json, read from its folder when a run starts (set by the run, not by hand; null: the project's own encoder, or not read yet)."""

    def validate(self, section: str = "encoder") -> None:
        """Raise ConfigError naming the first impossible field (vocab_size 0 means "not known yet")."""
        check_int(f"{section}.vocab_size", self.vocab_size, 0)
        if self.vocab_size == 1:
            raise ConfigError(f"{section}.vocab_size=1 must be 0 (from the vocabulary) or ≥ 2")
        check_int(f"{section}.n_features", self.n_features, 0)
        check_int(f"{section}.n_feature_buckets", self.n_feature_buckets, 2)
        check_int(f"{section}.d_model", self.d_model, 1)
        check_int(f"{section}.n_heads", self.n_heads, 1)
        if self.d_model % self.n_heads:
            raise ConfigError(f"{section}.n_heads={self.n_heads} must divide {section}.d_model={self.d_model}")
        check_int(f"{section}.n_layers", self.n_layers, 1)
        check_int(f"{section}.d_ff", self.d_ff, 1)
        check_number(f"{section}.dropout", self.dropout, low=0, high=1, high_open=True)
        check_int(f"{section}.max_len", self.max_len, 1)
        check_int(f"{section}.predictor_layer", self.predictor_layer, 0)
        if self.predictor_layer >= self.n_layers and not (
            self.pretrained and self.vocab_size == 0
        ):  # sizes not read yet
            raise ConfigError(
                f"{section}.predictor_layer={self.predictor_layer} must be below "
                f"{section}.n_layers={self.n_layers} (at least one layer must receive the bias)"
            )
        if not isinstance(self.bias_all_layers, bool):
            raise ConfigError(f"{section}.bias_all_layers={self.bias_all_layers!r} must be true or false")
        if self.static_vectors is not None and self.static_vectors not in STATIC_VECTOR_WIDTHS:
            raise ConfigError(
                f"{section}.static_vectors={self.static_vectors!r} must be null or one of {', '.join(STATIC_VECTOR_WIDTHS)}"
            )
        check_int(f"{section}.ngram_buckets", self.ngram_buckets, 0)
        if self.pretrained is not None:
            if not isinstance(self.pretrained, str) or not self.pretrained.strip():
                raise ConfigError(f"{section}.pretrained={self.pretrained!r} must name a model folder or builtin:NAME")
            for name, off in (("static_vectors", None), ("ngram_buckets", 0)):
                if getattr(self, name) != off:
                    raise ConfigError(
                        f"{section}.{name}={getattr(self, name)!r} reads the project's word vocabulary, which a "
                        f"pre-trained encoder ({section}.pretrained={self.pretrained}) does not have"
                    )
        if self.architecture is not None and not self.pretrained:
            raise ConfigError(
                f"{section}.architecture is the config.json of {section}.pretrained, which is null: set neither"
            )
        if not isinstance(self.bias, BiasConfig):
            raise ConfigError(f"{section}.bias must be a BiasConfig, got {type(self.bias).__name__}")
        self.bias.validate(f"{section}.bias")

    @classmethod
    def from_dict(cls, data: dict[str, Any], section: str = "encoder") -> EncoderConfig:
        """Build from a plain (possibly nested) dict (unknown keys and wrong types named) and validate."""
        return from_settings(cls, data, section)

    def with_architecture(self, architecture: dict[str, Any] | None) -> EncoderConfig:
        """A copy holding a pre-trained model's config.json as ``architecture`` (None: this config)."""
        return self if architecture is None else dataclasses.replace(self, architecture=dict(architecture))

    @property
    def static_width(self) -> int:
        """Columns of the static vector table (0: no static vectors)."""
        return STATIC_VECTOR_WIDTHS[self.static_vectors] if self.static_vectors else 0

    def to_dict(self) -> dict[str, Any]:
        return to_settings(self)
