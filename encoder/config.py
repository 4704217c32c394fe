"""Encoder configuration: the named, validated settings of the syntax-biased Transformer.

In the data flow this is the record that fixes every shape and option of `encoder/`: the vocabulary
sizes the embeddings are built from, the layer stack, where the distance predictor taps the stack
(`predictor_layer`) and how tree distances become an attention bias (`BiasConfig`). Configs are plain
dataclasses; `from_dict`/`to_dict` move them to and from the experiment files under `configs/`, and
`validate()` rejects impossible values with an error that names the offending field
(``encoder.n_heads=3 must divide encoder.d_model=128``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

BIAS_MODES = ("learned", "fixed_decay", "hard_mask", "none")


def _check_int(section: str, name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{section}.{name}={value!r} must be an integer")
    if value < minimum:
        raise ValueError(f"{section}.{name}={value} must be ≥ {minimum}")


def _check_bool(section: str, name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{section}.{name}={value!r} must be true or false")


def _check_number(section: str, name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{section}.{name}={value!r} must be a finite number")


def _reject_unknown(section: str, cls: type, data: dict[str, Any]) -> None:
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(
            f"unknown key(s) in {section}: {', '.join(unknown)}; expected some of {', '.join(sorted(known))}"
        )


@dataclass
class BiasConfig:
    """How a distance matrix becomes an additive attention bias (see `encoder.distance_bias`).

    mode: ``learned`` (one scalar per clamped distance), ``fixed_decay`` (−α·d), ``hard_mask`` (only pairs
    with d ≤ hard_mask_k visible) or ``none`` (no syntax; the padding mask still applies).
    max_distance: distances are clamped to 0..max_distance; larger ones (and cross-sentence pairs) share
    the last bucket. per_head: one table column per head instead of one table shared by all heads.
    learned_scale: a learned global multiplier (init 1) on the learned table. log_buckets_from: if set,
    distances above it get log-spaced buckets (T5-style) up to max_distance. zero_init: start the table
    at zero so the model starts as a plain Transformer.
    """

    mode: str = "learned"
    max_distance: int = 10
    per_head: bool = False
    learned_scale: bool = True
    log_buckets_from: int | None = None
    decay_alpha: float = 0.5
    learn_alpha: bool = True
    hard_mask_k: int = 1
    zero_init: bool = True

    def validate(self, section: str = "encoder.bias") -> None:
        """Raise ValueError naming the first impossible field."""
        if self.mode not in BIAS_MODES:
            raise ValueError(f"{section}.mode={self.mode!r} must be one of {', '.join(BIAS_MODES)}")
        _check_int(section, "max_distance", self.max_distance, 1)
        for name in ("per_head", "learned_scale", "learn_alpha", "zero_init"):
            _check_bool(section, name, getattr(self, name))
        if self.log_buckets_from is not None:
            _check_int(section, "log_buckets_from", self.log_buckets_from, 1)
            if self.log_buckets_from >= self.max_distance:
                raise ValueError(
                    f"{section}.log_buckets_from={self.log_buckets_from} must be below "
                    f"{section}.max_distance={self.max_distance}"
                )
        _check_number(section, "decay_alpha", self.decay_alpha)
        if self.decay_alpha < 0:
            raise ValueError(f"{section}.decay_alpha={self.decay_alpha} must be ≥ 0")
        _check_int(section, "hard_mask_k", self.hard_mask_k, 0)

    @classmethod
    def from_dict(cls, data: dict[str, Any], section: str = "encoder.bias") -> BiasConfig:
        """Build from a plain dict (unknown keys rejected by name) and validate."""
        _reject_unknown(section, cls, data)
        config = cls(**data)
        config.validate(section)
        return config

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class EncoderConfig:
    """Shapes and options of `SyntaxEncoder`.

    Layers 1..predictor_layer run without bias (their output h_k feeds the distance predictor);
    layers predictor_layer+1..n_layers receive the syntax bias. predictor_layer = 0 biases every layer.
    """

    vocab_size: int
    n_features: int = 3
    n_feature_buckets: int = 4096
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 512
    dropout: float = 0.1
    max_len: int = 256
    predictor_layer: int = 0
    bias: BiasConfig = field(default_factory=BiasConfig)

    def validate(self, section: str = "encoder") -> None:
        """Raise ValueError naming the first impossible field."""
        _check_int(section, "vocab_size", self.vocab_size, 2)
        _check_int(section, "n_features", self.n_features, 0)
        _check_int(section, "n_feature_buckets", self.n_feature_buckets, 2)
        _check_int(section, "d_model", self.d_model, 1)
        _check_int(section, "n_heads", self.n_heads, 1)
        if self.d_model % self.n_heads:
            raise ValueError(
                f"{section}.n_heads={self.n_heads} must divide {section}.d_model={self.d_model}"
            )
        _check_int(section, "n_layers", self.n_layers, 1)
        _check_int(section, "d_ff", self.d_ff, 1)
        _check_number(section, "dropout", self.dropout)
        if not 0 <= self.dropout < 1:
            raise ValueError(f"{section}.dropout={self.dropout} must be in [0, 1)")
        _check_int(section, "max_len", self.max_len, 1)
        _check_int(section, "predictor_layer", self.predictor_layer, 0)
        if self.predictor_layer >= self.n_layers:
            raise ValueError(
                f"{section}.predictor_layer={self.predictor_layer} must be below "
                f"{section}.n_layers={self.n_layers} (at least one layer must receive the bias)"
            )
        if not isinstance(self.bias, BiasConfig):
            raise ValueError(f"{section}.bias must be a BiasConfig, got {type(self.bias).__name__}")
        self.bias.validate(f"{section}.bias")

    @classmethod
    def from_dict(cls, data: dict[str, Any], section: str = "encoder") -> EncoderConfig:
        """Build from a plain (possibly nested) dict, rejecting unknown keys by name, and validate."""
        _reject_unknown(section, cls, data)
        values = dict(data)
        bias = values.get("bias", {})
        if isinstance(bias, dict):
            values["bias"] = BiasConfig.from_dict(bias, f"{section}.bias")
        if "vocab_size" not in values:
            raise ValueError(f"{section}.vocab_size is required")
        config = cls(**values)
        config.validate(section)
        return config

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
