"""The agreement items: candidates (``distill.data.agreement``) → the labelled examples of each view.

The two views of one set of items (``agreement.TASKS``): ``grammaticality`` (the built-in dataset
``agreement``: both versions of every dev and test sentence, one version per train sentence) and ``number``
(``agreement-number``: one number-neutral text per source sentence, labelled with its subject's number); the
splits come from ``agreement_splits.assign_splits``. What each view's examples are made of is ``items_digest``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from . import agreement, builtin_text
from .agreement import (
    COLUMNS_VERSION,
    DEFAULT_SPLIT,
    LABEL_NAMES,
    NUMBER_COLUMNS,
    NUMBER_LABELS,
    NUMBERS,
    TASKS,
    Candidate,
    digest,
    hash01,
    other_number,
)
from .agreement_splits import assign_splits
from .readers import RawExample


def _item(c: Candidate, flipped: bool, split: str) -> RawExample:
    """One version of a candidate as a labelled example with its columns."""
    shown_number = other_number(c.subject_number) if flipped else c.subject_number
    columns = {
        "attractors": c.attractors,
        "distance": c.distance,
        "source": c.source,
        "subject_number": c.subject_number,
        "verb": c.flipped_verb if flipped else c.verb,
        "verb_number": shown_number,
        "verb_index": c.verb_index,
        "prev_word": c.prev_word,
        "pair_id": c.key[:16],
        "grammatical_text": c.sentence,
        "nearest_noun": c.nearest_noun,
        "nearest_noun_number": c.nearest_noun_number,
        "first_noun_number": c.first_noun_number,
    }
    text, label = (c.flipped, LABEL_NAMES[0]) if flipped else (c.sentence, LABEL_NAMES[1])
    return RawExample(
        text,
        label,
        f"agreement:{c.source}:{c.key[:16]}:{'flipped' if flipped else 'kept'}",
        split=split,
        columns=columns,
    )


def number_item(c: Candidate, split: str) -> RawExample:
    """The number view of a candidate: its number-neutral text labelled with the subject's number."""
    grammatical = _item(c, False, split)
    columns = {k: grammatical.columns[k] for k in NUMBER_COLUMNS}
    label = NUMBER_LABELS[NUMBERS.index(c.subject_number)]
    return RawExample(c.neutral, label, f"agreement-number:{c.source}:{c.key[:16]}", split=split, columns=columns)


def agreement_examples(
    candidates: Sequence[Candidate],
    fractions: Sequence[float],
    train_pairs: bool = False,
    train_balance: str = "cue",
    task: str = "grammaticality",
    split: str = DEFAULT_SPLIT,
) -> list[RawExample]:
    """The labelled items of ``task`` (``TASKS``). Grammaticality: both versions of every dev and test
    sentence (and of train ones with ``train_pairs``), else one version per train sentence, kept or flipped
    alternately in hash order within every split × cell × number stratum (singular subjects starting kept,
    plural ones flipped, so each cell shows both labels and both verb forms equally often). Number: one
    number-neutral text per sentence of every split (``number_item``; a candidate without one is left out).
    ``split``: how the sentences are split (``agreement_splits``)."""
    if task not in TASKS:
        raise ValueError(f"agreement task {task!r} must be one of {TASKS}")
    splits = assign_splits(candidates, fractions, train_balance, split)
    if task == "number":
        return [number_item(c, splits[i]) for i, c in enumerate(candidates) if splits[i] and c.neutral]
    strata: dict[tuple, list[int]] = {}
    for i, c in enumerate(candidates):
        if splits[i] == "train" and not train_pairs:
            cell = c.cell if train_balance == "cue" else c.cell[:2]  # the cell its number was balanced in
            strata.setdefault((*cell, c.subject_number), []).append(i)
    flip = {}
    for stratum, members in strata.items():
        members.sort(key=lambda i: hash01(candidates[i].key, "flip"))
        first = stratum[-1] == "pl"  # the two numbers of a cell start on opposite versions: labels and forms stay even
        flip.update({i: (rank % 2 == 0) == first for rank, i in enumerate(members)})
    out = []
    for i, c in enumerate(candidates):
        if not splits[i]:
            continue
        versions = (flip[i],) if i in flip else (False, True)
        out += [_item(c, v, splits[i]) for v in versions]
    return out


def load_agreement(
    cache_dir: Path | None,
    archive: str | None,
    fractions: Sequence[float],
    *,
    task: str = "grammaticality",
    text: builtin_text.BuiltinText = builtin_text.ENGLISH,
    progress: bool = True,
    train_pairs: bool = False,
    train_balance: str = "cue",
    split: str = DEFAULT_SPLIT,
) -> list[RawExample]:
    """The agreement dataset's raw examples of ``task`` with their fixed splits (built once, then read from the cache)."""
    return agreement_examples(
        agreement.build_candidates(cache_dir, archive, progress=progress, text=text),
        fractions,
        train_pairs,
        train_balance,
        task,
        split,
    )


def items_digest(
    cache_dir: Path | None,
    archive: str | None,
    task: str = "grammaticality",
    text: builtin_text.BuiltinText = builtin_text.ENGLISH,
    split: str = DEFAULT_SPLIT,
) -> dict:
    """What one view's items are made of: ``digest`` plus the columns' version, the view and — when it is not
    the balanced split, whose digest stays what it was before the setting existed — the split rule, so items
    split another way are never reused."""
    out = {**digest(cache_dir, archive, text=text), "columns_version": COLUMNS_VERSION, "task": task}
    if split != DEFAULT_SPLIT:
        out["split"] = split
    return out
