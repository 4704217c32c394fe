"""The layout shows itself to tools: the lazy layer packages name their exports statically, and a
development install lets a static analyser (which runs no import hook) reach each layer's source file.

setuptools' default editable install serves ``parserfree.encoder`` (the folder ./encoder) through an import
hook that editors and type checkers never run; ``editable_mode=strict`` builds a folder tree of links that
they follow. These tests fail on the default mode: re-install with the README's set-up command.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parserfree.encoder.lazy import type_checking_exports

ROOT = Path(__file__).resolve().parent.parent
INSTALL = 'pip install -e ".[dev]" --config-settings editable_mode=strict'
LAZY_PACKAGES = ("parserfree.encoder", "parserfree.predictor", "parserfree.export")


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_each_lazy_name_is_the_object_its_type_checking_import_names(package):
    module = importlib.import_module(package)
    where = type_checking_exports(module.__file__)
    assert sorted(module.__all__) == sorted(where) and len(where) >= 4
    for name, source in where.items():
        assert getattr(module, name) is getattr(importlib.import_module(source, package), name), name


def _static_search_path() -> list[str]:
    """sys.path as a static analyser builds it for this environment: site-packages plus the folder lines
    of its .pth files (lines that run code — an import hook — are skipped), read outside the repository."""
    code = (
        "import json, os, site\n"
        "paths = []\n"
        "for sp in site.getsitepackages():\n"
        "    paths.append(sp)\n"
        "    for name in sorted(os.listdir(sp)) if os.path.isdir(sp) else []:\n"
        "        if name.endswith('.pth'):\n"
        "            for line in open(os.path.join(sp, name), encoding='utf-8'):\n"
        "                line = line.strip()\n"
        "                if line and not line.startswith(('#', 'import ', 'import\\t')):\n"
        "                    paths.append(os.path.join(sp, line))\n"
        "print(json.dumps(paths))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code], cwd="/", env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("parserfree/encoder/model.py", "encoder/model.py"),
        ("parserfree/predictor/syntax_model.py", "predictor/syntax_model.py"),
        ("parserfree/core/recipes.py", "core/recipes.py"),
        ("parserfree/distill/co_training.py", "distill/co_training.py"),
        ("parserfree/export/runtime.py", "export/runtime.py"),
        ("parserfree/commands/cli.py", "parserfree/commands/cli.py"),
    ],
)
def test_a_static_search_path_reaches_each_layers_source_file(module, source):
    found = [Path(p) / module for p in _static_search_path() if (Path(p) / module).exists()]
    assert found, f"no folder on the static search path holds {module}: install with `{INSTALL}`"
    assert os.path.samefile(found[0], ROOT / source), f"{found[0]} is not {ROOT / source}"


def test_an_editor_resolves_a_layer_import_to_its_source_file():
    jedi = pytest.importorskip("jedi")  # an optional tool: editors' go-to-definition (pylsp, VS Code's Jedi)
    code = "from parserfree.encoder import SyntaxEncoder\nfrom parserfree.predictor.sources import DistanceSource\n"
    project = jedi.Project(ROOT, environment_path=sys.prefix)
    script = jedi.Script(code, path=ROOT / "parserfree" / "_editor_probe.py", project=project)
    lines = code.splitlines()
    targets = {n: script.goto(n, len(lines[n - 1]) - 2, follow_imports=True) for n in (1, 2)}  # on the imported name
    assert all(targets.values()), f"jedi resolves nothing: install with `{INSTALL}`"
    assert os.path.samefile(targets[1][0].module_path, ROOT / "encoder" / "model.py")
    assert os.path.samefile(targets[2][0].module_path, ROOT / "predictor" / "sources.py")
