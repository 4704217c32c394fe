"""A checkpoint's held-out sentences, read from its own data for the export (``core.held_out.HeldOut``).

The export checks its graphs on these and never reads a dataset itself: the parity texts (dev split, or
test when dev is empty), the labelled test texts every variant is scored on, and, for a model trained on a
treebank, the gold words its bundled tokenizer must reproduce. The data is read only from files and the
cache (``local_dataset``: no download, no build), so an export never fetches anything; when it cannot be
read, ``held_out_of`` says why and the export falls back (``HeldOut.unavailable``).
"""

from __future__ import annotations

from pathlib import Path

from ..core.held_out import HeldOut, Sentence
from ..encoder.text import normalise_text
from .data.archives import cached_only
from .data.builtin import BUILTIN
from .data.datasets import DataConfig, Dataset, dataset_name, dataset_sources, load_dataset

PARITY_TEXTS = 64  # held-out texts of the parity check (evenly spaced through the split)
TEST_EXAMPLES = 1000  # labelled test texts every bundle variant is scored on (evenly spaced)


def local_dataset(experiment: dict) -> Dataset:
    """The checkpoint's dataset (``experiment['data']``) when it loads from files and the cache alone;
    FileNotFoundError when it would need a download or a build, DataError when it cannot be read."""
    config = DataConfig(**experiment["data"])
    for name in dataset_sources(config.dataset):  # a list: joined text; a mapping: a file per split
        if name not in BUILTIN and not Path(name).is_file():
            raise FileNotFoundError(f"{name} is not available locally")
    try:
        with cached_only():
            return load_dataset(config)
    except FileNotFoundError as e:
        raise FileNotFoundError(f"{dataset_name(config.dataset)} is not available locally ({e})") from None


def _evenly(items: list, limit: int) -> list:
    """At most ``limit`` of ``items``, evenly spaced from the first."""
    step = max(1, len(items) // limit) if items else 1
    return items[::step][:limit]


def _treebank(dataset: Dataset) -> tuple[tuple[Sentence, ...], tuple[Sentence, ...]] | None:
    """(train, dev + test) sentences with their gold words, or None when the data has no words of its own."""
    if not any(e.words is not None for e in dataset.all_examples()):
        return None

    def sentences(splits: tuple[str, ...]) -> tuple[Sentence, ...]:
        return tuple((e.text, e.words, e.source) for s in splits for e in dataset.splits[s] if e.words is not None)

    return sentences(("train",)), sentences(("dev", "test"))


def held_out_of(experiment: dict) -> HeldOut:
    """What the export of a checkpoint trained under ``experiment`` checks and scores its graphs on, or
    ``HeldOut.unavailable`` with the reason when its data cannot be read here."""
    try:
        dataset = local_dataset(experiment)
    except Exception as e:  # noqa: BLE001 — a moved file, a corpus not in the cache, unreadable data
        return HeldOut.unavailable(f"{type(e).__name__}: {e}")
    split = "dev" if dataset.splits["dev"] else "test"
    parity = [t for t in (normalise_text(e.text) for e in dataset.splits[split]) if t]
    tests = [e for e in dataset.splits["test"] if normalise_text(e.text) and e.label is not None]
    tests = _evenly(tests, TEST_EXAMPLES)
    return HeldOut(
        dataset=dataset.name,
        parity_texts=tuple(_evenly(parity, PARITY_TEXTS)),
        parity_split=split,
        test_texts=tuple(e.text for e in tests),
        test_labels=tuple(e.label for e in tests),
        treebank=_treebank(dataset),
    )
