"""bench/README.md is what the committed records of docs/bench/ give (``python -m bench.readme``): one table per
machine type under its record's command, date and commit, or the command that would record it."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from parserfree.encoder.files import write_json
from parserfree.reports.records import RecordError

import bench.readme as readme
from bench.lib.common import MACHINE_TYPES, REPO, machine_slug, parse, record_path

NOT_MEASURED = "not measured on this machine type yet"


def _root(tmp_path: Path, records: dict[str, dict] | None = None) -> Path:
    """A repository root holding the committed bench/README.md and ``records`` (name → payload) alone."""
    (tmp_path / "bench").mkdir()
    shutil.copy(REPO / readme.README, tmp_path / readme.README)
    folder = tmp_path / "docs" / "bench"
    folder.mkdir(parents=True)
    for name, payload in (records or {}).items():
        record = {"command": "python -m bench.trees --record", "date": "2026-12-02", "commit": "abc1234"}
        write_json(folder / f"{name}.json", {**record, "kind": "json", "payload": payload})
    return tmp_path


def _trees(machine_type: str, ratio: float = 66.0) -> dict:
    rows = [{"n": 40, "vectorised_ms": 0.048, "python_walk_ms": 3.2, "ratio": ratio}]
    return {"bench": "trees", "machine": {"machine_type": machine_type}, "rows": rows}


def test_committed_bench_readme_is_what_the_records_give():
    """Catches a number typed into bench/README.md by hand, or a record committed without rendering the page."""
    assert readme.is_current(REPO), "run `python -m bench.readme`"


def test_the_page_has_a_region_for_every_table_and_only_for_those():
    """Catches a table added to TABLES that the page never shows, or a region naming no table."""
    text = (REPO / readme.README).read_text(encoding="utf-8")
    regions = re.findall(r"<!-- results: bench (\S+) -->", text)
    assert sorted(regions) == sorted(readme.TABLES) and len(set(regions)) == len(regions)


@pytest.mark.parametrize("name", sorted(readme.TABLES))
def test_each_tables_command_writes_the_record_its_region_reads(name):
    """Catches a command on the page that records under another name than the one the page reads (its script,
    tag or --record-as), so that running it would never fill the table."""
    table = readme.TABLES[name]
    words = shlex.split(table.command)
    assert words[:3] == ["python", "-m", f"bench.{table.script}"]
    script = __import__(f"bench.{table.script}", fromlist=["arguments", "tables"])
    args = parse(script.arguments(), words[3:])
    for machine_type in MACHINE_TYPES:
        want = f"{name}-{machine_slug(machine_type)}" if table.per_machine else name
        assert record_path(args, machine_type) == REPO / "docs" / "bench" / f"{want}.json"
    assert callable(script.tables)


def test_a_table_without_a_record_names_the_command_that_writes_it(tmp_path):
    text = readme.expected(_root(tmp_path))
    for machine_type in MACHINE_TYPES:
        line = f"**{machine_type}**: {NOT_MEASURED} — `python -m bench.trees --record` on such a machine writes "
        assert line + f"`docs/bench/trees-{machine_slug(machine_type)}.json`." in text


def test_a_record_is_drawn_under_its_machine_type_with_its_source(tmp_path):
    root = _root(tmp_path, {"trees-avx2": _trees("AVX2, no AVX-512"), "trees-no-avx2": _trees("no AVX2", 12.0)})
    region = readme.expected(root).split("<!-- results: bench trees -->")[1].split("<!-- /results -->")[0]
    assert "**AVX2, no AVX-512**\n\n| n | vectorised ms | per-pair walk ms | ratio × |" in region
    assert "| 40 | 0.048 | 3.200 | 66 |" in region and "| 40 | 0.048 | 3.200 | 12 |" in region
    assert "Source: [`trees-avx2.json`](../docs/bench/trees-avx2.json) — `python -m bench.trees --record`" in region
    assert f"**AVX-512 + VNNI**: {NOT_MEASURED}" in region  # still unmeasured there
    assert "**no AVX2**" in region  # a machine type of its own, added by its record


def test_a_hand_edited_table_is_reported_and_rendered_back(tmp_path, capsys):
    root = _root(tmp_path, {"trees-avx2": _trees("AVX2, no AVX-512")})
    assert readme.main(["--root", str(root)]) == 0 and readme.is_current(root)
    page = root / readme.README
    page.write_text(
        page.read_text(encoding="utf-8").replace("| 40 | 0.048 | 3.200 | 66 |", "| 40 | 0.048 | 3.200 | 70 |")
    )
    assert readme.main(["--check", "--root", str(root)]) == 1
    assert "differs from what the records give" in capsys.readouterr().out
    assert readme.main(["--root", str(root)]) == 0 and readme.is_current(root)


def test_a_record_named_for_one_machine_type_but_measured_on_another_is_refused(tmp_path):
    """Catches a record renamed by hand (or copied from another machine) being shown as that machine's."""
    root = _root(tmp_path, {"trees-avx2": _trees("AVX-512 + VNNI")})
    with pytest.raises(RecordError, match=r"trees-avx2\.json was measured on 'AVX-512 \+ VNNI'"):
        readme.expected(root)


def test_a_damaged_record_ends_in_one_line_naming_it(tmp_path, capsys):
    root = _root(tmp_path)
    (root / "docs" / "bench" / "trees-avx2.json").write_text(json.dumps({"command": "x"}))
    assert readme.main(["--check", "--root", str(root)]) == 2
    assert "trees-avx2.json" in capsys.readouterr().err
