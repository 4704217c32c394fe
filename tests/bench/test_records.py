"""What a bench script writes is a record (bench/lib/common.py): the command that reproduces it, the commit, the
machine's CPU flags and type, where ``--record``, ``--tag`` and ``--record-as`` say; and the ship command still
reads the shipped parser's committed record."""

from __future__ import annotations

import json

import pytest

from parserfree.jobs.shipping import bench_scores
from parserfree.reports.records import RecordError, load_record, load_records

import bench.lib.common as common
import bench.trees as trees
from bench.lib.common import RECORDS, REPO, machine_slug, parse, write_record


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A stand-in repository root for the records, on commit abc1234."""
    monkeypatch.setattr(common, "REPO", tmp_path)
    monkeypatch.setattr(common, "RESULTS", tmp_path / "bench" / "results")
    monkeypatch.setattr(common, "current_commit", lambda root: "abc1234")
    return tmp_path


def test_a_recorded_result_carries_its_command_commit_and_machine(repo):
    """Catches a record without the machine it ran on (its CPU flags and type), or whose command does not
    reproduce it."""
    args = parse(trees.arguments(), ["--quick", "--record", "--note", "idle, nothing else running"])
    path = write_record({"rows": []}, args)
    record = load_record(path)
    machine = record.payload["machine"]
    assert path == repo / RECORDS / f"trees-{machine_slug(machine['machine_type'])}.json"
    assert record.command == "python -m bench.trees --quick --record --note 'idle, nothing else running'"
    assert record.commit == "abc1234" and record.kind == "json" and record.note == "idle, nothing else running"
    assert set(machine["cpu_flags"]) >= {"avx2", "avx512f", "avx512_vnni"} and record.payload["bench"] == "trees"


def test_without_record_the_result_is_scratch_and_a_tag_or_name_says_where_it_goes(repo):
    assert write_record({}, parse(trees.arguments(), [])) == repo / "bench" / "results" / "trees.json"
    tagged = write_record({}, parse(trees.arguments(), ["--record", "--tag", "one-thread"]))
    assert tagged.name.startswith("trees-one-thread-") and tagged.parent == repo / RECORDS
    named = write_record({}, parse(trees.arguments(), ["--record-as", "trees-shipped"]))
    assert named == repo / RECORDS / "trees-shipped.json"
    with pytest.raises(SystemExit):
        parse(trees.arguments(), ["--record", "--tag", "Not A Name"])
    with pytest.raises(SystemExit):
        parse(trees.arguments(), ["--record", "--out", "x.json"])  # one place or the other


def test_a_record_to_commit_is_refused_outside_a_git_checkout(repo, monkeypatch):
    """Catches a committed record whose commit is made up: without git it stops; a scratch result says unknown."""

    def no_git(root):
        raise RecordError(f"{root}: not a git checkout")

    monkeypatch.setattr(common, "current_commit", no_git)
    with pytest.raises(SystemExit, match="not a git checkout"):
        write_record({}, parse(trees.arguments(), ["--record"]))
    assert load_record(write_record({}, parse(trees.arguments(), []))).commit == "unknown"


def test_machine_types_have_names_of_their_own():
    slugs = [machine_slug(t) for t in ("AVX-512 + VNNI", "AVX-512", "AVX2, no AVX-512", "no AVX2")]
    assert slugs == ["avx512-vnni", "avx512", "avx2", "no-avx2"]


def test_every_committed_bench_record_loads():
    records = load_records(REPO, RECORDS)
    assert "parser-en" in records and all(r.kind == "json" for r in records.values())


def test_ship_reads_the_committed_parser_record_as_the_shipped_model_quotes_it(monkeypatch):
    """Catches the shipped parser's scores becoming unreadable by ``parserfree ship --scores`` once the bench
    result is a record (its payload): models/parser-en/record.json quotes what the ship read from it."""
    monkeypatch.chdir(REPO)  # the record keeps the path as given: the repository's own
    shipped = json.loads((REPO / "models" / "parser-en" / "record.json").read_text(encoding="utf-8"))
    assert shipped["spacy_scorer"]["file"] == "docs/bench/parser-en.json"
    assert bench_scores("docs/bench/parser-en.json") == shipped["spacy_scorer"]
