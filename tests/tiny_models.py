"""Small models for tests, written once: an encoder config whose every field a test may change by name.

The defaults are the smallest encoder the tests share: 2 layers of width 16 with 2 heads, a 40-word
vocabulary, 16 positions, the predictor on h_1, and the bias on layer 2 only (``bias_all_layers`` off, so
the unbiased and biased layers can be told apart), no dropout.
"""

from __future__ import annotations

from parserfree.encoder import EncoderConfig

TINY = {
    "vocab_size": 40,
    "n_feature_buckets": 32,
    "d_model": 16,
    "n_heads": 2,
    "n_layers": 2,
    "d_ff": 32,
    "dropout": 0.0,
    "max_len": 16,
    "predictor_layer": 1,
    "bias_all_layers": False,
}


def tiny_encoder(**changes) -> EncoderConfig:
    """``EncoderConfig`` of the tiny defaults with ``changes`` (any of its fields) applied."""
    return EncoderConfig(**{**TINY, **changes})
