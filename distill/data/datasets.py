"""Datasets: raw examples → labelled examples in deterministic train/dev/test splits.

Sits between the readers (built-in VADER corpora or user files) and the parser teacher. It fixes the
text normalisation shared by training and inference (``normalise_text``), turns raw labels into the
task's label view, and splits by a hash of the normalised text so that duplicate sentences never cross
splits and the split never depends on file order (built-in datasets may split by a group instead — the
review of a sentence — or fix the split themselves, e.g. a split stratified on a column). A user's own
split is fixed the same way (``RawExample.split``): a file per split (``data.dataset: {train: …, dev: …,
test: …}``; without a dev file, dev is carved from the train file by the hash) or a split column
(``data.split_column``).

Label views: ``binary`` (numeric scores: > 0 positive, < 0 negative, exactly 0 dropped — a neutral
sentence has no binary label; string labels: exactly two classes), ``regression`` (the real-valued
score), ``classification`` (string or integer labels, names sorted), ``none`` (unlabeled text).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...encoder.schema import ConfigError
from ...encoder.text import normalise_text
from .agreement import (
    ATTRACTOR_BUCKETS,
    DEFAULT_SPLIT,
    DISTANCE_BUCKETS,
    attractor_bucket,
    distance_bucket,
)
from .agreement_splits import check_split_settings
from .builtin import BUILTIN, load_raw
from .builtin_text import english
from .readers import SPLIT_NAMES, DataError, RawExample, read_file
from .splits import raw_split, split_of

TASKS = ("binary", "regression", "classification", "none", "masked_lm")
UNLABELLED_TASKS = ("none", "masked_lm")  # text only: predictor pre-training, language-model pre-training
SPLITS = ("train", "dev", "test")


def labelled(task: str) -> bool:
    """Whether ``task`` reads a label from the data (``none`` and ``masked_lm`` read text only)."""
    return task not in UNLABELLED_TASKS


@dataclass
class DataConfig:
    """Where the examples come from and how they are labelled and split."""

    dataset: str | list[str] | dict[str, str] = "vader-movies"
    """A built-in dataset's name (parserfree data --help lists them) or a file path; a list joins several as
    unlabeled text (task none: predictor pre-training), each keeping its own split; a mapping {train: path,
    dev: path, test: path} is a fixed split, a file per split kept as given (dev optional: without it, dev
    is carved from the train file by the hash, in the ratio of data.split's train and dev shares)."""
    format: str | None = None
    """csv, tsv, jsonl, txt or conllu (null: from the file's extension)."""
    text_column: str = "text"
    """The column or field holding the text (csv, tsv, jsonl)."""
    label_column: str | None = "label"
    """The column or field holding the label (null: unlabeled)."""
    task: str = "binary"
    """Label view: binary (scores > 0 / < 0, exactly 0 dropped; or two classes), regression, classification, none
    (text only) or masked_lm (text only, the words are the targets: language-model pre-training)."""
    split: list[float] = field(default_factory=lambda: [0.8, 0.1, 0.1])
    """Train, dev and test shares, split by a hash of the normalised text (built-in datasets fix their own; a
    file of your own may too: data.split_column, or a file per split in data.dataset)."""
    split_column: str | None = None
    """The column or field of your own file whose values (train, dev, test; validation / valid mean dev) fix
    each row's split instead of the hash; CoNLL-U: a '# NAME = VALUE' comment (null: split by data.split)."""
    max_examples: int | None = None
    """Keep only the first N examples after labelling (smoke runs; null: all)."""
    train_fraction: float = 1.0
    """Keep this share of the training split (the low-resource curve)."""
    train_sample_seed: int = 0
    """Which share train_fraction keeps: nested subsets, one order per seed."""
    cache_dir: str | None = None
    """Cache folder of built-in data and parses (null: $PARSERFREE_CACHE or ~/.cache/parserfree)."""
    archive: str | None = None
    """Local source archive(s) of built-in data for offline use, comma-separated."""
    agreement_train_pairs: bool = False
    """agreement: train on both versions of every training sentence, not one."""
    agreement_train_balance: str = "cue"
    """agreement: balance the training sentences as dev and test are (cue), on subject number alone (number), or not at all (none)."""
    agreement_split: str = DEFAULT_SPLIT
    """agreement: how its sentences are split — balanced (dev and test stratified on attractors) or nearest_noun
    (the generalisation split: train and dev hold only sentences whose nearest noun before the verb has the
    subject's number, test only those whose nearest noun is an attractor) or large_test (a test of 6,066 items
    on all nine corpora, balanced on subject number within cue-free cells; docs/data.md)."""
    builtin_corpora: list[str] | None = None
    """agreement and silver-trees: the English built-in corpora they are made of (null: every one that can be had)."""
    unlabelled: str | None = None
    """A text file of unlabelled in-domain texts, one per line, that ``parserfree soft-labels`` adds to the
    transfer set a teacher labels for a student (null: the dataset's built-in transfer set, if any)."""

    def validate(self) -> None:
        """Raise ConfigError naming the first impossible field."""
        if self.task not in TASKS:
            raise ConfigError(f"data.task='{self.task}' must be one of {TASKS}")
        if len(self.split) != 3 or any(f < 0 for f in self.split) or abs(sum(self.split) - 1.0) > 1e-6:
            raise ConfigError(f"data.split={self.split} must be three non-negative fractions summing to 1")
        self._validate_own_splits()
        if self.max_examples is not None and self.max_examples < 1:
            raise ConfigError(f"data.max_examples={self.max_examples} must be ≥ 1")
        try:
            check_split_settings(self.agreement_train_balance, self.agreement_split)
        except ValueError as error:
            raise ConfigError(str(error)) from None
        if self.builtin_corpora is not None:
            if not self.builtin_corpora:
                raise ConfigError("data.builtin_corpora=[] must name some of the English corpora (null: all)")
            try:
                english(self.builtin_corpora)
            except ValueError as error:
                raise ConfigError(f"data.builtin_corpora: {error}") from None
        if not 0 < self.train_fraction <= 1:
            raise ConfigError(f"data.train_fraction={self.train_fraction} must be in (0, 1]")

    def _validate_own_splits(self) -> None:
        """A mapping of split files and ``split_column``: each error names the setting."""
        if isinstance(self.dataset, dict):
            split_files(self.dataset)  # raises ConfigError naming the split or file
            if self.split_column is not None:
                raise ConfigError(
                    f"data.split_column='{self.split_column}' fixes the split of each row of one file, but "
                    "data.dataset already names a file per split: set one of them"
                )
        if self.split_column is None:
            return
        if not isinstance(self.split_column, str) or not self.split_column.strip():
            raise ConfigError(f"data.split_column={self.split_column!r} must name a column (null: split by data.split)")
        if isinstance(self.dataset, str) and self.dataset in BUILTIN:
            raise ConfigError(
                f"data.split_column='{self.split_column}' names a column of a file of your own; "
                f"the built-in dataset '{self.dataset}' has its own splits"
            )


def split_files(files: Mapping[str, Any]) -> dict[str, str]:
    """The files of a ``data.dataset`` mapping by split (train, dev, test; keys validation / valid mean dev,
    case-insensitive), or a ConfigError naming the key: train and test are needed, dev is optional."""
    out: dict[str, str] = {}
    for key, path in files.items():
        split = SPLIT_NAMES.get(str(key).strip().lower())
        if split is None:
            raise ConfigError(
                f"data.dataset: unknown split '{key}' (a file per split: train, dev, test; validation / valid mean dev)"
            )
        if split in out:
            raise ConfigError(f"data.dataset names the {split} file twice ('{key}' is {split} too)")
        if not isinstance(path, str) or not path.strip():
            raise ConfigError(f"data.dataset.{key}={path!r} must be a file path")
        twin = next((s for s, other in out.items() if other == path), None)
        if twin is not None:
            raise ConfigError(f"data.dataset.{key}='{path}' is the {twin} file too; each split needs its own file")
        if path in BUILTIN:
            raise ConfigError(
                f"data.dataset.{key}='{path}' is a built-in dataset, which has its own splits; "
                "a split file is a file of your own"
            )
        out[split] = path
    missing = [s for s in ("train", "test") if s not in out]
    if missing:
        raise ConfigError(
            f"data.dataset names no {' or '.join(missing)} file (a file per split needs train and test; "
            "dev is optional: without it, dev is carved from the train file)"
        )
    return {s: out[s] for s in SPLITS if s in out}


def dataset_name(dataset: str | list[str] | Mapping[str, str]) -> str:
    """A ``data.dataset`` value as one name: a built-in name or path, a list's names or a mapping's files
    joined by '+'."""
    if isinstance(dataset, str):
        return dataset
    if isinstance(dataset, Mapping):
        return "+".join(split_files(dataset).values())
    return "+".join(dataset)


def dataset_sources(dataset: str | list[str] | Mapping[str, str]) -> list[str]:
    """Every built-in name or file path a ``data.dataset`` value reads."""
    if isinstance(dataset, str):
        return [dataset]
    if isinstance(dataset, Mapping):
        return list(split_files(dataset).values())
    return list(dataset)


@dataclass(frozen=True)
class Example:
    """A labelled example; ``words``/``heads``/``punct`` are set only for gold-tree (CoNLL-U) input,
    ``columns`` only for datasets with extra per-example columns (e.g. agreement: attractors, distance)."""

    text: str
    label: int | float | None
    source: str
    words: tuple[str, ...] | None = None
    heads: tuple[int, ...] | None = None
    punct: tuple[bool, ...] | None = None
    columns: Mapping[str, Any] | None = field(default=None, hash=False, compare=False)


@dataclass
class Dataset:
    """Examples per split plus the label names (classification) of one configured dataset."""

    name: str
    task: str
    splits: dict[str, list[Example]]
    label_names: list[str]
    n_read: int = 0  # examples read before labelling (a binary view drops zero scores)

    def all_examples(self) -> list[Example]:
        """Train, dev and test examples in that order."""
        return [ex for s in SPLITS for ex in self.splits[s]]

    def texts(self, *splits: str) -> list[str]:
        """The texts of ``splits`` (default all), split by split: e.g. ``texts("dev", "test")``, the held-out
        texts no teacher may label."""
        return [ex.text for s in splits or SPLITS for ex in self.splits[s]]


def _score(raw: RawExample, field_name: str) -> float:
    try:
        value = float(raw.label)
    except (TypeError, ValueError):
        raise DataError(f"{raw.source}: field '{field_name}' value {raw.label!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise DataError(f"{raw.source}: field '{field_name}' value {raw.label!r} is not a finite number")
    return value


def _label_names(raws: list[RawExample], task: str, fixed: Sequence[str] | None = None) -> list[str]:
    names = list(fixed) if fixed else sorted({str(r.label) for r in raws if r.label is not None})
    if task == "binary" and len(names) != 2:
        raise DataError(f"binary task needs numeric scores or exactly two label values, found {names[:10]}")
    return names


def _is_numeric(raws: list[RawExample]) -> bool:
    return all(isinstance(r.label, (int, float)) for r in raws)


def apply_labels(
    raws: list[RawExample],
    task: str,
    label_field: str,
    fractions: list[float],
    label_names: Sequence[str] | None = None,
) -> tuple[dict[str, list[Example]], list[str]]:
    """Label view + split. Class names come from the training split (or ``label_names``, in that order); a
    class seen only in dev/test is an error. An example's split is its own fixed one, else that of its group
    (or text) by hash."""
    split_raw: dict[str, list[RawExample]] = {s: [] for s in SPLITS}
    for raw in raws:
        if not normalise_text(raw.text):
            continue
        split_raw[raw_split(raw, fractions)].append(raw)
    names: list[str] = []
    numeric_binary = task == "binary" and _is_numeric(raws)
    if task == "classification" or (task == "binary" and not numeric_binary):
        for s in SPLITS:
            for r in split_raw[s]:
                if r.label is None or str(r.label).strip() == "":
                    raise DataError(f"{r.source}: field '{label_field}' is empty")
        names = _label_names(split_raw["train"] or raws, task, label_names)
        for s in ("dev", "test"):
            for r in split_raw[s]:
                if str(r.label) not in names:
                    raise DataError(
                        f"{r.source}: label '{r.label}' appears in {s} but never in train (train labels: {names})"
                    )
    elif numeric_binary:
        names = ["negative", "positive"]
    out: dict[str, list[Example]] = {s: [] for s in SPLITS}
    for s in SPLITS:
        for r in split_raw[s]:
            if task == "regression":
                label: int | float | None = _score(r, label_field)
            elif numeric_binary:
                score = _score(r, label_field)
                if score == 0:
                    continue
                label = int(score > 0)
            elif not labelled(task):
                label = None
            else:
                label = names.index(str(r.label))
            out[s].append(Example(r.text, label, r.source, r.words, r.heads, r.punct, r.columns))
    return out, names


def load_dataset(config: DataConfig) -> Dataset:
    """Read, label and split the configured dataset (a built-in name, a user file, or a list of them joined:
    each keeps its own split rule, so a text held out by its own dataset stays held out)."""
    config.validate()
    if isinstance(config.dataset, list):
        if labelled(config.task):
            raise DataError(
                f"data.dataset={config.dataset}: a list of datasets is joined as unlabeled text only "
                "(data.task: none, e.g. predictor pre-training)"
            )
        parts = [
            _load_one(
                dataclasses.replace(config, dataset=name, format=None if name in BUILTIN else config.format), name
            )
            for name in config.dataset
        ]
        splits = {s: [ex for part in parts for ex in part[0][s]] for s in SPLITS}
        dataset = Dataset("+".join(config.dataset), config.task, splits, [], sum(part[2] for part in parts))
    else:
        splits, names, n_read = _load_one(config, config.dataset)
        dataset = Dataset(dataset_name(config.dataset), config.task, splits, names, n_read)
    _subsample(dataset.splits, config)
    return dataset


def _load_one(config: DataConfig, name: str | Mapping[str, str]) -> tuple[dict[str, list[Example]], list[str], int]:
    """One dataset read, labelled and split: (splits, label names, examples read). ``name`` is the one
    dataset ``config`` names (its ``dataset``: a single name, or a mapping of split files)."""
    builtin = None
    if isinstance(name, Mapping):
        raws = _read_split_files(config, split_files(name))
    elif (builtin := BUILTIN.get(name)) is not None:
        raws = load_raw(name, config)
    else:
        raws = _read_own_file(config, name)
    label_field = builtin.label_field if builtin is not None else config.label_column or "label"
    if labelled(config.task) and all(r.label is None for r in raws):
        raise DataError(
            f"{dataset_name(name)}: no labels found for task '{config.task}' "
            "(set data.label_column, or data.task: none)"
        )
    splits, names = apply_labels(raws, config.task, label_field, config.split, builtin.label_names if builtin else None)
    return splits, names, len(raws)


def _read_own_file(config: DataConfig, path: str) -> list[RawExample]:
    """A user file's raw examples under ``config``'s columns (the label column only for a labelled task)."""
    label_column = config.label_column if labelled(config.task) else None
    return read_file(path, config.format, config.text_column, label_column, config.split_column)


def _read_split_files(config: DataConfig, files: Mapping[str, str]) -> list[RawExample]:
    """The raw examples of a file per split, each fixed to its file's split (``RawExample.split``). Without a
    dev file, the train file's examples go to train or dev by the hash of ``split_of``, in the ratio of
    ``data.split``'s train and dev shares (a dev share of 0: all to train)."""
    train_share, dev_share = config.split[0], config.split[1]
    carve = [train_share / (train_share + dev_share), 1.0, 1.0] if "dev" not in files and dev_share > 0 else None
    raws = []
    for split, path in files.items():
        for raw in _read_own_file(config, path):
            fixed = split
            if split == "train" and carve is not None and split_of(raw.group or raw.text, carve) != "train":
                fixed = "dev"
            raws.append(dataclasses.replace(raw, split=fixed))
    return raws


def _subsample(splits: dict[str, list[Example]], config: DataConfig) -> None:
    """Apply ``max_examples`` and ``train_fraction`` in place."""
    if config.max_examples is not None:
        # keep each split's share of N examples, evenly spaced through the file (files are often
        # sorted by label, so a prefix would be one-sided)
        total = sum(len(v) for v in splits.values())
        for s in SPLITS:
            quota = min(len(splits[s]), max(1, round(config.max_examples * len(splits[s]) / max(total, 1))))
            step = len(splits[s]) / quota if quota else 1
            splits[s] = [splits[s][int(i * step)] for i in range(quota)]
    if config.train_fraction < 1:
        splits["train"] = train_subset(splits["train"], config.train_fraction, config.train_sample_seed)


def train_subset(examples: list, fraction: float, seed: int) -> list:
    """A share of the training examples, ranked by a hash of (seed, text): for one seed, a smaller
    fraction is a subset of a larger one; the kept examples stay in their original order."""

    def rank(e) -> str:
        return hashlib.sha256(f"{seed}\x00{e.text}".encode()).hexdigest()

    keep = {id(e) for e in sorted(examples, key=rank)[: max(1, round(fraction * len(examples)))]}
    return [e for e in examples if id(e) in keep]


def describe(dataset: Dataset) -> dict:
    """Counts, label balance and length percentiles (whitespace words) per split."""
    import numpy as np

    kept = sum(len(v) for v in dataset.splits.values())
    report: dict = {"dataset": dataset.name, "task": dataset.task, "read": dataset.n_read, "kept": kept, "splits": {}}
    for s in SPLITS:
        exs = dataset.splits[s]
        lengths = np.array([len(normalise_text(e.text).split()) for e in exs] or [0])
        entry: dict[str, Any] = {
            "examples": len(exs),
            "length_p50": float(np.percentile(lengths, 50)),
            "length_p90": float(np.percentile(lengths, 90)),
            "length_p99": float(np.percentile(lengths, 99)),
            "length_max": int(lengths.max()),
        }
        if dataset.task in ("binary", "classification"):
            counts = Counter(e.label for e in exs)
            entry["labels"] = {dataset.label_names[k]: counts.get(k, 0) for k in range(len(dataset.label_names))}
        elif dataset.task == "regression":
            scores = np.array([e.label for e in exs] or [0.0])
            entry["label_mean"], entry["label_std"] = float(scores.mean()), float(scores.std())
        columns = [e.columns for e in exs if e.columns and "attractors" in e.columns and "distance" in e.columns]
        if columns:
            attractors = Counter(attractor_bucket(c["attractors"]) for c in columns)
            distances = Counter(distance_bucket(c["distance"]) for c in columns)
            entry["attractors"] = {b: attractors.get(b, 0) for b in ATTRACTOR_BUCKETS}
            entry["distance"] = {b: distances.get(b, 0) for b in DISTANCE_BUCKETS}
        report["splits"][s] = entry
    return report
