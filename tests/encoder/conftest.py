"""Tiny fixtures for the encoder tests: a small config and padded batches with chain-tree distances."""

from __future__ import annotations

import pytest
import torch

from parserfree.encoder import BiasConfig, EncoderConfig

from tiny_models import tiny_encoder

VOCAB, BUCKETS = 30, 64


def tiny_config(**bias: object) -> EncoderConfig:
    """2 layers, d=16, 2 heads; predictor_layer=1 and bias_all_layers off, so layer 1 runs unbiased and
    layer 2 biased (the split these tests check; not the default, which biases every layer)."""
    return tiny_encoder(vocab_size=VOCAB, n_feature_buckets=BUCKETS, dropout=0.1, max_len=12, bias=BiasConfig(**bias))


def make_batch(lengths: list[int], width: int, seed: int = 0):
    """Random ids for sentences of the given lengths, padded to `width`; distances of a chain tree
    (|i − j|) for real pairs, −1 for every pair touching padding. Returns (word_ids, feature_ids, mask, D)."""
    gen = torch.Generator().manual_seed(seed)
    batch = len(lengths)
    mask = torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]  # B×T
    word_ids = torch.randint(2, VOCAB, (batch, width), generator=gen) * mask
    feature_ids = torch.randint(1, BUCKETS, (batch, width, 3), generator=gen) * mask[..., None]
    idx = torch.arange(width)
    chain = (idx[:, None] - idx[None, :]).abs().expand(batch, width, width)
    pair = mask[:, :, None] & mask[:, None, :]
    distances = torch.where(pair, chain, torch.full_like(chain, -1))  # B×T×T
    return word_ids, feature_ids, mask, distances


@pytest.fixture
def config_factory():
    return tiny_config


@pytest.fixture
def batch_factory():
    return make_batch
