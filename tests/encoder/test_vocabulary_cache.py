"""The per-word-type cache of Vocabulary gives exactly the ids of the uncached definition, also once full."""

import numpy as np
import pytest

from parserfree.encoder import vocabulary
from parserfree.encoder.vocabulary import Vocabulary


def test_cached_batches_match_the_definition_after_the_cache_starts_over(monkeypatch):
    monkeypatch.setattr(vocabulary, "CACHE_SIZE", 3)
    vocab = Vocabulary.build([["the", "film", "is", "good"], ["the", "end"]], n_feature_buckets=64)
    batch = [["The", "film", "is", "GOOD", "!"], [], ["end", "the", "Zebra"]] * 2
    with pytest.warns(UserWarning, match="truncated"):
        word_ids, feature_ids, mask = vocab.encode_batch(batch, max_len=4)
    assert len(vocab._ids) <= 3
    assert word_ids.shape == (6, 4) and feature_ids.shape == (6, 4, 3) and mask.dtype == bool
    for b, words in enumerate(batch):
        n = min(len(words), 4)
        assert mask[b].tolist() == [True] * n + [False] * (4 - n)
        assert word_ids[b, :n].tolist() == [vocab.word_id(w) for w in words[:n]]
        assert feature_ids[b, :n].tolist() == [vocab.features(w) for w in words[:n]]
        assert not word_ids[b, n:].any() and not feature_ids[b, n:].any()
    assert np.array_equal(vocab.encode_batch([[]], max_len=4)[2], np.zeros((1, 1), dtype=bool))
