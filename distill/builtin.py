"""Built-in datasets: the one registry of names a user can give as ``data.dataset`` instead of a file.

Each entry says how to load the raw examples (from a pinned source archive, through the cache), which
field the label comes from, the task it is meant for, the class order of string labels, and where the
data comes from (printed by ``parserfree data``). Names: the four VADER corpora (sentiment scores),
``pl-reviews`` (review sentences, binary), ``oanc`` and ``wsj`` (unlabeled text), ``agreement``
(subject–verb agreement built from all of them) and ``silver-trees`` (all of their sentences with spaCy's
trees, for pre-training the predictor).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from parserfree.distill import agreement, pattern_corpora, silver_trees, vader
from parserfree.distill.readers import DataError, RawExample

# (cache_dir or None, archive path(s) or None, split fractions) → raw examples
Loader = Callable[[Path | None, str | None, list[float]], list[RawExample]]


@dataclass(frozen=True)
class BuiltinDataset:
    """How one built-in dataset is loaded and described."""

    load: Loader
    task: str  # the task it is meant for (the default label view)
    citation: str
    label_field: str = "score"
    label_names: tuple[str, ...] | None = None  # class order of string labels (index = label id)


def _vader(name: str) -> BuiltinDataset:
    return BuiltinDataset(lambda cache, archive, _: vader.load_builtin(name, cache, archive), "binary", vader.CITATION)


def _pattern(name: str, task: str) -> BuiltinDataset:
    return BuiltinDataset(lambda cache, archive, _: pattern_corpora.load_corpus(name, cache, archive), task,
                          pattern_corpora.CITATIONS[name], "label")


BUILTIN: dict[str, BuiltinDataset] = {
    **{name: _vader(name) for name in vader.CORPORA},
    "pl-reviews": _pattern("pl-reviews", "binary"),
    "oanc": _pattern("oanc", "none"),
    "wsj": _pattern("wsj", "none"),
    "agreement": BuiltinDataset(agreement.load_agreement, "binary", agreement.CITATION, "label", agreement.LABEL_NAMES),
    "silver-trees": BuiltinDataset(silver_trees.load_silver_trees, "none", silver_trees.CITATION, "label"),
}


def load_raw(name: str, cache_dir: str | Path | None, archive: str | None, fractions: list[float]) -> list[RawExample]:
    """Raw examples of a built-in dataset."""
    entry = BUILTIN.get(name)
    if entry is None:
        raise DataError(f"unknown built-in dataset '{name}'; choose one of {sorted(BUILTIN)}")
    return entry.load(Path(cache_dir) if cache_dir else None, archive, fractions)
