"""Built-in datasets: the one registry of names a user can give as ``data.dataset`` instead of a file.

Each entry says how to load the raw examples (from a pinned package archive, through the cache), which
field the label comes from, the task it is meant for, the class order of string labels, where the data
comes from (printed by ``parserfree data``) and what its content is (``digest``: what a stage built from it
records, so a change of its text, its spaCy model or its build code is never silently reused) and the
spaCy model of its language (what ``parserfree parse`` parses it with unless told). Names: the four VADER
corpora (sentiment scores), ``pl-reviews`` (review sentences, binary), ``oanc``, ``wsj``, ``brown`` and
``nlp-corpus`` (unlabeled text), ``agreement`` (subject–verb agreement minimal pairs built from all of
them; ``agreement-number``: the same items as number prediction) and ``silver-trees`` (all of their sentences with spaCy's trees, for pre-training the predictor); in
French ``fr-reviews`` (review sentences, binary) and ``silver-trees-fr`` (its sentences with
fr_core_news_sm's trees).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from parserfree.distill import agreement, agreement_views, npm_corpora, pattern_corpora, silver_trees, vader
from parserfree.distill.builtin_text import FRENCH, english
from parserfree.distill.readers import DataError, RawExample
from parserfree.distill.teacher import DEFAULT_MODEL

if TYPE_CHECKING:
    from parserfree.distill.datasets import DataConfig

Loader = Callable[["DataConfig"], list[RawExample]]
Digest = Callable[["DataConfig"], dict | str]


def _cache(config: DataConfig) -> Path | None:
    return Path(config.cache_dir) if config.cache_dir else None


@dataclass(frozen=True)
class BuiltinDataset:
    """How one built-in dataset is loaded, identified and described."""

    load: Loader
    digest: Digest
    task: str  # the task it is meant for (the default label view)
    citation: str
    label_field: str = "score"
    label_names: tuple[str, ...] | None = None  # class order of string labels (index = label id)
    spacy_model: str = DEFAULT_MODEL  # the spaCy model of its language


def _archived(spec) -> Digest:
    """A corpus read straight from one pinned archive: the archive's sha256 identifies it."""
    return lambda config: f"{spec.filename}@{spec.sha256}"


def _vader(name: str) -> BuiltinDataset:
    return BuiltinDataset(
        lambda c: vader.load_builtin(name, _cache(c), c.archive), _archived(vader.ARCHIVE), "binary", vader.CITATION
    )


def _pattern(name: str, task: str) -> BuiltinDataset:
    return BuiltinDataset(
        lambda c: pattern_corpora.load_corpus(name, _cache(c), c.archive),
        _archived(pattern_corpora.ARCHIVE),
        task,
        pattern_corpora.CITATIONS[name],
        "label",
    )


def _french_reviews() -> BuiltinDataset:
    """fr-reviews: its archive, and the rule that cuts the reviews into sentences (spaCy's sentencizer)."""
    return BuiltinDataset(
        lambda c: pattern_corpora.load_corpus("fr-reviews", _cache(c), c.archive),
        lambda c: {"archive": _archived(pattern_corpora.ARCHIVE)(c), "sentences": pattern_corpora.sentence_rule("fr")},
        "binary",
        pattern_corpora.CITATIONS["fr-reviews"],
        "label",
        spacy_model=FRENCH.model,
    )


def _npm(name: str) -> BuiltinDataset:
    return BuiltinDataset(
        lambda c: npm_corpora.load_corpus(name, _cache(c), c.archive),
        _archived(npm_corpora.ARCHIVES[name]),
        "none",
        npm_corpora.CITATIONS[name],
        "label",
    )


def _agreement(task: str) -> BuiltinDataset:
    """One view of the agreement items (``agreement.TASKS``): grammaticality or number prediction."""
    return BuiltinDataset(
        lambda c: agreement_views.load_agreement(
            _cache(c),
            c.archive,
            c.split,
            train_pairs=c.agreement_train_pairs,
            train_balance=c.agreement_train_balance,
            text=english(c.builtin_corpora),
            task=task,
        ),
        lambda c: agreement_views.items_digest(_cache(c), c.archive, task, text=english(c.builtin_corpora)),
        "binary",
        agreement.CITATION if task == "grammaticality" else agreement.NUMBER_CITATION,
        "label",
        agreement.LABEL_NAMES if task == "grammaticality" else agreement.NUMBER_LABELS,
    )


BUILTIN: dict[str, BuiltinDataset] = {
    **{name: _vader(name) for name in vader.CORPORA},
    "pl-reviews": _pattern("pl-reviews", "binary"),
    "oanc": _pattern("oanc", "none"),
    "wsj": _pattern("wsj", "none"),
    **{name: _npm(name) for name in npm_corpora.ARCHIVES},
    "agreement": _agreement("grammaticality"),
    "agreement-number": _agreement("number"),
    "silver-trees": BuiltinDataset(
        lambda c: silver_trees.load_silver_trees(_cache(c), c.archive, c.split, text=english(c.builtin_corpora)),
        lambda c: silver_trees.digest(_cache(c), c.archive, text=english(c.builtin_corpora)),
        "none",
        silver_trees.CITATION,
        "label",
    ),
    "fr-reviews": _french_reviews(),
    "silver-trees-fr": BuiltinDataset(
        lambda c: silver_trees.load_silver_trees(_cache(c), c.archive, c.split, text=FRENCH),
        lambda c: silver_trees.digest(_cache(c), c.archive, FRENCH.model, FRENCH),
        "none",
        silver_trees.CITATION_FR,
        "label",
        spacy_model=FRENCH.model,
    ),
}


def builtin(name: str) -> BuiltinDataset:
    """The registry entry of a built-in dataset; DataError naming the known ones otherwise."""
    entry = BUILTIN.get(name)
    if entry is None:
        raise DataError(f"unknown built-in dataset '{name}'; choose one of {sorted(BUILTIN)}")
    return entry


def load_raw(name: str, config: DataConfig) -> list[RawExample]:
    """Raw examples of the built-in dataset ``name`` (``config.dataset``, a single name) under ``config``."""
    return builtin(name).load(config)
