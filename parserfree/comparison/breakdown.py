"""Breakdowns: accuracy by number of attractors, by subject–verb distance and by subject number × attractors,
with item and minimal-pair accuracy and 95 % intervals.

For classification datasets whose examples carry agreement's columns (``distill/data/agreement.py``), where a
row's overall accuracy hides what matters: items with nouns of the other number between subject and
verb, long dependencies, singular against plural subjects (a number prior shows as a gap between
them), and the items whose nearest noun before the verb is an attractor (where "agree with the nearest
noun" fails). Buckets: attractors 0, 1, 2+; distance 1, 2–3, 4–6, 7+ words; subject number sg/pl ×
attractors; nearest noun of the subject's number or an attractor.
Each bucket is also a *slice* of the items on which ``compare`` gives paired verdicts (``Slices``).
``report.json`` holds ``domains.<dataset>.breakdown.<row>.<group>.<bucket>``, a
``reports.parts.BucketScore`` (in %): accuracy is the mean over seeds; the interval is Wilson's for one seed
on independent items, else the percentile bootstrap over minimal pairs (and seeds) of
``parserfree.comparison.paired``. The groups and buckets themselves, and the Markdown tables, are
``parserfree.reports.slices`` (its plot: ``parserfree.reports.figures``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..distill.data.agreement import judges_both_versions
from ..reports.parts import BucketScore, RowBreakdown
from ..reports.slices import ALL, GROUPS, REQUIRED, slice_name
from .paired import Resampler, clusters_of, pairs_of


def wilson(correct: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion, in % (NaNs when n = 0)."""
    if n == 0:
        return float("nan"), float("nan")
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return 100 * max(0.0, centre - half), 100 * min(1.0, centre + half)


@dataclass
class Slices:
    """A domain's items cut into the breakdown buckets (item masks by slice name, ``ALL`` first), with the
    resampling clusters (minimal pairs) and one shared set of bootstrap draws per slice."""

    masks: dict[str, np.ndarray]
    groups: dict[str, dict[str, str]]  # group → bucket → slice name (the breakdowns that apply)
    pair_ids: list | None
    clusters: np.ndarray
    seeds: int
    resamples: int
    whole_pairs: bool = False  # every item stands for both versions of its pair (agreement's number view)
    _resamplers: dict[str, Resampler] = field(default_factory=dict, repr=False)

    def pair_accuracy(self, correct: np.ndarray, mask: np.ndarray) -> tuple[float | None, int]:
        """``pair_accuracy`` of S×N correctness over the pairs of these items in ``mask``."""
        return pair_accuracy(correct, self.pair_ids, mask, self.whole_pairs)

    def resampler(self, name: str) -> Resampler:
        """The bootstrap draws of one slice (made once, shared by every row and contrast)."""
        if name not in self._resamplers:
            self._resamplers[name] = Resampler(self.clusters[self.masks[name]], self.seeds, self.resamples)
        return self._resamplers[name]


def item_slices(
    columns: Sequence[Mapping | None] | None, n: int, seeds: int, resamples: int, pair_column: str | None
) -> Slices:
    """The slices of ``n`` items: ``ALL`` and, when every item carries agreement's attractors and distance,
    one per breakdown bucket (subject number × attractors too where the items carry the subject number);
    items sharing ``pair_column``'s value form one resampling cluster."""
    masks = {ALL: np.ones(n, dtype=bool)}
    groups: dict[str, dict[str, str]] = {}
    have = columns is not None and len(columns) == n and all(c is not None for c in columns)
    if have and all(all(k in c for k in REQUIRED) for c in columns):
        for group, g in GROUPS.items():
            if not all(all(k in c for k in g.columns) for c in columns):
                continue
            keys = np.array([g.bucket_of(c) for c in columns])
            groups[group] = {}
            for bucket in g.buckets:
                groups[group][bucket] = slice_name(group, bucket)
                masks[slice_name(group, bucket)] = keys == bucket
    pair_ids = (
        [c.get(pair_column) for c in columns]
        if have and pair_column and any(pair_column in c for c in columns)
        else None
    )
    whole = have and judges_both_versions(columns)
    return Slices(masks, groups, pair_ids, clusters_of(pair_ids, n), seeds, resamples, whole)


def pair_accuracy(
    correct: np.ndarray, pair_ids: Sequence | None, mask: np.ndarray, whole_pairs: bool = False
) -> tuple[float | None, int]:
    """(% of minimal pairs with every version right, mean over seeds; number of pairs) over the pairs with
    at least two items in ``mask`` — or, with ``whole_pairs`` (one item judges both versions of its pair),
    over every item in ``mask``; (None, 0) without pair ids or pairs."""
    if pair_ids is None:
        return None, 0
    indices = np.flatnonzero(mask).tolist()  # Python ints: they index the pair_ids sequence
    pairs = [[i] for i in indices] if whole_pairs else pairs_of(pair_ids, indices)
    if not pairs:
        return None, 0
    right = np.array([[c[idx].all() for idx in pairs] for c in np.asarray(correct, dtype=bool)])  # S×P
    return 100 * float(right.mean()), len(pairs)


def bucket_entry(correct: np.ndarray, slices: Slices, name: str) -> BucketScore:
    """The ``BucketScore`` of a row's S×N correctness on one slice (in %)."""
    mask = slices.masks[name]
    hits = np.asarray(correct, dtype=bool)[:, mask]
    n = int(mask.sum())
    if n == 0:
        nan = float("nan")
        return BucketScore(n=0, accuracy=nan, sd=None, ci95=[nan, nan], pair_accuracy=None, n_pairs=0)
    per_seed = 100 * hits.mean(1)
    if slices.seeds == 1 and slices.pair_ids is None:
        ci = list(wilson(int(hits.sum()), n))
    else:
        ci = [float(v) for v in np.percentile(100 * slices.resampler(name).accuracies(hits), [2.5, 97.5])]
    pairs, n_pairs = slices.pair_accuracy(correct, mask)
    return BucketScore(
        n=n,
        accuracy=float(per_seed.mean()),
        sd=float(np.std(per_seed, ddof=1)) if per_seed.size > 1 else None,
        ci95=ci,
        pair_accuracy=pairs,
        n_pairs=n_pairs,
    )


def breakdown(correct: np.ndarray, slices: Slices) -> RowBreakdown | None:
    """{group: {bucket: score}} of one row's S×N correctness; None when no breakdown applies."""
    if not slices.groups:
        return None
    return {
        group: {bucket: bucket_entry(correct, slices, name) for bucket, name in buckets.items()}
        for group, buckets in slices.groups.items()
    }


def breakdowns(correct: Mapping[str, np.ndarray], slices: Slices) -> dict[str, RowBreakdown] | None:
    """``breakdown`` of every row (name → S×N correctness); None when the data has no such columns."""
    if not slices.groups:
        return None
    return {name: row for name, c in correct.items() if (row := breakdown(c, slices)) is not None}
