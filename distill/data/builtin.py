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
from typing import Protocol

from ...core.parse import DEFAULT_MODEL
from . import agreement, agreement_views, npm_corpora, pattern_corpora, silver_trees, vader
from .archives import SourceArchive
from .builtin_text import ENGLISH, FRENCH, BuiltinText, english
from .readers import DataError, RawExample
from .static_vectors import MD_WHEEL


class SourceSettings(Protocol):
    """The data settings a built-in loader reads (``datasets.DataConfig`` has them all; the registry names
    only these, so that it need not import the module that validates settings against it)."""

    dataset: str | list[str] | dict[str, str]
    cache_dir: str | None
    archive: str | None
    split: list[float]
    agreement_train_pairs: bool
    agreement_train_balance: str
    agreement_split: str
    builtin_corpora: list[str] | None


Loader = Callable[[SourceSettings], list[RawExample]]
Digest = Callable[[SourceSettings], dict | str]


def _cache(config: SourceSettings) -> Path | None:
    return Path(config.cache_dir) if config.cache_dir else None


@dataclass(frozen=True, kw_only=True)
class BuiltinDataset:
    """How one built-in dataset is loaded, identified and described (keyword-only: every entry names its fields)."""

    load: Loader
    digest: Digest
    task: str  # the task it is meant for (the default label view)
    citation: str
    archives: tuple[SourceArchive, ...]  # the pinned package archives it is read from (``--archive`` offline)
    label_field: str = "score"
    label_names: tuple[str, ...] | None = None  # class order of string labels (index = label id)
    spacy_model: str = DEFAULT_MODEL  # the spaCy model of its language


def _archived(spec: SourceArchive) -> Digest:
    """A corpus read straight from one pinned archive: the archive's sha256 identifies it."""
    return lambda config: f"{spec.filename}@{spec.sha256}"


def _from_archive(spec: SourceArchive, **fields) -> BuiltinDataset:
    """A corpus read straight from one pinned archive, which is also what identifies it."""
    return BuiltinDataset(digest=_archived(spec), archives=(spec,), **fields)


def _vader(name: str) -> BuiltinDataset:
    return _from_archive(
        vader.ARCHIVE,
        load=lambda c: vader.load_builtin(name, _cache(c), c.archive),
        task="binary",
        citation=vader.CITATION,
    )


def _pattern(name: str, task: str) -> BuiltinDataset:
    return _from_archive(
        pattern_corpora.ARCHIVE,
        load=lambda c: pattern_corpora.load_corpus(name, _cache(c), c.archive),
        task=task,
        citation=pattern_corpora.CITATIONS[name],
        label_field="label",
    )


def _french_reviews() -> BuiltinDataset:
    """fr-reviews: its archive, and the rule that cuts the reviews into sentences (spaCy's sentencizer)."""
    return BuiltinDataset(
        load=lambda c: pattern_corpora.load_corpus("fr-reviews", _cache(c), c.archive),
        digest=lambda c: {
            "archive": _archived(pattern_corpora.ARCHIVE)(c),
            "sentences": pattern_corpora.sentence_rule("fr"),
        },
        task="binary",
        citation=pattern_corpora.CITATIONS["fr-reviews"],
        archives=(pattern_corpora.ARCHIVE,),
        label_field="label",
        spacy_model=FRENCH.model,
    )


def _npm(name: str) -> BuiltinDataset:
    return _from_archive(
        npm_corpora.ARCHIVES[name],
        load=lambda c: npm_corpora.load_corpus(name, _cache(c), c.archive),
        task="none",
        citation=npm_corpora.CITATIONS[name],
        label_field="label",
    )


_CORPORA: dict[str, BuiltinDataset] = {
    **{name: _vader(name) for name in vader.CORPORA},
    "pl-reviews": _pattern("pl-reviews", "binary"),
    "oanc": _pattern("oanc", "none"),
    "wsj": _pattern("wsj", "none"),
    **{name: _npm(name) for name in npm_corpora.ARCHIVES},
    "fr-reviews": _french_reviews(),
}


def _text_archives(text: BuiltinText) -> tuple[SourceArchive, ...]:
    """The archives a language's built-in text is read from (each once, in corpus order)."""
    return tuple(dict.fromkeys(a for name in text.corpora for a in _CORPORA[name].archives))


def _agreement(task: str) -> BuiltinDataset:
    """One view of the agreement items (``agreement.TASKS``): grammaticality or number prediction."""
    return BuiltinDataset(
        load=lambda c: agreement_views.load_agreement(
            _cache(c),
            c.archive,
            c.split,
            train_pairs=c.agreement_train_pairs,
            train_balance=c.agreement_train_balance,
            split=c.agreement_split,
            text=english(c.builtin_corpora),
            task=task,
        ),
        digest=lambda c: agreement_views.items_digest(
            _cache(c), c.archive, task, text=english(c.builtin_corpora), split=c.agreement_split
        ),
        task="binary",
        citation=agreement.CITATION if task == "grammaticality" else agreement.NUMBER_CITATION,
        archives=_text_archives(ENGLISH),
        label_field="label",
        label_names=agreement.LABEL_NAMES if task == "grammaticality" else agreement.NUMBER_LABELS,
    )


BUILTIN: dict[str, BuiltinDataset] = {
    **{name: entry for name, entry in _CORPORA.items() if name != "fr-reviews"},
    "agreement": _agreement("grammaticality"),
    "agreement-number": _agreement("number"),
    "silver-trees": BuiltinDataset(
        load=lambda c: silver_trees.load_silver_trees(_cache(c), c.archive, c.split, text=english(c.builtin_corpora)),
        digest=lambda c: silver_trees.digest(_cache(c), c.archive, text=english(c.builtin_corpora)),
        task="none",
        citation=silver_trees.CITATION,
        archives=_text_archives(ENGLISH),
        label_field="label",
    ),
    "fr-reviews": _CORPORA["fr-reviews"],
    "silver-trees-fr": BuiltinDataset(
        load=lambda c: silver_trees.load_silver_trees(_cache(c), c.archive, c.split, text=FRENCH),
        digest=lambda c: silver_trees.digest(_cache(c), c.archive, FRENCH.model, FRENCH),
        task="none",
        citation=silver_trees.CITATION_FR,
        archives=_text_archives(FRENCH),
        label_field="label",
        spacy_model=FRENCH.model,
    ),
}

# Every archive a user may give with ``--archive`` (comma-separated) to run offline: the built-in datasets'
# and the static vectors' wheel (``encoder.static_vectors``).
ARCHIVES: tuple[SourceArchive, ...] = tuple(
    dict.fromkeys([a for entry in BUILTIN.values() for a in entry.archives] + [MD_WHEEL])
)


def builtin(name: str) -> BuiltinDataset:
    """The registry entry of a built-in dataset; DataError naming the known ones otherwise."""
    entry = BUILTIN.get(name)
    if entry is None:
        raise DataError(f"unknown built-in dataset '{name}'; choose one of {sorted(BUILTIN)}")
    return entry


def load_raw(name: str, config: SourceSettings) -> list[RawExample]:
    """Raw examples of the built-in dataset ``name`` (``config.dataset``, a single name) under ``config``."""
    return builtin(name).load(config)


def builtin_table() -> str:
    """The built-in datasets, one line each from the registry: name, task, spaCy model, archives, source."""
    lines = ["| dataset | task | spaCy model | archives | source |", "|---|---|---|---|---|"]
    for name, entry in BUILTIN.items():
        archives = ", ".join(f"`{a.filename}`" for a in entry.archives)
        lines.append(f"| `{name}` | {entry.task} | {entry.spacy_model} | {archives} | {entry.citation} |")
    return "\n".join(lines) + "\n"
