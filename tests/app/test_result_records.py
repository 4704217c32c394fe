"""Result records: what `parserfree results add` copies, and the one-line errors of a bad record."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from result_fixtures import curve_payload, report_payload, write_record, write_template

from parserfree.commands.cli import main
from parserfree.reports.records import RecordError, add_records, current_commit, load_record, load_records


@pytest.fixture
def root(tmp_path):
    write_template(tmp_path, "{{table curve_agreement}}\n")
    return tmp_path


def test_add_copies_the_payload_unchanged_with_command_date_and_commit(root, tmp_path):
    result = tmp_path / "curve.json"
    result.write_text(json.dumps(curve_payload()))
    os.utime(result, (1_800_000_000, 1_800_000_000))  # written 2027-01-15
    assert (
        main(
            [
                "results",
                "add",
                "--from",
                str(result),
                "--command",
                "parserfree curve --seeds 2",
                "--commit",
                "abc1234",
                "--root",
                str(root),
            ]
        )
        == 0
    )
    record = load_record(root / "docs" / "results" / "curve_agreement.json")  # default name: <kind>_<dataset>
    assert record.payload == curve_payload() and record.kind == "curve"
    assert (record.command, record.date, record.commit, record.source) == (
        "parserfree curve --seeds 2",
        "2027-01-15",
        "abc1234",
        str(result),
    )
    assert "| 1 | 1000 | 71.00 ± 1.41 | 73.00 ± 2.83 |" in (root / "docs" / "results.md").read_text()


def test_add_from_a_main_job_folder_records_each_task_and_the_index(root, tmp_path):
    job = tmp_path / "runs" / "main"
    for task, twin in (("agreement", 71.74), ("sentiment", 76.71)):
        (job / task / "report").mkdir(parents=True)
        (job / task / "report" / "report.json").write_text(json.dumps(report_payload(task, twin=twin)))
    (job / "index.json").write_text(
        json.dumps({"seconds": 764.0, "stage_seconds": {}, "tasks": {"agreement": {}, "sentiment": {}}})
    )
    records = add_records(root, job, "parserfree run", commit="abc1234")
    assert [r.name for r in records] == ["main_agreement", "main_sentiment", "main_job"]
    stored = load_records(root)
    assert stored["main_sentiment"].payload["domains"]["sentiment"]["scores"]["parser_fed_twin"]["metric"] == 76.71
    assert stored["main_job"].kind == "json" and stored["main_job"].payload["seconds"] == 764.0
    base = add_records(root, job, "parserfree run --size base", name="base", commit="abc1234")
    assert [r.name for r in base] == ["base_agreement", "base_sentiment", "base_job"]  # a second size beside it


def test_add_from_a_main_job_folder_missing_a_report_records_nothing(root, tmp_path):
    job = tmp_path / "main"
    (job / "agreement" / "report").mkdir(parents=True)
    (job / "agreement" / "report" / "report.json").write_text(json.dumps(report_payload()))
    (job / "index.json").write_text(json.dumps({"tasks": {"agreement": {}, "sentiment": {}}}))
    with pytest.raises(RecordError, match="report\\(s\\) missing: .*sentiment/report/report.json"):
        add_records(root, job, "parserfree run", commit="abc1234")
    assert load_records(root) == {}


def test_add_keeps_an_existing_record_unless_told_to_replace_it(root, tmp_path, capsys):
    result = tmp_path / "curve.json"
    result.write_text(json.dumps(curve_payload()))
    add_records(root, result, "parserfree curve", name="c", commit="abc1234")
    assert (
        main(
            [
                "results",
                "add",
                "--from",
                str(result),
                "--name",
                "c",
                "--command",
                "parserfree curve --seeds 9",
                "--commit",
                "abc1234",
                "--root",
                str(root),
            ]
        )
        == 2
    )
    assert "c.json exists; pass --replace" in capsys.readouterr().err
    assert load_record(root / "docs" / "results" / "c.json").command == "parserfree curve"
    add_records(root, result, "parserfree curve --seeds 9", name="c", commit="abc1234", replace=True)
    assert load_record(root / "docs" / "results" / "c.json").command == "parserfree curve --seeds 9"


def test_add_needs_the_command_that_produced_the_result(root, tmp_path):
    result = tmp_path / "curve.json"
    result.write_text(json.dumps(curve_payload()))
    with pytest.raises(RecordError, match="--command must say what produced the result"):
        add_records(root, result, "  ", commit="abc1234")


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("command", None, "field 'command' must be a non-empty string"),
        ("date", "30.11.2026", "field 'date' must look like 2026-12-01"),
        ("kind", "report", "field 'kind' says report but the payload has the shape of a curve"),
        ("payload", [1, 2], "field 'payload' must be a JSON object"),
        ("notes", "typo of note", "unknown field\\(s\\) notes"),
    ],
)
def test_a_bad_record_is_refused_naming_its_file_and_field(tmp_path, capsys, field, value, message):
    path = write_record(tmp_path, "curve_x", curve_payload(), "curve")
    data = json.loads(path.read_text())
    data[field] = value
    path.write_text(json.dumps({k: v for k, v in data.items() if v is not None}))
    with pytest.raises(RecordError, match=f"^{path}: {message}"):
        load_record(path)
    write_template(tmp_path, "")
    assert main(["results", "render", "--root", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"parserfree: error: {path}: ")


def test_a_record_that_is_not_json_names_the_line(tmp_path):
    path = write_record(tmp_path, "r", report_payload(), "report")
    path.write_text(path.read_text()[:-20] + "\n")
    with pytest.raises(RecordError, match=f"^{path}: not valid JSON \\(line 2"):
        load_record(path)


def _git(root, *args):
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t", *args], check=True, capture_output=True
    )


def test_the_commit_of_a_checkout_with_changed_tracked_files_is_marked_dirty(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    _git(tmp_path, "add", "a.py")
    _git(tmp_path, "commit", "-q", "-m", "a")
    clean = current_commit(tmp_path)
    assert len(clean) == 12 and not clean.endswith("-dirty")
    (tmp_path / "a.py").write_text("x = 2\n")
    assert current_commit(tmp_path) == clean + "-dirty"


def test_the_commit_outside_a_checkout_is_asked_for(tmp_path):
    with pytest.raises(RecordError, match="not a git checkout, so the commit is unknown; pass --commit"):
        current_commit(tmp_path)
