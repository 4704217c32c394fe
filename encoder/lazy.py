"""Lazy package exports (PEP 562): a package names its public objects without importing their modules.

The layer packages (``parserfree.encoder``, ``parserfree.predictor``, ``parserfree.export``) list their
public names in ``__init__``, but a module is imported only when one of its names is first used. So
``from parserfree.export import ParserFreeModel`` loads the runtime (onnxruntime, numpy, the spaCy
tokenizer) and not the exporter or the PyTorch model, and ``from parserfree.encoder.vocabulary import
Vocabulary`` does not load PyTorch.
"""

from __future__ import annotations

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
