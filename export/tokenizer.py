"""The bundled tokenizer: the words the model was trained on, reproduced from raw text without a parser model.

Training words come either from ``nlp.pipe`` of the normalised text with the configured spaCy model
(distill.teacher), where the tokenizer alone decides them, or from a treebank (CoNLL-U), whose words follow
the treebank's own conventions ("don't" may be one word). The export writes a spaCy tokenizer to the
bundle (``Tokenizer.to_disk``, one file) with the language code; the runtime rebuilds it on a blank
pipeline of that language (``spacy.blank(lang).tokenizer.from_disk``), so it needs the ``spacy`` package
but never loads the parser model. ``words_of`` applies the project's one normalisation first.

For treebank training data, ``fit_to_treebank`` teaches the tokenizer the treebank's splits: every
space-separated chunk of a training text that the tokenizer splits otherwise than the treebank becomes a
special case with the treebank's words (serialised with the tokenizer). ``training_word_check`` then
counts the sentences whose words the tokenizer reproduces; the export refuses to write a bundle whose
tokenizer does not reproduce the training words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from parserfree.distill.datasets import normalise_text

# (text, training words, source) of one sentence
Sentence = tuple[str, Sequence[str], str]


def save_tokenizer(nlp, path: str | Path) -> dict:
    """Write ``nlp``'s tokenizer to ``path``; return what rebuilding it needs (file name, language) and the source pipeline."""
    nlp.tokenizer.to_disk(Path(path))
    meta = nlp.meta
    return {"path": Path(path).name, "lang": nlp.lang, "pipeline": f"{meta.get('lang')}_{meta.get('name')}",
            "pipeline_version": meta.get("version")}


def load_tokenizer(path: str | Path, lang: str):
    """Rebuild a saved tokenizer on a blank spaCy pipeline of language ``lang`` (no trained components)."""
    import spacy

    nlp = spacy.blank(lang)
    nlp.tokenizer.from_disk(Path(path))
    return nlp.tokenizer


def words_of(tokenizer, texts: Sequence[str]) -> list[list[str]]:
    """Texts → words as the model saw them in training: ``normalise_text`` then the tokenizer."""
    return [[t.text for t in tokenizer(normalise_text(text))] for text in texts]


def align_chunks(text: str, words: Sequence[str]) -> list[tuple[str, tuple[str, ...]]] | None:
    """The words of each space-separated chunk of a normalised ``text``, or None when the words do not
    spell the text chunk by chunk (other characters, a word across a space)."""
    out, i = [], 0
    for chunk in text.split(" "):
        got, rest = [], chunk
        while rest:
            if i >= len(words) or not words[i] or not rest.startswith(words[i]):
                return None
            got.append(words[i])
            rest = rest[len(words[i]) :]
            i += 1
        out.append((chunk, tuple(got)))
    return out if i == len(words) else None


def fit_to_treebank(tokenizer, sentences: Sequence[Sentence]) -> int:
    """Add a special case for every chunk of the sentences that ``tokenizer`` splits otherwise than the
    treebank (the treebank's most frequent split of that chunk); returns how many were added."""
    votes: dict[str, Counter] = {}
    for text, words, _ in sentences:
        for chunk, chunk_words in align_chunks(normalise_text(text), words) or ():
            votes.setdefault(chunk, Counter())[chunk_words] += 1
    rules = {}
    for chunk, counts in votes.items():
        chunk_words = counts.most_common(1)[0][0]
        if [t.text for t in tokenizer(chunk)] != list(chunk_words):
            rules[chunk] = [{"ORTH": w} for w in chunk_words]
    if rules:
        tokenizer.rules = {**(tokenizer.rules or {}), **rules}  # one reload of the special cases
    return len(rules)


def training_word_check(tokenizer, sentences: Sequence[Sentence]) -> dict:
    """How many sentences ``tokenizer`` splits into exactly their training words, and the first that it
    does not (source, training words, the tokenizer's words, whether the words spell the text at all)."""
    texts = [text for text, _, _ in sentences]
    identical, first = 0, None
    for (text, words, source), got in zip(sentences, words_of(tokenizer, texts)):
        if got == list(words):
            identical += 1
        elif first is None:
            first = {"source": source, "training_words": list(words), "tokenizer_words": got,
                     "words_spell_text": align_chunks(normalise_text(text), words) is not None}
    return {"sentences": len(sentences), "identical": identical, "first_difference": first}
