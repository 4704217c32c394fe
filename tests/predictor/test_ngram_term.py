"""The task head's n-gram term (``encoder.ngram_buckets``): a linear bag of words and hashed word pairs beside
the encoder, zero at the start, blind to padding, sensitive to word order; a bad setting names its key."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from parserfree.encoder import EncoderConfig
from parserfree.encoder.schema import ConfigError
from parserfree.predictor import PredictorConfig
from parserfree.predictor.syntax_model import NgramTerm, SyntaxModel, TaskHead, pair_ids

BUCKETS = 97


def random_term(vocab_size: int, seed: int = 0) -> NgramTerm:
    term = NgramTerm(vocab_size, BUCKETS, 2)
    with torch.no_grad():
        term.table.weight.normal_(generator=torch.Generator().manual_seed(seed))
    return term


def test_a_model_with_the_term_starts_as_the_same_seeds_model_without(config_factory, batch_factory):
    """Zero-initialised and drawing no random numbers: every other weight and every output is the seed's."""
    config = config_factory()
    plain = SyntaxModel(config, PredictorConfig(), "binary", 2, seed=3).eval()
    wide = SyntaxModel(dataclasses.replace(config, ngram_buckets=BUCKETS), PredictorConfig(), "binary", 2, seed=3)
    wide.eval()
    theirs = plain.state_dict()
    assert all(torch.equal(v, theirs[k]) for k, v in wide.state_dict().items() if "ngrams" not in k)
    word_ids, feature_ids, mask, distances = batch_factory([5, 3, 8], 8)
    for source in ("none", "parser", "predicted"):
        a = plain(word_ids, feature_ids, mask, distances, source=source).task
        b = wide(word_ids, feature_ids, mask, distances, source=source).task
        assert torch.equal(a, b)


def test_padding_and_pairs_reaching_into_it_add_nothing(config_factory, batch_factory):
    term = random_term(config_factory().vocab_size)
    word_ids, _, mask, _ = batch_factory([4, 6, 1], 6)
    padded = torch.cat([word_ids, torch.zeros(3, 5, dtype=torch.long)], dim=1)
    padded_mask = torch.cat([mask, torch.zeros(3, 5, dtype=torch.bool)], dim=1)
    torch.testing.assert_close(term(padded, padded_mask), term(word_ids, mask))
    alone = term(word_ids[:1, :4], mask[:1, :4])  # the first text alone, without any padding
    torch.testing.assert_close(term(word_ids, mask)[:1], alone)
    one_word = word_ids[2, 0]
    torch.testing.assert_close(term(word_ids, mask)[2], term.table.weight[one_word])  # no pair in a one-word text


def test_word_order_changes_the_pairs_not_the_words(config_factory):
    vocab_size = config_factory().vocab_size
    term = random_term(vocab_size)
    ab, ba = torch.tensor([[5, 9, 7]]), torch.tensor([[9, 5, 7]])
    mask = torch.ones(1, 3, dtype=torch.bool)
    assert not torch.allclose(term(ab, mask), term(ba, mask))
    words_only = NgramTerm(vocab_size, BUCKETS, 2)
    with torch.no_grad():
        words_only.table.weight[:vocab_size] = term.table.weight[:vocab_size]  # pair rows stay zero
    torch.testing.assert_close(words_only(ab, mask), words_only(ba, mask))
    rows = pair_ids(torch.tensor([[5, 9], [9, 5]]), vocab_size, BUCKETS)
    assert rows.min() >= vocab_size and rows.max() < vocab_size + BUCKETS and rows[0, 0] != rows[1, 0]


def test_a_head_with_the_term_refuses_a_call_without_word_ids():
    head = TaskHead(8, "classification", 2, vocab_size=10, ngram_buckets=BUCKETS)
    with pytest.raises(ValueError, match="needs the word ids"):
        head(torch.zeros(1, 3, 8), torch.ones(1, 3, dtype=torch.bool))


def test_regression_gets_one_score_per_text(config_factory):
    head = TaskHead(8, "regression", vocab_size=config_factory().vocab_size, ngram_buckets=BUCKETS)
    word_ids, mask = torch.tensor([[3, 4, 0], [5, 0, 0]]), torch.tensor([[True, True, False], [True, False, False]])
    assert head(torch.zeros(2, 3, 8), mask, word_ids).shape == (2,)


@pytest.mark.parametrize("value", [-1, 2.5, "many"])
def test_a_bad_setting_is_one_line_naming_the_key(value):
    with pytest.raises(ConfigError, match=r"^encoder\.ngram_buckets="):
        EncoderConfig.from_dict({"vocab_size": 100, "ngram_buckets": value})
