"""The layer structure: no package imports one above it, and nothing generic is installed at the top level.

Layers, lowest first: parserfree.encoder ← parserfree.predictor ← parserfree.core ← parserfree.distill ←
parserfree.export ← the application (parserfree/: commands, jobs, comparison, reports), which nothing
imports. The imports are read from the source with ``ast`` (function-level and type-checking imports
included), so a lazy import cannot hide a dependency.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from source_tree import ROOT, library_files

LAYERS = ("encoder", "predictor", "core", "distill", "export", "app")  # lowest first
FOLDERS = {
    "encoder": ROOT / "encoder",
    "predictor": ROOT / "predictor",
    "core": ROOT / "core",
    "distill": ROOT / "distill",
    "export": ROOT / "export",
    "app": ROOT / "parserfree",
}
MODEL_ONLY_FORBIDDEN = ("spacy", "lightning", "pytorch_lightning", "onnxruntime", "onnx")  # not in encoder/predictor


def layer_of_module(name: str) -> str | None:
    """The layer of an absolute module name inside the project, None for any other module."""
    parts = name.split(".")
    if parts[0] != "parserfree":
        return None
    if len(parts) > 1 and parts[1] in LAYERS[:-1]:
        return parts[1]
    return "app"


def absolute_module(node: ast.ImportFrom, package: str) -> str:
    """The absolute module of a ``from … import`` statement in a file of ``package`` (relative ones resolved)."""
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_modules(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a file of ``package`` (e.g. "parserfree.encoder")."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = absolute_module(node, package)
            if module == "parserfree":  # from parserfree import encoder, cli, ...
                found += [(node.lineno, f"parserfree.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, module))
    return found


def project_imports() -> list[tuple[str, Path, int, str]]:
    """(layer of the file, file, line, imported module) for every import in the project's packages."""
    out = []
    for name, path in library_files():
        file_package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        layer = layer_of_module(name)
        out += [(layer, path, line, module) for line, module in imported_modules(path, file_package)]
    return out


def test_the_import_reader_sees_relative_lazy_and_package_imports(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("from .config import X\nfrom parserfree import cli\n\ndef f():\n    import onnx\n")
    assert imported_modules(source, "parserfree.encoder") == [
        (1, "parserfree.encoder.config"),
        (2, "parserfree.cli"),
        (5, "onnx"),
    ]


def test_no_package_imports_a_layer_above_it():
    upward = []
    for layer, path, line, module in project_imports():
        target = layer_of_module(module)
        if target is not None and LAYERS.index(target) > LAYERS.index(layer):
            upward.append(f"{path.relative_to(ROOT)}:{line}: {layer} imports {module} ({target})")
    assert upward == []


def test_encoder_and_predictor_import_no_parser_trainer_or_onnx():
    found = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for layer, path, line, module in project_imports()
        if layer in ("encoder", "predictor") and module.split(".")[0] in MODEL_ONLY_FORBIDDEN
    ]
    assert found == []


# Inside distill, data sits apart from training: distill.data may use the teacher side (spaCy tagging, the
# parse cache, the cluster, tree checks), never the modules that train (distill/data/__init__.py).
DATA_MAY_IMPORT = ("data", "teacher", "parse_cache", "cluster")


def test_data_imports_no_training_module():
    found = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for layer, path, line, module in project_imports()
        if layer == "distill"
        and path.is_relative_to(ROOT / "distill" / "data")
        and module.startswith("parserfree.distill.")
        and module.split(".")[2] not in DATA_MAY_IMPORT
    ]
    assert found == []
    assert list((ROOT / "distill" / "data").glob("*.py")), "distill/data holds no module"


def test_only_the_parserfree_namespace_is_installed(tmp_path):
    """Run where the repository is not on the path: the layers are found only under parserfree.*."""
    code = (
        "import importlib.util, importlib.metadata, json\n"
        "names = ['core', 'distill', 'encoder', 'predictor', 'export', 'parserfree', 'parserfree.core',\n"
        "         'parserfree.distill', 'parserfree.encoder', 'parserfree.predictor', 'parserfree.export']\n"
        "found = {n: importlib.util.find_spec(n) is not None for n in names}\n"
        "tops = sorted(k for k, v in importlib.metadata.packages_distributions().items() if 'parserfree' in v)\n"
        "print(json.dumps({'found': found, 'top_level': tops}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["found"] == {
        "core": False,
        "distill": False,
        "encoder": False,
        "predictor": False,
        "export": False,
        "parserfree": True,
        "parserfree.core": True,
        "parserfree.distill": True,
        "parserfree.encoder": True,
        "parserfree.predictor": True,
        "parserfree.export": True,
    }
    assert got["top_level"] == ["parserfree"]


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_folder_holds_modules_so_the_checks_are_not_vacuous(layer):
    assert list(FOLDERS[layer].glob("*.py")), f"{FOLDERS[layer]} holds no module"


def test_export_imports_nothing_from_the_training_side():
    """Serving stands apart from training: what both need lives in parserfree.core, below them."""
    found = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for layer, path, line, module in project_imports()
        if layer == "export" and layer_of_module(module) == "distill"
    ]
    assert found == []


# The application's sub-packages, lowest first: each imports only those before it (docs/design.md §9).
APP_ROLES = ("reports", "comparison", "jobs", "commands")


def app_role(name: str) -> str | None:
    """The application sub-package of a module name (parserfree.jobs.curve → jobs), None outside them."""
    parts = name.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "parserfree" and parts[1] in APP_ROLES else None


def test_the_applications_roles_import_downward_only():
    upward = []
    for name, path in library_files():
        role = app_role(name)
        file_package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for line, module in imported_modules(path, file_package):
            target = app_role(module)
            if role and target and APP_ROLES.index(target) > APP_ROLES.index(role):
                upward.append(f"{path.relative_to(ROOT)}:{line}: {role} imports {module} ({target})")
    assert upward == []
    assert all(any(app_role(n) == r for n, _ in library_files()) for r in APP_ROLES)


def import_graph() -> dict[str, set[str]]:
    """Module → the project modules it imports (a name imported from a package counts as that module when
    it is one, else as the package), every import in the file included: lazy, type-checking, relative."""
    modules = {name for name, _ in library_files()}
    graph: dict[str, set[str]] = {}
    for name, path in library_files():
        file_package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = absolute_module(node, file_package)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    targets.add(full if full in modules else base)
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        graph[name] = {_known(t, modules) for t in targets} - {None, name}
    return graph


def _known(name: str, modules: set[str]) -> str | None:
    """``name`` or its closest enclosing project module (a name imported from it), None outside the project."""
    parts = name.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts) if parts else None


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
    return cycles


def test_the_cycle_finder_sees_a_cycle_through_a_lazy_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_back_through_others():
    graph = import_graph()
    assert len(graph) > 100 and graph["parserfree.export.builder"], "the import graph reads no imports"
    assert import_cycles(graph) == []


LIBRARY_LINES = 450  # a file longer than this is split by concept


def test_no_library_or_bench_file_is_over_450_lines():
    files = [path for _, path in library_files()] + sorted((ROOT / "bench").rglob("*.py"))
    long = {
        str(p.relative_to(ROOT)): n
        for p in files
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > LIBRARY_LINES
    }
    assert long == {}


def absolute_project_imports(path: Path) -> list[int]:
    """Lines of the ``from parserfree… import`` / ``import parserfree…`` statements of a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "parserfree":
            found.append(node.lineno)
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == "parserfree" for a in node.names):
            found.append(node.lineno)
    return found


def test_the_import_style_reader_sees_an_absolute_import(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "from .config import X\nfrom parserfree.encoder import Y\n\ndef f():\n    import parserfree.cli\n"
    )
    assert absolute_project_imports(source) == [2, 5]


def test_the_packages_import_each_other_relatively_so_folders_show_the_arrows_python_follows():
    """One import style inside the namespace: ``from ..encoder import …``, never ``from parserfree.encoder``."""
    found = [
        f"{path.relative_to(ROOT)}:{line}" for _, path in library_files() for line in absolute_project_imports(path)
    ]
    assert found == []


ENCODER_KINDS = {"SyntaxEncoder", "PretrainedEncoder"}


def encoder_kind_questions(path: Path) -> list[str]:
    """``isinstance(…, SyntaxEncoder | PretrainedEncoder)`` checks and ``architecture=`` arguments of a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.Call):
            continue
        if getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
            kinds = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            if kinds & ENCODER_KINDS:
                found.append(f"{node.lineno}: isinstance on {', '.join(sorted(kinds & ENCODER_KINDS))}")
        found += [f"{node.lineno}: architecture=" for k in node.keywords if k.arg == "architecture"]
    return found


def test_the_encoder_kind_reader_sees_a_type_check_and_an_architecture_argument(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "isinstance(m.encoder, PretrainedEncoder)\nSyntaxModel(e, p, architecture=a)\nisinstance(x, int)\n"
    )
    assert encoder_kind_questions(source) == ["1: isinstance on PretrainedEncoder", "2: architecture="]


def test_nothing_outside_the_encoder_package_asks_which_encoder_it_holds():
    """The two encoders share one interface (encoder/model.py ``Encoder``); their architecture is the
    encoder config's, so no other layer tests the encoder's type or passes an architecture along."""
    found = [
        f"{path.relative_to(ROOT)}:{where}"
        for _, path in library_files()
        if not path.is_relative_to(ROOT / "encoder")
        for where in encoder_kind_questions(path)
    ]
    assert found == []
