"""Tagged sentences: texts → sentences with words, spacing, Penn tags, dependency labels and heads, cached.

What the agreement dataset is built from. Unlike the teacher (tok2vec + parser only) this runs spaCy's
tagger too (``attribute_ruler`` + ``tagger`` + ``parser``; no NER, no lemmatizer). It is slow (minutes for
the built-in corpora on two cores), so results are stored in chunks of ``CHUNK_SIZE`` texts, one compact
JSON file each, written atomically under a key made of the texts, the spaCy model name + version and
``FORMAT_VERSION``: an interrupted run resumes at the first missing chunk, a damaged chunk is tagged again.
Inside a ``cluster.use_cluster`` block the missing chunks are tagged on the Dask cluster instead, one task
per chunk (each worker's tagger checked against the client's fingerprint), into the same files.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...core.parse import DEFAULT_MODEL, TeacherError, load_pipeline
from ...encoder.files import write_text_atomic
from ..cluster import active_client, run_chunks, worker_name
from ..parse_cache import data_hash

FORMAT_VERSION = 1
CHUNK_SIZE = 1024
EXCLUDE = ["ner", "lemmatizer"]


@dataclass(frozen=True)
class TaggedSentence:
    """One sentence: words, whether a space follows each, Penn tags, dependency labels, heads (0-based
    within the sentence, the root pointing to itself)."""

    words: tuple[str, ...]
    spaces: tuple[bool, ...]
    tags: tuple[str, ...]
    deps: tuple[str, ...]
    heads: tuple[int, ...]

    def text(self, replace: dict[int, str] | None = None) -> str:
        """The sentence's text with its own spacing, words at the given indices replaced."""
        replace = replace or {}
        return "".join(
            replace.get(i, w) + (" " if s else "") for i, (w, s) in enumerate(zip(self.words, self.spaces))
        ).strip()

    def to_json(self) -> list:
        """Compact JSON form (lists, spaces as a '0'/'1' string)."""
        return [
            list(self.words),
            "".join("1" if s else "0" for s in self.spaces),
            list(self.tags),
            list(self.deps),
            list(self.heads),
        ]

    @classmethod
    def from_json(cls, data: list) -> TaggedSentence:
        """Inverse of ``to_json``."""
        words, spaces, tags, deps, heads = data
        return cls(
            tuple(words), tuple(c == "1" for c in spaces), tuple(tags), tuple(deps), tuple(int(h) for h in heads)
        )


def sentences_of(doc) -> list[TaggedSentence]:
    """A tagged and parsed spaCy Doc → its sentences."""
    out = []
    for sent in doc.sents:
        toks = list(sent)
        out.append(
            TaggedSentence(
                tuple(t.text for t in toks),
                tuple(bool(t.whitespace_) for t in toks),
                tuple(t.tag_ for t in toks),
                tuple(t.dep_ for t in toks),
                tuple(t.head.i - sent.start for t in toks),
            )
        )
    return out


def fingerprint(model: str) -> dict:
    """Model name, installed package version and spaCy version (no model loading)."""
    import spacy

    return {
        "model": model,
        "version": spacy.util.get_package_version(model) or "unknown",
        "spacy": spacy.__version__,
        "exclude": EXCLUDE,
        "format": FORMAT_VERSION,
    }


def cache_key(texts: Sequence[str], model: str) -> str:
    """Key of a tagged-sentence cache: the texts in order and the tagger's fingerprint."""
    blob = json.dumps({"data": data_hash(texts), "tagger": fingerprint(model)}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _read_chunk(path: Path, key: str, index: int, expected: int) -> list[list[TaggedSentence]] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["key"] != key or data["index"] != index or len(data["docs"]) != expected:
            return None
        return [[TaggedSentence.from_json(s) for s in doc] for doc in data["docs"]]
    except (OSError, ValueError, KeyError, TypeError):  # missing, truncated or damaged: tag it again
        return None


def _folder(texts: Sequence[str], cache_dir: Path, model: str) -> tuple[str, Path, int]:
    key = cache_key(texts, model)
    return key, Path(cache_dir) / "tagged" / key, (len(texts) + CHUNK_SIZE - 1) // CHUNK_SIZE


def is_tagged(texts: Sequence[str], cache_dir: Path, model: str = DEFAULT_MODEL) -> bool:
    """Whether every chunk of these texts is in the cache (present; damage is found when it is read)."""
    _, folder, n_chunks = _folder(texts, cache_dir, model)
    return all((folder / f"chunk-{c:05d}.json").is_file() for c in range(n_chunks))


@functools.lru_cache(maxsize=2)
def _worker_tagger(model: str):
    """The tagging pipeline of one worker process (loaded once per process and model)."""
    return load_pipeline(model, exclude=EXCLUDE)


def tag_span(model: str, batch_size: int, expected: dict, texts: Sequence[str]) -> list[list[TaggedSentence]]:
    """The tagged sentences of one chunk of texts on a Dask worker; TeacherError when the worker's tagger is
    not the one whose fingerprint keys the client's cache."""
    if fingerprint(model) != expected:
        raise TeacherError(
            f"Dask worker {worker_name()}: tagger {fingerprint(model)} differs from the client's "
            f"{expected}; install the same spaCy and model versions on every worker"
        )
    return [sentences_of(doc) for doc in _worker_tagger(model).pipe(texts, batch_size=batch_size)]


def _tag_here(
    model: str, spans: Mapping[int, Sequence[str]], batch_size: int, n_process: int, bar
) -> Iterator[tuple[int, list[list[TaggedSentence]]]]:
    """(index, tagged docs) of every chunk, tagged in this process: one ``nlp.pipe`` stream (one pool of
    ``n_process``) over all of them."""
    nlp = load_pipeline(model, exclude=EXCLUDE)
    stream = nlp.pipe((t for span in spans.values() for t in span), batch_size=batch_size, n_process=n_process)
    for index, span in spans.items():
        docs = []
        for _ in span:
            docs.append(sentences_of(next(stream)))
            bar.update(1)
        yield index, docs


def _tag_on_cluster(
    client, model: str, spans: Mapping[int, Sequence[str]], batch_size: int, bar
) -> Iterator[tuple[int, list[list[TaggedSentence]]]]:
    """(index, tagged docs) of every chunk as the cluster's workers finish them."""
    work = functools.partial(tag_span, model, batch_size, fingerprint(model))
    for index, docs in run_chunks(client, spans, work, "tag"):
        bar.update(len(spans[index]))
        yield index, docs


def tag_cached(
    texts: Sequence[str],
    cache_dir: Path,
    model: str = DEFAULT_MODEL,
    batch_size: int = 256,
    n_process: int = 1,
    progress: bool = True,
    desc: str = "tagging",
) -> list[list[TaggedSentence]]:
    """The sentences of every text, tagged through the cache (only missing chunks are tagged: on the Dask
    cluster of an enclosing ``cluster.use_cluster`` block, else here with ``n_process``)."""
    from tqdm.auto import tqdm

    key, folder, n_chunks = _folder(texts, cache_dir, model)
    folder.mkdir(parents=True, exist_ok=True)
    spans = [texts[c * CHUNK_SIZE : (c + 1) * CHUNK_SIZE] for c in range(n_chunks)]
    results = [_read_chunk(folder / f"chunk-{c:05d}.json", key, c, len(spans[c])) for c in range(n_chunks)]
    todo = {c: spans[c] for c in range(n_chunks) if results[c] is None}
    if todo:
        client = active_client()
        bar = tqdm(
            total=sum(len(span) for span in todo.values()),
            desc=desc if client is None else f"{desc} on Dask",
            unit="text",
            disable=not progress,
        )
        produced = (
            _tag_on_cluster(client, model, todo, batch_size, bar)
            if client is not None
            else _tag_here(model, todo, batch_size, n_process, bar)
        )
        for c, docs in produced:
            payload = {"key": key, "index": c, "docs": [[s.to_json() for s in doc] for doc in docs]}
            write_text_atomic(
                folder / f"chunk-{c:05d}.json", json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
            )
            results[c] = docs
        bar.close()
    return [doc for chunk in results for doc in chunk]
