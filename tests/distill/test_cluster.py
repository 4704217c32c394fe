"""Parsing and tagging on Dask: a 2-worker LocalCluster writes the very cache a single-process parse writes,
and a worker killed mid-chunk loses nothing (its chunk is parsed again on a worker that lives)."""

from __future__ import annotations

import functools
import os
import signal
from pathlib import Path

import numpy as np
import pytest

from parserfree.core.parse import DEFAULT_MODEL, Parse, TeacherError
from parserfree.distill import parse_cache, teacher
from parserfree.distill.cluster import ClusterConfig, active_client, use_client, use_cluster
from parserfree.distill.data import tagging
from parserfree.distill.data.tagging import tag_cached
from parserfree.distill.parse_cache import parse_cached
from parserfree.distill.teacher import SpacyTeacher
from parserfree.encoder.schema import ConfigError

TEXTS = [f"The {i} dogs near the old barn were barking again. They stopped at {i + 1}." for i in range(40)] + [
    "Short.",
    'A much longer sentence follows, with commas, clauses that nest, and a quote: "yes".',
]  # 42 texts: chunks of 8 give 6 chunks, the last one short


@pytest.fixture(scope="module")
def local_cluster():
    with use_cluster(ClusterConfig(workers=2)) as client, use_client(None):  # opened once, lent to each test
        yield client


@pytest.fixture
def cluster(local_cluster):
    with use_client(local_cluster):
        yield local_cluster


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(parse_cache, "CHUNK_SIZE", 8)
    monkeypatch.setattr(tagging, "CHUNK_SIZE", 8)


def chunk_files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_dask_parse_writes_the_cache_of_a_single_process_parse_byte_for_byte(cluster, small_chunks, tmp_path):
    with use_client(None):  # this process
        local, local_stats = parse_cached(
            TEXTS, SpacyTeacher(DEFAULT_MODEL, batch_size=4), tmp_path / "local", progress=False
        )
    assert active_client() is cluster
    dask, dask_stats = parse_cached(TEXTS, SpacyTeacher(DEFAULT_MODEL, batch_size=4), tmp_path / "dask", progress=False)
    assert dask_stats["parsed"] == local_stats["parsed"] == 6 and dask_stats["key"] == local_stats["key"]
    assert chunk_files(tmp_path / "local") == chunk_files(tmp_path / "dask")
    assert [p.words for p in dask] == [p.words for p in local] and [p.deps for p in dask] == [p.deps for p in local]
    assert all(np.array_equal(a.heads, b.heads) for a, b in zip(dask, local))
    loaded = cluster.run(lambda: teacher._worker_teacher.cache_info().currsize)
    assert sum(loaded.values()) >= 1  # the parses came from the workers' models, not this process's


def test_tagging_on_dask_writes_the_chunks_of_a_single_process_tagging(cluster, small_chunks, tmp_path):
    with use_client(None):
        local = tag_cached(TEXTS, tmp_path / "local", progress=False)
    dask = tag_cached(TEXTS, tmp_path / "dask", progress=False)
    assert dask == local and sum(len(doc) for doc in dask) > len(TEXTS)  # several sentences per text
    assert (
        chunk_files(tmp_path / "local") == chunk_files(tmp_path / "dask") and len(chunk_files(tmp_path / "dask")) == 6
    )


def dying_parse(marker: str, texts: list[str]) -> list[Parse]:
    """A worker's parse of one chunk that kills its own worker process the first time it meets "die here",
    half-way through the chunk (a real SIGKILL: what the kernel's out-of-memory killer does)."""
    out = []
    for text in texts:
        if text == "die here" and not os.path.exists(marker):
            Path(marker).write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        words = tuple(text.split())
        out.append(Parse(words, np.arange(len(words), dtype=np.int64), np.zeros(len(words), dtype=bool)))
    return out


class DyingTeacher:
    """Whitespace words, every word its own root; on Dask, the first worker to parse "die here" is killed."""

    fingerprint = {"model": "dying", "version": "1", "tokenizer": "split"}

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def parse(self, texts):
        yield from dying_parse(self.marker, list(texts))

    def span_parser(self):
        return functools.partial(dying_parse, self.marker)


def test_a_worker_killed_mid_chunk_loses_nothing(cluster, small_chunks, tmp_path):
    texts = [f"text number {i}" for i in range(40)]
    texts[19] = "die here"  # the middle of chunk 2
    before = set(cluster.scheduler_info()["workers"])
    parses, stats = parse_cached(texts, DyingTeacher(tmp_path / "killed"), tmp_path / "dask", progress=False)
    assert (tmp_path / "killed").exists()  # a worker did die mid-chunk
    assert stats["parsed"] == 5 and [p.words for p in parses] == [tuple(t.split()) for t in texts]
    local, _ = parse_cached(
        texts, DyingTeacher(tmp_path / "killed"), tmp_path / "local", progress=False
    )  # marker set: no kill
    assert chunk_files(tmp_path / "dask") == chunk_files(tmp_path / "local")
    cluster.wait_for_workers(2, timeout=60)  # the nanny restarted the killed worker
    assert set(cluster.scheduler_info()["workers"]) != before


def test_a_worker_with_another_spacy_model_is_refused_naming_both():
    with pytest.raises(TeacherError, match="differs from the client's"):
        teacher.parse_span(
            DEFAULT_MODEL, 8, {"model": DEFAULT_MODEL, "version": "en_core_web_sm-0.0.1", "tokenizer": "x"}, ["A dog."]
        )
    with pytest.raises(TeacherError, match="differs from the client's"):
        tagging.tag_span(DEFAULT_MODEL, 8, {**tagging.fingerprint(DEFAULT_MODEL), "version": "0.0.1"}, ["A dog."])


@pytest.mark.parametrize(
    "config, message",
    [
        (ClusterConfig(scheduler="tcp://127.0.0.1:1", workers=2), "exclude each other"),
        (ClusterConfig(workers=0), "must be ≥ 1"),
    ],
)
def test_impossible_cluster_options_are_refused_naming_them(config, message):
    with pytest.raises(ConfigError, match=message):
        with use_cluster(config):
            pass
