"""ChunkWords (serving's tokenizer path) must give exactly the words of spaCy's tokenizer on the whole text."""

from __future__ import annotations

import pytest

spacy = pytest.importorskip("spacy")

from parserfree.export.tokenizer import ChunkWords, boundary_pairs, chunk_independent, training_word_check, words_of  # noqa: E402

# Texts whose chunks spaCy's special cases join or split differently in context, and ordinary ones.
CONTEXT_TEXTS = [
    "Solaris is rigid in ways that Soderbergh's best films, ''Erin Brockovich,'' ''Out of Sight'' and ''Ocean's Eleven,'' never were.",
    "students say ''ax'' instead of ''ask,'' ''ain't'' instead of ''isn't.''",
    "It opens at 5 p.m. and closes at 11a.m. , I think :) (^_^) 'cause why not",
    "Don't you love it?! I do... U.S.A. e.g. Mr. Smith's dog -- it's fine.",
    "A small movie with a big heart.",
]


@pytest.fixture(scope="module")
def tokenizer():
    return spacy.blank("en").tokenizer


def test_chunk_words_are_spacys_words_where_a_special_case_crosses_a_space(tokenizer, awkward_texts):
    texts = CONTEXT_TEXTS + list(awkward_texts.values())
    served = ChunkWords(tokenizer)
    assert served(texts) == words_of(tokenizer, texts)
    assert served(texts) == words_of(tokenizer, texts)  # again, every chunk now from the cache


def test_chunk_words_fall_back_to_whole_texts_for_the_quote_case(tokenizer):
    # ''Out after ,'' is split by spaCy only in context: chunk by chunk it would be one word ''
    text = CONTEXT_TEXTS[0]
    assert "''" in boundary_pairs(tokenizer)
    assert "'" in words_of(tokenizer, [text])[0]
    assert ChunkWords(tokenizer)([text]) == words_of(tokenizer, [text])


def test_chunk_words_of_a_tokenizer_with_a_spaced_special_case_are_its_words():
    tokenizer = spacy.blank("en").tokenizer
    tokenizer.add_special_case("New York", [{"ORTH": "New York"}])
    assert not chunk_independent(tokenizer)
    text = ["I love New York in May."]
    assert words_of(tokenizer, text)[0][2] == "New York"
    assert ChunkWords(tokenizer)(text) == words_of(tokenizer, text)


def test_chunk_cache_is_bounded_and_starts_over(tokenizer):
    served = ChunkWords(tokenizer, cache_size=3)
    texts = ["one two three four five", "six seven"]
    assert served(texts) == words_of(tokenizer, texts)
    assert len(served._words) <= 3


def test_training_word_check_reads_the_served_words(tokenizer):
    sentences = [
        (text, words, f"s{i}") for i, (text, words) in enumerate(zip(CONTEXT_TEXTS, words_of(tokenizer, CONTEXT_TEXTS)))
    ]
    assert training_word_check(tokenizer, sentences)["identical"] == len(sentences)
