import warnings

import numpy as np
import pytest

from parserfree.core.parse import Parse
from parserfree.distill import parse_cache
from parserfree.distill.parse_cache import parse_cached


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(parse_cache, "CHUNK_SIZE", 4)


TEXTS = [f"word{i} and more words ." for i in range(18)]  # 5 chunks of ≤4


def test_second_run_reuses_everything(tmp_path, chain_teacher):
    first, stats = parse_cached(TEXTS, chain_teacher, tmp_path, progress=False)
    assert stats["parsed"] == 5 and chain_teacher.parsed == 18
    second, stats = parse_cached(TEXTS, chain_teacher, tmp_path, progress=False)
    assert stats["reused"] == 5 and stats["parsed"] == 0 and chain_teacher.parsed == 18
    assert [p.words for p in first] == [p.words for p in second]
    assert all(np.array_equal(a.heads, b.heads) for a, b in zip(first, second))


def test_interrupted_run_resumes_without_reparsing(tmp_path, chain_teacher):
    def die_after_two(index):
        if index == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        parse_cached(TEXTS, chain_teacher, tmp_path, progress=False, on_chunk=die_after_two)
    assert chain_teacher.parsed == 8
    parses, stats = parse_cached(TEXTS, chain_teacher, tmp_path, progress=False)
    assert stats["reused"] == 2 and stats["parsed"] == 3
    assert chain_teacher.parsed == 18  # the two finished chunks were not parsed again
    assert len(parses) == 18 and no_temp_files(tmp_path)


def no_temp_files(root):
    return not any(".tmp" in p.name or p.name.endswith(".part") for p in root.rglob("*"))


def test_corrupted_chunk_is_detected_and_reparsed(tmp_path, chain_teacher):
    _, stats = parse_cached(TEXTS, chain_teacher, tmp_path, progress=False)
    chunk = next((tmp_path / "parses" / stats["key"]).glob("chunk-00002.npz"))
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0xFF
    chunk.write_bytes(bytes(data))
    with pytest.warns(UserWarning, match="chunk-00002"):
        parses, stats = parse_cached(TEXTS, chain_teacher, tmp_path, progress=False)
    assert stats["parsed"] == 1 and stats["reused"] == 4 and len(parses) == 18


def test_key_changes_with_data_and_parser(chain_teacher):
    fp = chain_teacher.fingerprint
    assert parse_cache.cache_key(TEXTS, fp) != parse_cache.cache_key(TEXTS[:-1], fp)
    assert parse_cache.cache_key(TEXTS, fp) != parse_cache.cache_key(TEXTS, {**fp, "version": "2"})


class LabellingTeacher:
    """Stand-in parser that also labels: chain heads, label "dep" on every word, "ROOT" on the last."""

    fingerprint = {"model": "labelling-chain", "version": "1", "tokenizer": "split"}

    def __init__(self) -> None:
        self.parsed = 0

    def parse(self, texts):
        for t in texts:
            self.parsed += 1
            words = tuple(t.split())
            n = len(words)
            heads = np.minimum(np.arange(n) + 1, n - 1).astype(np.int64)
            yield Parse(words, heads, np.zeros(n, dtype=bool), ("dep",) * (n - 1) + ("ROOT",))


def test_dependency_labels_survive_the_cache(tmp_path):
    teacher = LabellingTeacher()
    first, _ = parse_cached(TEXTS, teacher, tmp_path, progress=False)
    second, stats = parse_cached(TEXTS, teacher, tmp_path, progress=False)
    assert stats["reused"] == 5 and teacher.parsed == 18
    assert [p.deps for p in second] == [p.deps for p in first]
    assert second[0].deps == ("dep",) * 4 + ("ROOT",)


def test_a_cache_written_before_labels_were_stored_is_parsed_again_not_read_without_labels(tmp_path, monkeypatch):
    teacher = LabellingTeacher()
    monkeypatch.setattr(parse_cache, "FORMAT_VERSION", 1)
    old_key = parse_cache.cache_key(TEXTS, teacher.fingerprint)
    monkeypatch.undo()
    monkeypatch.setattr(parse_cache, "CHUNK_SIZE", 4)
    folder = tmp_path / "parses" / old_key  # a format-1 cache: no labels in its chunks
    folder.mkdir(parents=True)
    for c in range(5):
        span = list(teacher.parse(TEXTS[4 * c : 4 * c + 4]))
        payload = {
            "words": np.array("\n".join(w for p in span for w in p.words)),
            "lengths": np.array([len(p.words) for p in span]),
            "heads": np.concatenate([p.heads for p in span]).astype(np.int32),
            "punct": np.concatenate([p.punct for p in span]),
        }
        np.savez(
            folder / f"chunk-{c:05d}.npz", key=np.array(old_key), index=np.array(c), digest=np.array("old"), **payload
        )
    teacher.parsed = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not read as a damaged cache either: another key altogether
        parses, stats = parse_cached(TEXTS, teacher, tmp_path, progress=False)
    assert stats["key"] != old_key and stats["parsed"] == 5 and teacher.parsed == 18
    assert all(p.deps is not None for p in parses)
