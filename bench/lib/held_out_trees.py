"""Held-out sentences with trees, and a parser system's tree of each: what the parser benches score.

``held_out`` reads a split's sentences with a labelled tree (the teacher's through the parse cache, or a
CoNLL-U file's own), grouped by corpus; ``predict`` runs a ``parse_speed.System`` over them in length-sorted
batches and returns each sentence's ``Tree`` (D̂, heads, labels) in input order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from parserfree.distill.data.datasets import DataConfig, load_dataset
from parserfree.distill.parsing import ParseConfig, ParsedExample, parse_dataset
from parserfree.export.timing import batches

from bench.lib.parse_speed import BATCH, System


def held_out(
    dataset: str, split: str, cache_dir: str | None, spacy_model: str, per_group: int | None, max_len: int
) -> dict[str, list[ParsedExample]]:
    """The split's examples with a labelled tree, up to ``max_len`` words, by corpus (``columns["corpus"]``,
    else the dataset's name); at most ``per_group`` each, evenly spaced."""
    data = load_dataset(DataConfig(dataset=dataset, task="none", cache_dir=cache_dir))
    parsed, _ = parse_dataset(
        data, ParseConfig(spacy_model=spacy_model), Path(cache_dir) if cache_dir else _cache(), progress=False
    )
    groups: dict[str, list[ParsedExample]] = defaultdict(list)
    for example, p in zip(data.splits[split], parsed[split]):
        if p.deps is not None and 0 < len(p.words) <= max_len:
            groups[(example.columns or {}).get("corpus", Path(dataset).name)].append(p)
    if per_group:
        groups = {g: exs[:: max(1, len(exs) // per_group)][:per_group] for g, exs in groups.items()}
    return dict(sorted(groups.items()))


def _cache() -> Path:
    from parserfree.distill.data.archives import default_cache_dir

    return Path(default_cache_dir())


@dataclass(frozen=True)
class Tree:
    distances: np.ndarray
    heads: np.ndarray
    labels: tuple[str, ...] | None


def predict(system: System, words: Sequence[Sequence[str]]) -> list[Tree]:
    """The system's tree of every word list, in length-sorted batches of BATCH (results in input order)."""
    order = sorted(range(len(words)), key=lambda i: len(words[i]))
    out: list[Tree | None] = [None] * len(words)
    for rows in batches(order, BATCH):
        got = system.run([list(words[i]) for i in rows])
        for b, i in enumerate(rows):
            n = len(words[i])
            labels = tuple(system.labels[k] for k in got["dep_labels"][b, :n]) if "dep_labels" in got else None
            out[i] = Tree(got["distances"][b, :n, :n], got["heads"][b, :n], labels)
    return out
