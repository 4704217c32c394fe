"""The version is written once (parserfree/__init__.py): pyproject.toml reads it, the installed metadata
reports it, and the changelog has a section for it."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import parserfree

ROOT = Path(__file__).resolve().parents[1]


def test_pyproject_reads_the_version_from_the_package_instead_of_writing_it_again():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "parserfree.__version__"}
    assert metadata.version("parserfree") == parserfree.__version__


def test_the_changelog_has_a_section_for_the_current_version():
    lines = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
    headings = [line for line in lines if line.startswith("## ")]
    assert any(h.split()[1] == parserfree.__version__ for h in headings), headings
