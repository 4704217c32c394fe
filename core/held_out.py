"""The held-out sentences an export is checked on, as plain data handed from the training side to export.

An export checks each graph against PyTorch on held-out sentences (``export/parity.py``), checks the
bundled tokenizer against the words the model was trained on (``export/serving_words.py``) and scores
every variant on the test split (``export/evaluation.py``). Those sentences come from the checkpoint's own
dataset, which only the training side reads (``distill/held_out.py``, ``held_out_of``); ``HeldOut`` is what
crosses over, so serving never imports a dataset reader. ``HeldOut.unavailable(reason)`` is what an export
has when the data cannot be read here (a moved file, a corpus not in the cache, or none given): built-in
example sentences for the parity check, no test-split evaluation, and a model trained on a treebank
refused, since its words cannot be checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Sentence = tuple[str, Sequence[str], str]  # (text, the words it was trained on, where it comes from)


@dataclass(frozen=True, kw_only=True)
class HeldOut:
    """What an export reads of the checkpoint's data.

    ``dataset``: its name (None when unavailable); ``parity_texts``: up to 64 normalised texts of the dev
    split (the test split when dev is empty) and ``parity_split`` the split they are from; ``test_texts``
    and ``test_labels``: up to 1000 labelled test texts, evenly spaced; ``treebank``: (train, dev + test)
    sentences with their gold words when the model was trained on a treebank, else None; ``reason``: why the
    data could not be read (every other field empty)."""

    dataset: str | None
    parity_texts: tuple[str, ...] = ()
    parity_split: str | None = None
    test_texts: tuple[str, ...] = ()
    test_labels: tuple[Any, ...] = ()
    treebank: tuple[tuple[Sentence, ...], tuple[Sentence, ...]] | None = None
    reason: str | None = None

    @classmethod
    def unavailable(cls, reason: str) -> HeldOut:
        """No data: ``reason`` says why (it goes into the manifest where a check fell back or was skipped)."""
        return cls(dataset=None, reason=reason)

    @property
    def parity_source(self) -> str:
        """Where the parity texts come from, as the manifest says it (empty when there are none)."""
        return f"{self.parity_split} split of {self.dataset}" if self.parity_texts else ""
