"""The spaCy teacher: normalised text → words, heads, punctuation flags and dependency labels.

The parser whose trees the syntax bias uses and the distance predictor learns. Only tok2vec and the
parser are loaded (≈3× faster than the full pipeline); how a pipeline is loaded and a Doc read into a
``Parse`` is ``core/parse.py``, which export shares. The teacher parses in batches, on Dask workers too,
and its fingerprint keys the parse cache.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence

from ..core.parse import DEFAULT_MODEL, Parse, TeacherError, doc_to_parse, load_pipeline


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
    from .cluster import worker_name

    teacher = _worker_teacher(model, batch_size)
    if teacher.fingerprint != fingerprint:
        raise TeacherError(
            f"Dask worker {worker_name()}: spaCy model {teacher.fingerprint} differs from the client's "
            f"{fingerprint}; install the same model version on every worker"
        )
    return list(teacher.parse(texts))
