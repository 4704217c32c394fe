"""Parsed datasets: labelled examples + the teacher's trees (or gold CoNLL-U trees), split by split.

Joins the dataset and the parse cache: every distinct normalised text of the examples (and of their tree-text
columns, the grammatical version of an agreement item) is parsed once, through the cache, unless the example
already carries a gold tree, and comes back as a ``ParsedExample`` holding words,
heads, punctuation flags, dependency labels and label — everything the collate needs to build distance
matrices and the predictor's targets. A gold tree's labels come from its example's ``columns["deps"]``
(silver-trees, CoNLL-U DEPREL); an example without them has ``deps`` None (no label loss).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.parse import DEFAULT_MODEL, Parse
from ..encoder.schema import ConfigError
from ..encoder.text import normalise_text
from .data.datasets import SPLITS, Dataset
from .parse_cache import parse_cached
from .teacher import SpacyTeacher


@dataclass
class ParseConfig:
    """Which spaCy model parses, and how (``nlp.pipe`` batch size and processes)."""

    spacy_model: str = DEFAULT_MODEL
    """The spaCy model package that parses (e.g. en_core_web_sm, fr_core_news_sm); whitespace: no parser, the
    words of a treebank of pre-segmented text are its space-separated chunks (docs/languages.md)."""
    batch_size: int = 256
    """Texts per nlp.pipe batch."""
    n_process: int = 1
    """Parser processes (nlp.pipe n_process)."""
    tree_text_column: str | None = None
    """Take each example's tree from the parse of this column's text instead of its own (its words kept, the
    words must pair one to one): the parse-leak control reads every agreement item's tree from its grammatical
    version (grammatical_text), so the parser's reaction to the error is not seen."""

    def validate(self) -> None:
        """Raise ConfigError naming the first impossible field."""
        if self.batch_size < 1:
            raise ConfigError(f"parse.batch_size={self.batch_size} must be ≥ 1")
        if self.n_process < 1:
            raise ConfigError(f"parse.n_process={self.n_process} must be ≥ 1")


@dataclass(frozen=True)
class ParsedExample:
    """Words, heads (0-based, root = self), punctuation flags, label and dependency labels (one per word,
    None when the source gives none) of one example."""

    words: tuple[str, ...]
    heads: np.ndarray
    punct: np.ndarray
    label: int | float | None
    text: str
    deps: tuple[str, ...] | None = None


def gold_deps(example) -> tuple[str, ...] | None:
    """The dependency labels of a gold-tree example (``columns["deps"]``, one per word), else None."""
    deps = (example.columns or {}).get("deps")
    if deps is None or example.words is None or len(deps) != len(example.words) or not any(deps):
        return None
    return tuple(str(d) for d in deps)


TREE_TEXT_COLUMNS = (
    "grammatical_text",
)  # columns whose texts are parsed with the examples' (one cache for every recipe)


def _tree_texts(example) -> list[str]:
    columns = example.columns or {}
    return [normalise_text(columns[c]) for c in TREE_TEXT_COLUMNS if columns.get(c)]


def parse_dataset(
    dataset: Dataset,
    config: ParseConfig,
    cache_dir: Path,
    progress: bool = True,
    teacher: SpacyTeacher | None = None,
) -> tuple[dict[str, list[ParsedExample]], dict]:
    """Parse every split through the cache (on the Dask cluster of an enclosing ``cluster.use_cluster``
    block, if any). Returns (splits, stats)."""
    examples = dataset.all_examples()
    parsed_texts = [normalise_text(e.text) for e in examples if e.heads is None]
    stats: dict = {"texts": len(parsed_texts), "gold_trees": len(examples) - len(parsed_texts)}
    wanted = parsed_texts + [t for e in examples if e.heads is None for t in _tree_texts(e)]
    to_parse = list(dict.fromkeys(wanted))  # each distinct text once
    column = config.tree_text_column
    if column is not None and not any((e.columns or {}).get(column) for e in examples):
        raise ConfigError(f"parse.tree_text_column={column}: the examples of {dataset.name} have no such column")
    by_text: dict[str, Parse] = {}
    if to_parse:
        teacher = teacher or SpacyTeacher(config.spacy_model, config.batch_size, config.n_process)
        got, cache_stats = parse_cached(to_parse, teacher, cache_dir, progress)
        stats.update(cache_stats)
        by_text = dict(zip(to_parse, got))
    out: dict[str, list[ParsedExample]] = {}
    stats["tree_text_mismatches"] = 0
    for s in SPLITS:
        out[s] = []
        for e in dataset.splits[s]:
            if e.heads is not None:
                p = Parse(e.words, np.asarray(e.heads, dtype=np.int64), np.asarray(e.punct, dtype=bool), gold_deps(e))
            else:
                p = by_text[normalise_text(e.text)]
                tree_text = (e.columns or {}).get(column) if column else None
                if tree_text:
                    tree, pairs = tree_of(p, by_text[normalise_text(tree_text)])
                    stats["tree_text_mismatches"] += not pairs
                    p = tree
            out[s].append(ParsedExample(p.words, p.heads, p.punct, e.label, e.text, p.deps))
    return out, stats


def tree_of(own: Parse, other: Parse) -> tuple[Parse, bool]:
    """``own``'s words with ``other``'s tree (heads, labels) when their words pair one to one, else ``own``
    unchanged; and whether they paired."""
    if len(own.words) != len(other.words):
        return own, False
    return Parse(own.words, other.heads, own.punct, other.deps), True
