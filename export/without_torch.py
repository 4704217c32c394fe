"""spaCy imported for serving without importing PyTorch, even where it is installed.

``import spacy`` imports thinc, and ``thinc.compat`` runs ``import torch`` inside a ``try`` whenever torch
is installed (8 s and ~1 GB of a serving process for nothing: the bundled tokenizer needs no model). While
spaCy is first imported, ``torch`` is marked absent in ``sys.modules``, so thinc records ``has_torch =
False``; the mark is removed at once, so a later ``import torch`` in the same process still works (thinc
alone then believes torch absent, which only its PyTorch wrappers read; serving uses none).
``tokenizer.load_tokenizer`` imports spaCy this way, so ``ParserFreeModel.load``, ``parserfree serve`` and
``parserfree predict`` run without PyTorch wherever spaCy was not imported before.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

BLOCKED = ("torch",)


@contextlib.contextmanager
def torch_hidden() -> Iterator[None]:
    """While inside, ``import torch`` raises ImportError (unless torch is already imported)."""
    hidden = [name for name in BLOCKED if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None
    try:
        yield
    finally:
        for name in hidden:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]


def import_spacy_without_torch() -> None:
    """Import spaCy (and thinc) with torch hidden, so that neither imports it."""
    with torch_hidden():
        import spacy  # noqa: F401
