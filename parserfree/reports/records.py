"""Result records: measurements committed to the repository, each with the command that produced it.

A record is one JSON file ``docs/results/<name>.json``: ``command`` (what was run), ``date``
(YYYY-MM-DD), ``commit`` (the code it ran on), ``kind`` (``report``: a comparison's ``report.json``;
``curve``: a ``curve.json``; ``json``: any other result, e.g. a benchmark's JSON or the main job's
``index.json``), optionally ``source`` (the file it was copied from) and ``note`` (machine, conditions),
and ``payload``: the result as its command wrote it, unchanged. The pages (``parserfree.reports.results_page``)
render every number they show from these files; ``add_records`` copies a new result in. The benchmarks'
records are files of the same form in ``docs/bench/`` (``kind`` json, written by the bench scripts
themselves: bench/lib/common.py), rendered into bench/README.md by ``python -m bench.readme``.
"""

from __future__ import annotations

import datetime
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..encoder.errors import ParserfreeError
from ..encoder.files import write_json

RECORDS_DIR = Path("docs") / "results"  # relative to the repository root
KINDS = ("report", "curve", "json")
NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class RecordError(ParserfreeError, ValueError):
    """A result record, a page template or an ``add`` request that cannot be used; the message names it."""


@dataclass(frozen=True)
class ResultRecord:
    """One committed result: what produced it and what it said."""

    name: str  # the file stem; placeholders name the record by it
    kind: str  # one of KINDS
    command: str
    date: str  # YYYY-MM-DD
    commit: str
    payload: dict
    source: str | None = None
    note: str | None = None

    def to_json(self) -> dict:
        """The record file's content (the name is the file's stem, not stored)."""
        data = {"command": self.command, "date": self.date, "commit": self.commit, "kind": self.kind}
        data.update({k: v for k, v in (("source", self.source), ("note", self.note)) if v is not None})
        return {**data, "payload": self.payload}


def payload_kind(payload: dict) -> str:
    """What a result JSON is, from its shape: a comparison report, a curve, or any other JSON."""
    if isinstance(payload.get("models"), dict) and isinstance(payload.get("domains"), dict) and "contrasts" in payload:
        return "report"
    if all(k in payload for k in ("runs", "summary", "fractions", "recipes")):
        return "curve"
    return "json"


def _text(path: Path, data: dict, field: str, required: bool = True) -> str | None:
    value = data.get(field)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise RecordError(f"{path}: field '{field}' must be a non-empty string")
    return value


def load_record(path: str | Path) -> ResultRecord:
    """Read and check one record file; RecordError naming the file and field otherwise."""
    path = Path(path)
    if not NAME.fullmatch(path.stem):
        raise RecordError(f"{path}: a record's file name must be lower-case letters, digits, '_' or '-'")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}: not valid JSON (line {e.lineno}: {e.msg})") from None
    except UnicodeDecodeError:
        raise RecordError(f"{path}: not UTF-8 text") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}: a record is a JSON object with command, date, commit, kind and payload")
    command, date, commit, kind = (_text(path, data, f) for f in ("command", "date", "commit", "kind"))
    if not DATE.fullmatch(date or ""):
        raise RecordError(f"{path}: field 'date' must look like 2026-12-01, not {date!r}")
    if kind not in KINDS:
        raise RecordError(f"{path}: field 'kind' must be one of {', '.join(KINDS)}, not {kind!r}")
    payload = data.get("payload")
    if not isinstance(payload, dict):
        raise RecordError(f"{path}: field 'payload' must be a JSON object (the result as its command wrote it)")
    if kind != "json" and payload_kind(payload) != kind:
        raise RecordError(
            f"{path}: field 'kind' says {kind} but the payload has the shape of a {payload_kind(payload)}"
        )
    unknown = set(data) - {"command", "date", "commit", "kind", "source", "note", "payload"}
    if unknown:
        raise RecordError(f"{path}: unknown field(s) {', '.join(sorted(unknown))}")
    return ResultRecord(
        path.stem,
        kind,
        command,
        date,
        commit,
        payload,
        _text(path, data, "source", required=False),
        _text(path, data, "note", required=False),
    )


def load_records(root: str | Path, folder: str | Path = RECORDS_DIR) -> dict[str, ResultRecord]:
    """Every record under ``root``/``folder`` (docs/results by default; docs/bench holds the benchmarks'), by name."""
    return {p.stem: load_record(p) for p in sorted((Path(root) / folder).glob("*.json"))}


def current_commit(root: str | Path) -> str:
    """The short commit the working tree at ``root`` is on, ``-dirty`` when tracked files differ from it."""

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)

    head = git("rev-parse", "--short=12", "HEAD")
    if head.returncode != 0:
        raise RecordError(f"{root}: not a git checkout, so the commit is unknown; pass --commit")
    dirty = git("diff", "--quiet", "HEAD").returncode != 0
    return head.stdout.strip() + ("-dirty" if dirty else "")


def _read_payload(path: Path) -> dict:
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecordError(f"--from {path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RecordError(f"--from {path}: not a JSON result ({e})") from None
    if not isinstance(payload, dict):
        raise RecordError(f"--from {path}: a result is a JSON object")
    return payload


def default_name(payload: dict, path: Path) -> str:
    """The record name ``add`` gives a result: ``<kind>_<dataset>`` for reports and curves, else the file
    name (lower-cased, other characters as '_')."""
    kind = payload_kind(payload)
    stem = f"{kind}_{payload.get('dataset', path.stem)}" if kind != "json" else path.stem
    return re.sub(r"[^a-z0-9_-]", "_", stem.lower())


def results_to_add(source: str | Path, name: str | None = None) -> list[tuple[str, Path]]:
    """(record name, result file) pairs that ``source`` holds. A main-job folder (``index.json`` and one
    ``<task>/report/report.json`` per task) gives ``<prefix>_<task>`` for each task's report and
    ``<prefix>_job`` for its index, the prefix ``name`` or ``main`` (``base`` for ``run --size base``); a
    file gives one record, named ``name`` or ``default_name``."""
    source = Path(source)
    if source.is_dir():
        index = source / "index.json"
        if not index.is_file():
            raise RecordError(f"--from {source}: a folder must be a main job's output (index.json not found)")
        prefix = name or "main"
        tasks = _read_payload(index).get("tasks")
        if not isinstance(tasks, dict) or not tasks:
            raise RecordError(f"--from {index}: no 'tasks' in the main job's index")
        pairs = [(f"{prefix}_{task}", source / task / "report" / "report.json") for task in tasks]
        missing = [str(p) for _, p in pairs if not p.is_file()]
        if missing:
            raise RecordError(f"--from {source}: report(s) missing: {', '.join(missing)}")
        return [*pairs, (f"{prefix}_job", index)]
    return [(name or default_name(_read_payload(source), source), source)]


def add_records(
    root: str | Path,
    source: str | Path,
    command: str,
    name: str | None = None,
    date: str | None = None,
    commit: str | None = None,
    note: str | None = None,
    replace: bool = False,
) -> list[ResultRecord]:
    """Copy the result(s) at ``source`` into ``root``/docs/results as records. ``date`` defaults to the
    day the result file was written, ``commit`` to the checkout's (``current_commit``). An existing record
    is kept unless ``replace``."""
    if not command or not command.strip():
        raise RecordError('--command must say what produced the result, e.g. "parserfree run"')
    if date is not None and not DATE.fullmatch(date):
        raise RecordError(f"--date must look like 2026-12-01, not {date!r}")
    pairs = results_to_add(source, name)
    folder = Path(root) / RECORDS_DIR
    for record_name, _ in pairs:
        if not NAME.fullmatch(record_name):
            raise RecordError(f"--name {record_name!r}: use lower-case letters, digits, '_' or '-'")
        if (folder / f"{record_name}.json").exists() and not replace:
            raise RecordError(f"{folder / record_name}.json exists; pass --replace to overwrite it")
    commit = commit or current_commit(root)
    records = []
    for record_name, path in pairs:
        payload = _read_payload(path)
        day = date or datetime.date.fromtimestamp(path.stat().st_mtime).isoformat()
        records.append(
            ResultRecord(record_name, payload_kind(payload), command.strip(), day, commit, payload, str(path), note)
        )
    folder.mkdir(parents=True, exist_ok=True)
    for record in records:
        write_json(folder / f"{record.name}.json", record.to_json())
    return records
