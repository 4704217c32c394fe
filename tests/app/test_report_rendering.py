"""The typed report is complete: every numeric field reaches report.md or says why it stays in report.json,
every committed report reads back into the same JSON, a field the types do not know is refused, and the
pages render without the training pipeline or matplotlib."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import subprocess
import sys
import types
import typing
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from parserfree.reports.markdown import report_markdown
from parserfree.reports.parts import JSON_ONLY
from parserfree.reports.records import load_records
from parserfree.reports.report import TASK_SCORES_JSON_ONLY, Report

REPO = Path(__file__).resolve().parents[2]
FIXTURE = "main_agreement"  # a committed report with seeds, baselines, breakdowns, trees, a parse leak, variants


def _bare(hint):
    """``hint`` without its None option."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        options = [o for o in typing.get_args(hint) if o is not type(None)]
        return options[0] if len(options) == 1 else hint
    return hint


def _is_number(hint) -> bool:
    return _bare(hint) in (int, float)


def _numeric_kind(hint) -> str | None:
    """ "scalar", "list" or "dict" for a number, a list of numbers or a dict of numbers; None otherwise."""
    hint = _bare(hint)
    args = typing.get_args(hint)
    if _is_number(hint):
        return "scalar"
    if typing.get_origin(hint) is list and _is_number(args[0]):
        return "list"
    if typing.get_origin(hint) is dict and _is_number(args[1]):
        return "dict"
    return None


def _is_typeddict(hint) -> bool:
    return typing.is_typeddict(hint)


def _fields(cls) -> dict[str, object]:
    """name → hint of a dataclass's fields or a TypedDict's keys."""
    return typing.get_type_hints(cls)


def _json_only(cls, name: str) -> str | None:
    if _is_typeddict(cls):
        return TASK_SCORES_JSON_ONLY.get(name)
    return next(f.metadata.get(JSON_ONLY) for f in dataclasses.fields(cls) if f.name == name)


def _record_classes(hint, seen: set) -> None:
    hint = _bare(hint)
    if (dataclasses.is_dataclass(hint) or _is_typeddict(hint)) and hint not in seen:
        seen.add(hint)
        for inner in _fields(hint).values():
            _record_classes(inner, seen)
    for arg in typing.get_args(hint):
        _record_classes(arg, seen)


def numeric_fields() -> set[tuple[type, str]]:
    """Every (class, field) of the report's types that holds numbers, read from the type hints alone."""
    classes: set = set()
    _record_classes(Report, classes)
    return {(cls, name) for cls in classes for name, hint in _fields(cls).items() if _numeric_kind(hint)}


class Slot:
    """One place of a report object that holds numbers: an attribute or a TypedDict key."""

    def __init__(self, owner, name: str, kind: str) -> None:
        self.owner, self.name, self.kind = owner, name, kind

    def get(self):
        return self.owner.get(self.name) if isinstance(self.owner, dict) else getattr(self.owner, self.name)

    def set(self, value) -> None:
        if isinstance(self.owner, dict):
            self.owner[self.name] = value
        else:
            setattr(self.owner, self.name, value)


def slots(value, hint, out: dict) -> None:
    """Every numeric slot under ``value`` (of type ``hint``), by (class, field)."""
    hint = _bare(hint)
    if value is None:
        return
    if dataclasses.is_dataclass(value):
        hint = type(value)
    if dataclasses.is_dataclass(hint) or _is_typeddict(hint):
        for name, inner in _fields(hint).items():
            kind = _numeric_kind(inner)
            if kind:
                out[hint, name].append(Slot(value, name, kind))
            else:
                slots(value.get(name) if isinstance(value, dict) else getattr(value, name), inner, out)
    elif isinstance(value, (list, dict)) and typing.get_args(hint):
        inner = typing.get_args(hint)[-1]  # list[X] or dict[str, X]
        for v in value.values() if isinstance(value, dict) else value:
            slots(v, inner, out)


def _moved(x, kind: str):
    """Another number where ``x`` was (a NaN or None becomes one)."""
    if kind != "scalar" and x is None:
        return None
    if kind == "list":
        return [_moved(v, "scalar") for v in x]
    if kind == "dict":
        return {k: _moved(v, "scalar") for k, v in x.items()}
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return 11.3
    return x + 7 if isinstance(x, int) else x * 1.5 + 11.3


def full_report() -> tuple[Report, dict]:
    """A committed report with every numeric slot holding a number (absent ones filled), and its slots."""
    report = Report.from_dict(copy.deepcopy(load_records(REPO)[FIXTURE].payload))
    found: dict = defaultdict(list)
    slots(report, Report, found)
    for slot in (s for group in found.values() for s in group):
        if slot.get() is None and slot.kind == "scalar":
            slot.set(_moved(None, "scalar"))
    return report, found


def test_every_numeric_report_field_is_rendered_in_report_md_or_marked_json_only():
    """A metric added to the report's types without being drawn (or a reason) fails here: each numeric field
    is moved in every place it occurs, and report.md must change."""
    report, found = full_report()
    missing = sorted(f"{cls.__name__}.{name}" for cls, name in numeric_fields() - set(found))
    assert not missing, f"the fixture holds no {missing}: give it one (FIXTURE or full_report) so it is checked"
    before = report_markdown(report)
    silent = []
    for (cls, name), places in sorted(found.items(), key=lambda kv: (kv[0][0].__name__, kv[0][1])):
        if _json_only(cls, name):
            continue
        kept = [(slot, slot.get()) for slot in places]
        for slot, value in kept:
            slot.set(_moved(value, slot.kind))
        if report_markdown(report) == before:
            silent.append(f"{cls.__name__}.{name}")
        for slot, value in kept:
            slot.set(value)
    assert report_markdown(report) == before
    assert not silent, f"not rendered in report.md and not marked json_only: {silent}"


def test_json_only_marks_name_their_reason():
    for cls, name in numeric_fields():
        reason = _json_only(cls, name)
        assert reason is None or len(reason) > 15, f"{cls.__name__}.{name}: say why it is not rendered"


def _differences(old, new, where: str = "") -> Iterator[str]:
    """Where ``new`` (a report written again) lost or changed what ``old`` held; a key only ``new`` has
    must be null (a field added since, absent from the old file)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old.keys() | new.keys():
            if key not in new:
                yield f"{where}/{key}: dropped"
            elif key not in old:
                if new[key] is not None:
                    yield f"{where}/{key}: added as {new[key]!r}"
            else:
                yield from _differences(old[key], new[key], f"{where}/{key}")
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for k, (a, b) in enumerate(zip(old, new)):
            yield from _differences(a, b, f"{where}/{k}")
    elif json.dumps(old) != json.dumps(new):  # NaN equals NaN here
        yield f"{where}: {old!r} → {new!r}"


@pytest.mark.parametrize("name", [n for n, r in load_records(REPO).items() if r.kind == "report"])
def test_every_committed_report_reads_back_into_the_same_json(name):
    """A field the types rename, drop or reshape (a flat dict of bins, a key left out) fails here."""
    payload = load_records(REPO)[name].payload
    again = Report.from_dict(copy.deepcopy(payload)).to_dict()
    assert list(_differences(payload, again)) == []


def test_a_report_field_unknown_to_the_types_is_refused_not_dropped():
    """Before the types, report.json's dicts were kept as they came and an unknown key went unread."""
    payload = copy.deepcopy(load_records(REPO)[FIXTURE].payload)
    payload["domains"][payload["dataset"]]["distance"]["uuas_new"] = 1.0
    with pytest.raises(ValueError, match="DistanceQuality has no field uuas_new"):
        Report.from_dict(payload)


def _loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


TRAINING = (
    "lightning",
    "torch",
    "matplotlib",
    "parserfree.jobs.main_job",
    "parserfree.jobs.curve",
    "parserfree.distill.train",
)


def _names(modules: set[str], prefixes: tuple[str, ...]) -> Iterator[str]:
    return (m for m in sorted(modules) if any(m == p or m.startswith(p + ".") for p in prefixes))


def test_rendering_the_pages_and_a_curve_loads_no_training_pipeline_and_no_matplotlib():
    """The results page imported ``parserfree.jobs.curve``, which imports the main job: rendering a table pulled
    in PyTorch and the trainer's entry points; report.py drew its figures with matplotlib at import."""
    loaded = _loaded_after(
        "import parserfree.reports.results_page, parserfree.reports.markdown, parserfree.reports.curve_tables"
    )
    assert list(_names(loaded, TRAINING)) == []
