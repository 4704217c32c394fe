import json
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parserfree.encoder import PAD_ID, UNK_ID, Vocabulary, word_shape
from parserfree.encoder.vocabulary import VERSION, hash_feature

SENTENCES = [["the", "cat", "sat"], ["the", "dog", "sat"], ["a", "cat", "ran"], ["The", "bird"]]


def test_ids_are_frequency_then_alphabetical():
    vocab = Vocabulary.build(SENTENCES)
    # the ×3; cat, sat ×2 (alphabetical); then a, bird, dog, ran ×1 (alphabetical)
    assert vocab.words == ["<pad>", "<unk>", "the", "cat", "sat", "a", "bird", "dog", "ran"]
    assert len(vocab) == 9


def test_ids_do_not_depend_on_input_order():
    shuffled = SENTENCES[:]
    random.Random(3).shuffle(shuffled)
    assert Vocabulary.build(shuffled).words == Vocabulary.build(SENTENCES).words


def test_min_freq_and_max_size_cut():
    assert Vocabulary.build(SENTENCES, min_freq=2).words == ["<pad>", "<unk>", "the", "cat", "sat"]
    assert Vocabulary.build(SENTENCES, max_size=4).words == ["<pad>", "<unk>", "the", "cat"]


def test_literal_special_tokens_are_not_padding():
    vocab = Vocabulary.build([["<pad>", "<unk>", "x"]])
    assert vocab.words == ["<pad>", "<unk>", "x"]
    ids, _ = vocab.encode(["<pad>", "x"])
    assert ids == [UNK_ID, 2]


def test_unknown_words_get_unk_but_distinct_features():
    vocab = Vocabulary.build(SENTENCES)
    ids, feats = vocab.encode(["zebra", "Quokkas"])
    assert ids == [UNK_ID, UNK_ID]
    assert feats[0] != feats[1]
    assert all(1 <= f < vocab.n_feature_buckets for row in feats for f in row)
    assert len(feats[0]) == vocab.n_features == 3


def test_hash_is_stable_across_processes():
    # Pinned CRC32 bucket: Python's hash() would change with PYTHONHASHSEED.
    assert hash_feature("p:the", 4096) == 627  # zlib.crc32(b"p:the") % 4095 + 1
    assert Vocabulary.build([]).features("The") == [hash_feature(f, 4096) for f in ("p:the", "s:the", "w:Xxx")]


@pytest.mark.parametrize(
    ("word", "shape"),
    [("Apple", "Xxxxx"), ("Applesauce", "Xxxxx"), ("1999", "dddd"), ("U.S.", "X.X."), ("e-mail", "x-xxxx"), ("", "")],
)
def test_word_shape_like_spacy(word, shape):
    assert word_shape(word) == shape


def test_encode_batch_pads_and_masks():
    vocab = Vocabulary.build(SENTENCES)
    word_ids, feature_ids, mask = vocab.encode_batch([["the", "cat"], [], ["a", "dog", "sat"]], max_len=8)
    assert word_ids.shape == (3, 3) and word_ids.dtype == np.int64
    assert feature_ids.shape == (3, 3, 3) and feature_ids.dtype == np.int64
    assert mask.dtype == bool
    assert mask.tolist() == [[True, True, False], [False, False, False], [True, True, True]]
    assert (word_ids[~mask] == PAD_ID).all() and (feature_ids[~mask] == 0).all()
    assert (feature_ids[mask] > 0).all()


def test_all_empty_batch_gives_one_pad_column():
    word_ids, feature_ids, mask = Vocabulary.build(SENTENCES).encode_batch([[]], max_len=8)
    assert word_ids.shape == (1, 1) and not mask.any()


def test_truncation_warns_with_the_lengths():
    vocab = Vocabulary.build(SENTENCES)
    with pytest.warns(UserWarning, match=r"max_len=4.*#1: 6 words"):
        word_ids, _, mask = vocab.encode_batch([["the"], ["the"] * 6], max_len=4)
    assert word_ids.shape == (2, 4) and mask[1].all()


def test_save_load_round_trip(tmp_path):
    vocab = Vocabulary.build(SENTENCES, n_feature_buckets=128)
    path = tmp_path / "vocab.json"
    vocab.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["vocab.json"]  # no temporary file left
    loaded = Vocabulary.load(path)
    assert loaded.words == vocab.words and loaded.n_feature_buckets == 128
    batch = [["The", "cat", "zebra"], ["dog"]]
    for a, b in zip(vocab.encode_batch(batch, 8), loaded.encode_batch(batch, 8)):
        np.testing.assert_array_equal(a, b)


def test_newer_version_is_refused(tmp_path):
    path = tmp_path / "vocab.json"
    Vocabulary.build(SENTENCES).save(path)
    data = json.loads(path.read_text())
    data["version"] = VERSION + 1
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=f"version {VERSION + 1}.*upgrade"):
        Vocabulary.load(path)


def test_foreign_json_is_refused(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"words": []}))
    with pytest.raises(ValueError, match="not a parserfree vocabulary"):
        Vocabulary.load(path)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=6))
def test_encode_is_total_and_in_range(words):
    vocab = Vocabulary.build(SENTENCES, n_feature_buckets=16)
    ids, feats = vocab.encode(words)
    assert all(0 < i < len(vocab) for i in ids)
    assert all(1 <= f < 16 for row in feats for f in row)
