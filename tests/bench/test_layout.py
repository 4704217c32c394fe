"""The bench package's layout (bench/__init__.py): scripts directly in bench/, each with its command line and
``main``; helpers in bench/lib/, never run; no script imports another, none edits ``sys.path`` or reaches for a
private name of the library."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from bench.lib.common import REPO

BENCH = REPO / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if p.name != "__init__.py")
HELPERS = sorted((BENCH / "lib").glob("*.py"))
NAMES = {p.stem for p in SCRIPTS}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import in ``path``, nested ones included."""
    out = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append((node.module, [a.name for a in node.names]))
    return out


def _runs_as_main(path: Path) -> bool:
    return any(
        isinstance(n, ast.If) and isinstance(n.test, ast.Compare) and ast.unparse(n.test) == "__name__ == '__main__'"
        for n in _tree(path).body
    )


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_every_script_has_its_command_line_and_runs_as_a_module(path):
    """Catches a script that ``python -m bench.NAME`` cannot run, or whose options are not built by
    ``script_arguments`` (so it writes no record)."""
    defined = {n.name for n in _tree(path).body if isinstance(n, ast.FunctionDef)}
    assert {"arguments", "main"} <= defined and _runs_as_main(path)
    parser = importlib.import_module(f"bench.{path.stem}").arguments()
    assert path.stem == "readme" or {"--record", "--record-as", "--out"} <= set(parser._option_string_actions)


@pytest.mark.parametrize("path", SCRIPTS + HELPERS, ids=lambda p: str(p.relative_to(BENCH)))
def test_no_module_imports_a_script(path):
    """Catches a script (or helper) importing another script for its code: shared code lives in bench/lib."""
    imported = {module.removeprefix("bench.") for module, _ in _imports(path) if module.startswith("bench.")}
    imported |= {n for module, names in _imports(path) if module == "bench" for n in names}
    assert not imported & NAMES, f"{path.relative_to(REPO)} imports the script(s) {sorted(imported & NAMES)}"


@pytest.mark.parametrize("path", HELPERS, ids=lambda p: p.stem)
def test_helpers_are_never_run(path):
    assert not _runs_as_main(path)


@pytest.mark.parametrize("path", SCRIPTS + HELPERS, ids=lambda p: str(p.relative_to(BENCH)))
def test_no_module_edits_sys_path_or_imports_a_private_name_of_the_library(path):
    """Catches ``sys.path`` inserts (the package runs with ``python -m``) and imports such as
    ``from parserfree.jobs.main_job import _export_stage``, which tie the bench to the library's insides."""
    assert "sys.path" not in path.read_text(encoding="utf-8")
    private = [
        f"{module}.{name}"
        for module, names in _imports(path)
        if module.startswith("parserfree")
        for name in names
        if name.startswith("_")
    ]
    private += [module for module, _ in _imports(path) if any(p.startswith("_") for p in module.split(".")[1:])]
    assert not private, f"{path.relative_to(REPO)} imports private name(s) {private}"
