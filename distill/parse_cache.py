"""The parse cache: texts → parses, computed once, stored in atomic chunks, resumable, on Dask or here.

Parsing is the slow step of the data flow, so its output is kept on disk under a key made of the data
(a hash of the normalised texts in order), the spaCy model name + version and its tokenizer settings,
and the cache format version (2: dependency labels are stored too; a cache of an older format has
another key, so it is parsed again rather than read without labels). Texts are grouped into fixed
chunks (chunk i holds texts [i·C, (i+1)·C)); each chunk is one ``.npz`` file written to a temporary
name then renamed, and carries its own key and index, so an interrupted run resumes at the first
missing chunk (removing the half-written temporary file of a killed writer) and a damaged chunk is
detected and parsed again. A chunk file depends only on its parses (``np.savez`` stamps its entries with a
fixed date), so the same texts give the same files byte for byte however they were parsed: in this process
(``nlp.pipe`` with ``n_process``) or, inside a ``cluster.use_cluster`` block, one Dask task per missing
chunk on the workers of a cluster (``distill/cluster.py``), each worker's spaCy model checked against the
client's fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from ..core.parse import Parse
from ..encoder.errors import ParserfreeError
from ..encoder.files import atomic_path, write_json
from .cluster import active_client, run_chunks
from .teacher import SpacyTeacher

FORMAT_VERSION = 2
CHUNK_SIZE = 1024


class ChunkPayload(TypedDict):
    """The arrays a chunk file holds besides its key, index and digest."""

    words: np.ndarray  # the chunk's words, newline-joined (a string array)
    lengths: np.ndarray  # words per parse (int64)
    heads: np.ndarray  # the parses' heads, concatenated (int32)
    punct: np.ndarray  # punctuation flags, concatenated (bool)
    deps: np.ndarray  # dependency labels, newline-joined ("" = no label)


PAYLOAD = tuple(ChunkPayload.__annotations__)  # ("words", "lengths", "heads", "punct", "deps"): the digest's order


class CacheError(ParserfreeError, RuntimeError):
    """The cache cannot serve the request (e.g. a worker's parser is not the client's)."""


def data_hash(texts: Sequence[str]) -> str:
    """sha256 over the texts in order."""
    digest = hashlib.sha256()
    for t in texts:
        digest.update(t.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def cache_key(texts: Sequence[str], fingerprint: dict) -> str:
    """Key of a parse cache: data hash, parser fingerprint and format version."""
    blob = json.dumps({"data": data_hash(texts), "parser": fingerprint, "format": FORMAT_VERSION}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _chunk_path(folder: Path, index: int) -> Path:
    return folder / f"chunk-{index:05d}.npz"


def _digest(arrays: Mapping[str, Any]) -> str:
    """sha256 over the payload arrays of a chunk (detects damage the zip container would let through)."""
    digest = hashlib.sha256()
    for name in PAYLOAD:
        digest.update(np.ascontiguousarray(arrays[name]).tobytes())
    return digest.hexdigest()


def _temp_name(index: int, pid: int) -> str:
    """Name of the temporary file a writer with process id ``pid`` fills before renaming it to chunk ``index``."""
    return f".chunk-{index:05d}.{pid}.tmp.npz"


def _alive(pid: int) -> bool:
    """Whether a process with this id exists (on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temp_files(folder: Path) -> int:
    """Delete temporary chunk files left by writers that no longer run (a killed parse); returns how many.
    A live writer's file (another parse of the same texts into the same folder) is left alone."""
    removed = 0
    for tmp in folder.glob(".chunk-*.tmp.npz"):
        pid = tmp.name.split(".")[2]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)
            removed += 1
    return removed


def write_chunk(folder: Path, key: str, index: int, parses: Sequence[Parse]) -> None:
    """Store one chunk atomically (temporary file, then rename), with a digest of its contents."""
    payload: ChunkPayload = {
        "words": np.array("\n".join(w for p in parses for w in p.words)),
        "lengths": np.array([len(p.words) for p in parses], dtype=np.int64),
        "heads": np.concatenate([p.heads for p in parses]).astype(np.int32) if parses else np.zeros(0, np.int32),
        "punct": np.concatenate([p.punct for p in parses]) if parses else np.zeros(0, bool),
        "deps": np.array("\n".join(d for p in parses for d in (p.deps or ("",) * len(p.words)))),  # "" = no label
    }
    with atomic_path(_chunk_path(folder, index), temp=folder / _temp_name(index, os.getpid())) as tmp:
        np.savez(tmp, key=np.array(key), index=np.array(index), digest=np.array(_digest(payload)), **payload)


def read_chunk(folder: Path, key: str, index: int, expected: int) -> list[Parse] | None:
    """A stored chunk, or None when it is missing, damaged or belongs to another key."""
    path = _chunk_path(folder, index)
    if not path.exists():
        return None
    try:
        with np.load(path) as z:
            if str(z["key"]) != key or int(z["index"]) != index:
                return None
            payload = {name: z[name] for name in PAYLOAD}
            intact = str(z["digest"]) == _digest(payload)
    except Exception:  # a truncated or corrupted file
        intact = False
    if not intact:
        warnings.warn(f"parse cache chunk {path.name} is damaged; parsing it again", stacklevel=2)
        return None
    lengths = payload["lengths"]
    words = str(payload["words"]).split("\n") if lengths.sum() else []
    deps = str(payload["deps"]).split("\n") if lengths.sum() else []
    heads, punct = payload["heads"].astype(np.int64), payload["punct"]
    if len(lengths) != expected or len(words) != lengths.sum() or len(deps) != lengths.sum():
        warnings.warn(f"parse cache chunk {path.name} is inconsistent; parsing it again", stacklevel=2)
        return None
    out, start = [], 0
    for n in lengths:
        labels = tuple(deps[start : start + n])
        out.append(
            Parse(
                tuple(words[start : start + n]),
                heads[start : start + n],
                punct[start : start + n],
                labels if any(labels) else None,
            )
        )
        start += n
    return out


def _parse_here(teacher, spans: Mapping[int, Sequence[str]], bar) -> Iterator[tuple[int, list[Parse]]]:
    """(index, parses) of every chunk, parsed in this process (``teacher.parse``, its ``n_process``)."""
    for index, span in spans.items():
        parses = []
        for p in teacher.parse(span):
            parses.append(p)
            bar.update(1)
        yield index, parses


def _parse_on_cluster(
    client, teacher: SpacyTeacher, spans: Mapping[int, Sequence[str]], bar
) -> Iterator[tuple[int, list[Parse]]]:
    """(index, parses) of every chunk as the cluster's workers finish them (``teacher.span_parser()``: what a
    worker runs on one chunk)."""
    if not hasattr(teacher, "span_parser"):
        raise CacheError(f"{type(teacher).__name__} cannot parse on a Dask cluster (it has no span_parser)")
    for index, parses in run_chunks(client, spans, teacher.span_parser(), "parse"):
        bar.update(len(spans[index]))
        yield index, parses


def parse_cached(
    texts: Sequence[str],
    teacher: SpacyTeacher,
    cache_dir: Path,
    progress: bool = True,
    on_chunk: Callable[[int], None] | None = None,
) -> tuple[list[Parse], dict]:
    """Parse ``texts`` through the cache. Returns (parses, stats).

    ``stats`` counts chunks reused and parsed. ``on_chunk(index)`` is called after each chunk is stored.
    Missing chunks are parsed on the Dask cluster of an enclosing ``cluster.use_cluster`` block when there
    is one (in the order the workers finish them), else here in order.
    """
    from tqdm.auto import tqdm

    key = cache_key(texts, teacher.fingerprint)
    folder = Path(cache_dir) / "parses" / key
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_temp_files(folder)
    meta = {"format": FORMAT_VERSION, "parser": teacher.fingerprint, "n_texts": len(texts), "chunk_size": CHUNK_SIZE}
    meta_path = folder / "meta.json"
    if not meta_path.exists():
        write_json(meta_path, meta)
    n_chunks = (len(texts) + CHUNK_SIZE - 1) // CHUNK_SIZE
    stats: dict[str, Any] = {"key": key, "folder": str(folder), "chunks": n_chunks, "reused": 0, "parsed": 0}
    results: list[list[Parse] | None] = [None] * n_chunks
    todo: dict[int, Sequence[str]] = {}
    for c in range(n_chunks):
        span = texts[c * CHUNK_SIZE : (c + 1) * CHUNK_SIZE]
        results[c] = read_chunk(folder, key, c, len(span))
        if results[c] is not None:
            stats["reused"] += 1
        else:
            todo[c] = span
    client = active_client() if todo else None
    bar = tqdm(
        total=sum(len(span) for span in todo.values()),
        desc="parsing" if client is None else "parsing on Dask",
        unit="text",
        disable=not progress or not todo,
    )
    produced = _parse_on_cluster(client, teacher, todo, bar) if client is not None else _parse_here(teacher, todo, bar)
    for c, parses in produced:
        write_chunk(folder, key, c, parses)
        results[c] = parses
        stats["parsed"] += 1
        if on_chunk is not None:
            on_chunk(c)
    bar.close()
    return [p for chunk in results for p in chunk], stats
