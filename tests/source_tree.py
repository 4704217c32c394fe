"""The library's source files and their module names, read from the package map in pyproject.toml.

One home for the tests that read the code itself (the layers, import cycles, error classes, recipe names,
file sizes): every ``.py`` file of every installed package, sub-packages included, named as it is imported.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def package_folders() -> dict[str, Path]:
    """Installed package → its folder (``[tool.setuptools.package-dir]``), e.g. parserfree.core → core/."""
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    return {package: ROOT / folder for package, folder in settings["package-dir"].items()}


def module_name(path: Path) -> str:
    """The import name of a library source file (``core/recipes.py`` → ``parserfree.core.recipes``)."""
    package, folder = max(
        ((p, f) for p, f in package_folders().items() if path.resolve().is_relative_to(f)),
        key=lambda pf: len(pf[1].parts),
    )
    parts = path.resolve().relative_to(folder).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    return ".".join([package, *parts])


def library_files() -> list[tuple[str, Path]]:
    """(module name, path) of every source file of the installed namespace, sorted by path."""
    folders = package_folders()
    files = {p.resolve() for folder in folders.values() for p in folder.rglob("*.py")}
    return sorted(((module_name(p), p) for p in files), key=lambda mp: str(mp[1]))
