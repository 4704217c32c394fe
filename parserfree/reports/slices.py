"""The report's slices: the breakdown groups of agreement items (attractors, subject–verb distance, subject
number × attractors, the nearest noun), their buckets in order and titles, and a breakdown's Markdown tables.

One home for what a bucket is, read by the comparison that scores each slice
(``parserfree.comparison.breakdown``), the report pages and the figures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..distill.data.agreement import (
    ATTRACTOR_BUCKETS,
    ATTRACTORS,
    DISTANCE,
    DISTANCE_BUCKETS,
    NEAREST_NOUN_NUMBER,
    NUMBERS,
    SUBJECT_NUMBER,
    attractor_bucket,
    distance_bucket,
    nearest_noun_misleads,
)
from .parts import BucketScore, RowBreakdown

ALL = "all"  # the slice of every item


@dataclass(frozen=True)
class Group:
    """One breakdown: the columns it reads, each item's bucket, the buckets in order, and its title."""

    columns: tuple[str, ...]
    bucket_of: Callable[[Mapping], str]
    buckets: tuple[str, ...]
    title: str


GROUPS: dict[str, Group] = {
    "attractors": Group((ATTRACTORS,), lambda c: attractor_bucket(int(c[ATTRACTORS])), ATTRACTOR_BUCKETS, "attractors"),
    "distance": Group(
        (DISTANCE,), lambda c: distance_bucket(int(c[DISTANCE])), DISTANCE_BUCKETS, "subject–verb distance (words)"
    ),
    "subject_number×attractors": Group(
        (SUBJECT_NUMBER, ATTRACTORS),
        lambda c: f"{c[SUBJECT_NUMBER]}/{attractor_bucket(int(c[ATTRACTORS]))}",
        tuple(f"{n}/{b}" for n in NUMBERS for b in ATTRACTOR_BUCKETS),
        "subject number / attractors",
    ),
    "nearest_noun": Group(
        (NEAREST_NOUN_NUMBER, SUBJECT_NUMBER),
        lambda c: (
            "attractor" if nearest_noun_misleads(c[NEAREST_NOUN_NUMBER], c[SUBJECT_NUMBER]) else "subject's number"
        ),
        ("subject's number", "attractor"),
        "the nearest noun before the verb (where it is an attractor, structure decides, not position)",
    ),
}
REQUIRED = (ATTRACTORS, DISTANCE)  # without these columns a dataset gets no breakdown at all


def slice_name(group: str, bucket: str) -> str:
    """The name of a breakdown bucket as a slice of the items ("attractors:1")."""
    return f"{group}:{bucket}"


def _cell(entry: BucketScore) -> str:
    if not entry.n:
        return "–"
    lo, hi = entry.ci95
    sd = f" ± {entry.sd:.1f}" if entry.sd is not None else ""
    pairs = f" · pairs {entry.pair_accuracy:.1f}" if entry.pair_accuracy is not None else ""
    return f"{entry.accuracy:.1f}{sd} [{lo:.1f}, {hi:.1f}]{pairs}"


def breakdown_markdown(result: Mapping[str, RowBreakdown] | None) -> list[str]:
    """Markdown lines: one table per breakdown, a row per report row, accuracy [95 % interval] (and
    minimal-pair accuracy) per bucket, n in the header."""
    if not result:
        return []
    lines: list[str] = []
    first = next(iter(result.values()))
    for group, g in GROUPS.items():
        if group not in first:
            continue
        header = " | ".join(f"{b} (n={first[group][b].n:,})" for b in g.buckets)
        lines += [
            f"Accuracy % by {g.title} [95 % interval] · minimal pairs both right %:",
            "",
            f"| row | {header} |",
            "|---|" + "---:|" * len(g.buckets),
        ]
        lines += [
            f"| {name} | " + " | ".join(_cell(r[group][b]) for b in g.buckets) + " |" for name, r in result.items()
        ]
        lines.append("")
    return lines
