"""The bundled tokenizer: the words the model was trained on, reproduced from raw text without a parser model.

Training words come either from ``nlp.pipe`` of the normalised text with the configured spaCy model
(distill.teacher), where the tokenizer alone decides them, or from a treebank (CoNLL-U), whose words follow
the treebank's own conventions ("don't" may be one word). The export writes a spaCy tokenizer to the
bundle (``Tokenizer.to_disk``, one file) with the language code; the runtime rebuilds it on a blank
pipeline of that language (``spacy.blank(lang).tokenizer.from_disk``), so it needs the ``spacy`` package
but never loads the parser model. ``words_of`` applies the project's one normalisation first.

Serving takes the same words faster (``ChunkWords``): spaCy's tokenizer splits a text on its spaces and
tokenizes every space-separated chunk on its own (prefixes, suffixes, infixes, special cases, URL and
token matches all act within a chunk), so the words of a normalised text are the words of its chunks in
order. ``ChunkWords`` tokenizes each distinct chunk once and remembers its words (a bounded cache), so a
text whose chunks were all seen before costs a split and a look-up per chunk instead of building a spaCy
``Doc``. A special case with a space inside it would break that independence, so a tokenizer with one is
run on whole texts instead; the export checks the served words against the training words
either way (``training_word_check`` reads them through ``ChunkWords``).

For treebank training data, ``fit_to_treebank`` teaches the tokenizer the treebank's splits: every
space-separated chunk of a training text that the tokenizer splits otherwise than the treebank becomes a
special case with the treebank's words (serialised with the tokenizer). ``training_word_check`` then
counts the sentences whose words the tokenizer reproduces; the export refuses to write a bundle whose
tokenizer does not reproduce the training words.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from itertools import chain
from pathlib import Path

from ..core.held_out import Sentence
from ..encoder.text import normalise_text

CHUNK_CACHE_SIZE = 100_000  # distinct chunks whose words ChunkWords remembers; the cache starts over when full


def save_tokenizer(nlp, path: str | Path) -> dict:
    """Write ``nlp``'s tokenizer to ``path``; return what rebuilding it needs (file name, language) and the source pipeline."""
    nlp.tokenizer.to_disk(Path(path))
    meta = nlp.meta
    return {
        "path": Path(path).name,
        "lang": nlp.lang,
        "pipeline": f"{meta.get('lang')}_{meta.get('name')}",
        "pipeline_version": meta.get("version"),
    }


def load_tokenizer(path: str | Path, lang: str):
    """Rebuild a saved tokenizer on a blank spaCy pipeline of language ``lang`` (no trained components)."""
    from .without_torch import import_spacy_without_torch

    import_spacy_without_torch()
    import spacy

    nlp = spacy.blank(lang)
    # spaCy types nlp.tokenizer as any callable; a blank pipeline's is a spacy.tokenizer.Tokenizer
    nlp.tokenizer.from_disk(Path(path))  # type: ignore[union-attr]
    return nlp.tokenizer


def words_of(tokenizer, texts: Sequence[str]) -> list[list[str]]:
    """Texts → words as the model saw them in training: ``normalise_text`` then the tokenizer."""
    return [[t.text for t in tokenizer(normalise_text(text))] for text in texts]


def chunk_independent(tokenizer) -> bool:
    """Whether no special case of ``tokenizer`` holds a space beside other characters (a case that spans
    two chunks by its very text). spaCy's own cases for a lone whitespace token (" ", "\\n", …) never
    apply to a normalised text, whose only whitespace is the single spaces between chunks."""
    return not any(" " in key and key.strip() for key in (tokenizer.rules or {}))


def boundary_pairs(tokenizer) -> frozenset[str]:
    """The two-character strings across which spaCy's special-case matcher could join two chunks.

    spaCy re-joins the affix pieces of a special case that it split (``''`` → ``'`` ``'`` → ``''``) by
    matching the pieces over the whole text, and a match may start in one chunk and end in the next,
    which changes the words of both (``films,'' ''Out`` gives ``''`` ``'`` ``'``). Such a match puts a
    boundary between two of the case's pieces on the space, so the last character of the one chunk and the
    first of the next are the characters on either side of a boundary between its pieces. The pieces are
    the case's text split by the tokenizer's affix rules alone (a copy without special cases), for every
    case spaCy matches this way (those with an affix; all when ``faster_heuristics`` is off).
    """
    from spacy.tokenizer import Tokenizer

    affixes_only = Tokenizer(
        tokenizer.vocab,
        rules={},
        prefix_search=tokenizer.prefix_search,
        suffix_search=tokenizer.suffix_search,
        infix_finditer=tokenizer.infix_finditer,
        token_match=tokenizer.token_match,
        url_match=tokenizer.url_match,
    )
    pairs: set[str] = set()
    for key in tokenizer.rules or {}:
        if not key.strip() or not (
            not tokenizer.faster_heuristics
            or tokenizer.find_prefix(key)
            or tokenizer.find_suffix(key)
            or tokenizer.find_infix(key)
        ):
            continue
        pieces = [t.text for t in affixes_only(key)]
        pairs.update(a[-1] + b[0] for a, b in zip(pieces, pieces[1:]) if a and b)
    return frozenset(pairs)


def candidate_spaces(pairs: frozenset[str]) -> re.Pattern:
    """A pattern finding every space that has a boundary pair (``boundary_pairs``) around it, and some
    others: the pairs are grouped by whether their first character is alphanumeric, and a space matches
    when its neighbours are in one group's first and second characters (so the many spaces between two
    letters are skipped in C and only the few matches are checked against the pairs themselves)."""
    groups: dict[bool, tuple[set, set]] = {}
    for pair in pairs:
        first, second = groups.setdefault(pair[0].isalnum(), (set(), set()))
        first.add(pair[0])
        second.add(pair[1])
    if not groups:
        return re.compile("(?!)")

    def chars(group: set) -> str:
        return "[" + "".join(re.escape(c) for c in sorted(group)) + "]"

    return re.compile(" (?:" + "|".join(f"(?<={chars(a)} )(?={chars(b)})" for a, b in groups.values()) + ")")


class ChunkWords:
    """Texts → exactly the words ``words_of`` gives, each distinct space-separated chunk tokenized once.

    ``tokenizer``: a spaCy tokenizer (the bundled one). A text with a boundary that a special case could
    cross (``boundary_pairs``), and every text of a tokenizer that is not ``chunk_independent``, is
    tokenized whole, as ``words_of`` does; every other text is the concatenation of its chunks' words.
    """

    def __init__(self, tokenizer, cache_size: int = CHUNK_CACHE_SIZE) -> None:
        self.tokenizer = tokenizer
        self.cache_size = cache_size
        self.by_chunk = chunk_independent(tokenizer)
        self.pairs = boundary_pairs(tokenizer)
        self._candidates = candidate_spaces(self.pairs)
        self._words: dict[str, tuple[str, ...]] = {}  # chunk → its words

    def chunk(self, chunk: str) -> tuple[str, ...]:
        """The words of one space-free chunk, tokenized on first sight and remembered."""
        words = self._words.get(chunk)
        if words is None:
            if len(self._words) >= self.cache_size:
                self._words.clear()
            words = self._words[chunk] = tuple(t.text for t in self.tokenizer(chunk))
        return words

    def text(self, normalised: str) -> list[str]:
        """The words of one normalised, non-empty text."""
        if not self.by_chunk or any(
            normalised[m.start() - 1] + normalised[m.start() + 1] in self.pairs
            for m in self._candidates.finditer(normalised)
        ):
            return [t.text for t in self.tokenizer(normalised)]
        pieces = normalised.split(" ")
        known = list(map(self._words.get, pieces))
        if None in known:
            known = list(map(self.chunk, pieces))
        return list(chain.from_iterable(known))

    def __call__(self, texts: Sequence[str]) -> list[list[str]]:
        out = []
        for text in texts:
            normalised = normalise_text(text)
            out.append(self.text(normalised) if normalised else [])
        return out


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
    """How many sentences ``tokenizer`` splits into exactly their training words, read as serving reads them
    (``ChunkWords``), and the first that it does not (source, training words, the tokenizer's words,
    whether the words spell the text at all)."""
    texts = [text for text, _, _ in sentences]
    identical, first = 0, None
    for (text, words, source), got in zip(sentences, ChunkWords(tokenizer)(texts)):
        if got == list(words):
            identical += 1
        elif first is None:
            first = {
                "source": source,
                "training_words": list(words),
                "tokenizer_words": got,
                "words_spell_text": align_chunks(normalise_text(text), words) is not None,
            }
    return {"sentences": len(sentences), "identical": identical, "first_difference": first}
