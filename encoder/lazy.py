"""Lazy package exports (PEP 562): a package names its public objects without importing their modules.

The layer packages (``parserfree.encoder``, ``parserfree.predictor``, ``parserfree.export``) list their
public names in ``__init__``, but a module is imported only when one of its names is first used. So
``from parserfree.export import ParserFreeModel`` loads the runtime (onnxruntime, numpy, the spaCy
tokenizer) and not the exporter or the PyTorch model, and ``from parserfree.encoder.vocabulary import
Vocabulary`` does not load PyTorch. The public names are written once, as imports under
``if TYPE_CHECKING:`` in the ``__init__`` (what editors and type checkers read); ``type_checking_exports``
reads that block back as the name → module table, so the run-time table and the static one cannot drift.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Module ``__getattr__`` and ``__dir__`` for ``package``, whose public name ``n`` lives in the module
    ``where[n]``, written as a relative import (``".vocabulary"``); each name is imported on first use."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(where[name], package), name)
        setattr(sys.modules[package], name, value)  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__


def type_checking_exports(init_file: str) -> dict[str, str]:
    """Name → relative module (``".vocabulary"``, ``"..encoder.conventions"``) of every ``from … import``
    under ``if TYPE_CHECKING:`` in a package's ``__init__`` file."""
    with open(init_file, encoding="utf-8") as f:
        tree = ast.parse(f.read(), init_file)
    where = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for item in node.body:
                if isinstance(item, ast.ImportFrom):
                    module = "." * item.level + (item.module or "")
                    where.update({alias.asname or alias.name: module for alias in item.names})
    return where
