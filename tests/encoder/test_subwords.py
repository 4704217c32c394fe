"""The subword vocabulary: every word keeps its index through the tokenizer, long inputs are cut at whole words,
and a damaged or foreign tokenizer is refused in one line."""

from __future__ import annotations

import json
import warnings

import pytest

from parserfree.encoder.subwords import NO_WORD, SubwordVocabulary, TokenizerError
from parserfree.encoder.vocabulary import Vocabulary, load_vocabulary, word_vocabulary

from tiny_models import tiny_bert_folder


@pytest.fixture(scope="module")
def vocab(tmp_path_factory):
    folder = tiny_bert_folder(tmp_path_factory.mktemp("m"), positions=16)
    return SubwordVocabulary.from_file(folder / "tokenizer.json", 16)


def test_each_subword_points_at_its_word_and_special_tokens_at_none(vocab):
    words = [["The", "cabinets", "don't", "close", "."], ["Dogs"]]
    ids, features, mask = vocab.encode_batch(words, 32)
    index = features[..., 0]
    assert mask.tolist() == [[True] * 5, [True] + [False] * 4]
    for b, sentence in enumerate(words):
        seen = [int(w) for w in index[b] if w != NO_WORD]
        assert sorted(set(seen)) == list(range(len(sentence)))  # every word has a subword
        assert seen == sorted(seen)  # in order
    assert ids[0, 0] == vocab.tokenizer.token_to_id("[CLS]") and index[0, 0] == NO_WORD
    last = int((ids[1] != vocab.pad_id).sum()) - 1
    assert ids[1, last] == vocab.tokenizer.token_to_id("[SEP]") and (index[1, last + 1 :] == NO_WORD).all()
    assert (index[0] == 2).sum() >= 3  # "don't": the tokenizer splits it, one word still


def test_a_word_the_normaliser_erases_gets_the_unknown_token(vocab):
    """A combining accent alone normalises to nothing: without a stand-in its word would have no subword
    and every later word would take its neighbour's index."""
    ids, features, mask = vocab.encode_batch([["the", "\u0301", "dog"]], 32)
    index = features[0, :, 0].tolist()
    assert index.count(1) == 1 and ids[0, index.index(1)] == vocab.unk_id
    assert mask[0].tolist() == [True, True, True]


def test_inputs_longer_than_the_positions_are_cut_at_whole_words(vocab):
    words = [["cabinets"] * 10]  # 10 words of several pieces each: more than 16 positions
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ids, features, mask = vocab.encode_batch(words, 32)
    assert ids.shape[1] <= 16 and any("16 positions" in str(w.message) for w in caught)
    kept = int(mask.sum())
    index = features[0, :, 0]
    for w in range(kept):  # every kept word has all its pieces
        assert (index == w).sum() == (index == 0).sum()


def test_the_vocabulary_round_trips_and_a_damaged_one_is_refused(vocab, tmp_path):
    path = tmp_path / "vocab.json"
    vocab.save(path)
    again = load_vocabulary(path)
    assert isinstance(again, SubwordVocabulary)
    assert again.encode_batch([["The", "dog"]], 8)[0].tolist() == vocab.encode_batch([["The", "dog"]], 8)[0].tolist()
    data = json.loads(path.read_text())
    data["tokenizer"] = data["tokenizer"].replace('"dog"', '"cat!"')
    path.write_text(json.dumps(data))
    with pytest.raises(TokenizerError, match="does not match its recorded sha256"):
        load_vocabulary(path)


def test_a_tokenizer_without_a_padding_token_is_refused(tmp_path):
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel

    Tokenizer(WordLevel({"a": 0, "<unk>": 1}, unk_token="<unk>")).save(str(tmp_path / "t.json"))
    with pytest.raises(TokenizerError, match="no padding token"):
        SubwordVocabulary.from_file(tmp_path / "t.json", 16)


def test_a_file_that_is_not_a_tokenizer_is_refused(tmp_path):
    (tmp_path / "t.json").write_text('{"not": "a tokenizer"}')
    with pytest.raises(TokenizerError, match="not a tokenizers file"):
        SubwordVocabulary.from_file(tmp_path / "t.json", 16)


def test_a_step_that_reads_word_ids_refuses_a_subword_vocabulary_in_one_line(vocab):
    """Zero-shot minimal pairs and the language-model rows look words up by id: a pre-trained encoder's
    subword ids would score the wrong rows instead of failing."""
    with pytest.raises(ValueError, match="zero-shot minimal pairs reads the project's word vocabulary"):
        word_vocabulary(vocab, "zero-shot minimal pairs")
    words = Vocabulary(["dog", "dogs"])
    assert word_vocabulary(words, "zero-shot minimal pairs") is words
