"""Paired verdicts: is one row of a report right on more of the same test items than another, and could the
test split have shown it?

Two rows of a report are scored on the very same items, so only a paired test says anything about their
difference (two unpaired intervals overlap long before a paired test gives up). Everything counts in
*clusters*: minimal pairs (the two versions of one source sentence, which a model tends to get right or
wrong together) where the items carry a pair id, else single items. For one seed per row: the difference
in accuracy points; a 95 % percentile bootstrap interval that resamples clusters; and a sign-flip
permutation test over clusters of the per-cluster summed difference in correct items (a − b), exact when
few clusters differ — without pair ids (every item its own cluster) it is exactly the exact McNemar test
(``scipy.stats.binomtest`` on the discordant counts). With several seeds per row (seed s of one row
paired with seed s of the other): the mean over seeds of the per-seed differences; an interval from a
bootstrap that resamples seeds and clusters together; and two tests that must both reject — the same
sign-flip test over clusters of the seed-averaged per-item difference (the items side) and a one-sample
t-test over the per-seed differences (the training side: a gap that only one lucky seed shows is not
shown). Holm's correction runs over the contrasts of one report slice; a verdict is "ahead" or "behind"
only when the corrected p is below ``ALPHA`` and the interval lies on the same side of 0. Power: the
smallest difference the test detects at ``ALPHA`` with power ``POWER`` given the observed discordance —
Connor 1987's normal approximation for McNemar generalised to cluster sums (with the null variance
Σ D_j² of the cluster sums D_j; without pair ids it is Connor's formula itself), solved for δ; with seeds,
that on the seed-averaged cluster sums and the noncentral t over seeds, the larger of the two.
docs/statistics.md says how to read them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
from scipy import optimize, stats

from ..reports.parts import PairedResult

ALPHA = 0.05
POWER = 0.8
RESAMPLES = 2000  # bootstrap resamples of an interval
PERMUTATIONS = 9999  # random sign flips of the items-side test (all 2^m enumerated for m ≤ 13 differing clusters)
AHEAD, BEHIND, NO_DIFFERENCE = "ahead", "behind", "no difference shown"


def clusters_of(pair_ids: Sequence[str | None] | None, n: int) -> np.ndarray:
    """The resampling cluster of each of ``n`` items (N int): items sharing a pair id form one cluster; an
    item without one (or all items, without pair ids) is a cluster of its own."""
    if pair_ids is None:
        return np.arange(n)
    ids: dict[object, int] = {}
    out = np.empty(n, dtype=np.int64)
    for i, pid in enumerate(pair_ids):
        out[i] = ids.setdefault(("pair", pid) if pid is not None else ("item", i), len(ids))
    return out


def pairs_of(pair_ids: Sequence[str | None], indices: Sequence[int] | None = None) -> list[list[int]]:
    """The items of each minimal pair (index lists, in first-seen order) among ``indices`` (default: all),
    keeping only pairs with at least two of them there; items without a pair id belong to none."""
    members: dict[object, list[int]] = {}
    for i in range(len(pair_ids)) if indices is None else indices:
        if pair_ids[i] is not None:
            members.setdefault(pair_ids[i], []).append(i)
    return [idx for idx in members.values() if len(idx) >= 2]


def _dense(clusters: np.ndarray) -> tuple[np.ndarray, int]:
    """Cluster ids renumbered 0..K−1 (for a slice of the items) and K."""
    uniq, dense = np.unique(clusters, return_inverse=True)
    return dense, uniq.size


class Resampler:
    """One set of bootstrap draws for a slice of items, shared by every row, so that differences are paired:
    cluster weights W (B×K, a multinomial draw of K clusters) and seed weights V (B×S, a draw of S seeds)."""

    def __init__(self, clusters: np.ndarray, seeds: int, resamples: int = RESAMPLES, seed: int = 0) -> None:
        self.clusters, self.k = _dense(np.asarray(clusters))
        self.seeds = seeds
        rng = np.random.default_rng(seed)
        self.weights = rng.multinomial(self.k, np.full(self.k, 1 / self.k), size=resamples).astype(np.float32)
        self.sizes = np.bincount(self.clusters, minlength=self.k).astype(np.float32)
        if seeds > 1:
            self.seed_weights = rng.multinomial(seeds, np.full(seeds, 1 / seeds), size=resamples) / seeds
        else:
            self.seed_weights = np.ones((resamples, 1))
        self._items = self.weights @ self.sizes  # B: items in each resample

    def accuracies(self, correct: np.ndarray) -> np.ndarray:
        """Resampled accuracy (B, a share) of a row's S×N correctness on this slice's items (a 1×N row, a
        deterministic baseline, is the same for every seed)."""
        sums = np.stack([np.bincount(self.clusters, weights=c, minlength=self.k) for c in np.asarray(correct, float)])
        per_seed = (self.weights @ sums.T.astype(np.float32)) / self._items[:, None]  # B×S
        return (per_seed * self.seed_weights).sum(1)


def mcnemar(a: np.ndarray, b: np.ndarray) -> tuple[float, int, int]:
    """Exact McNemar test of two rows' correctness on the same items: (two-sided p, items only a gets
    right, items only b gets right); p = 1 without discordant items."""
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    if only_a + only_b == 0:
        return 1.0, only_a, only_b
    return float(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue), only_a, only_b


def sign_flip(cluster_sums: np.ndarray, seed: int = 0) -> float:
    """Two-sided p of a sign-flip permutation test that the cluster sums D_j of paired differences are
    symmetric around 0 (statistic Σ D_j; p = 1 when at most one cluster differs).

    When every non-zero |D_j| is the same (one seed without pair ids: every D_j is ±1; or pairs that always
    move together: ±2) the flip distribution is a binomial count of positive signs, so the p is the exact
    ``binomtest`` — for items without pair ids that is the exact McNemar test (``mcnemar``), bit for bit.
    Otherwise all 2^m flips of the m non-zero clusters are enumerated when 2^m ≤ ``PERMUTATIONS``, else
    ``PERMUTATIONS`` random flips are drawn (from ``seed``, with the +1 of a Monte Carlo p), as
    ``scipy.stats.permutation_test`` does; two-sided p = min(1, 2·min(P(T ≤ t), P(T ≥ t)))."""
    x = np.asarray(cluster_sums, dtype=float).ravel()
    x = x[x != 0]
    m = x.size
    if m <= 1:
        return 1.0  # no cluster differs, or one: its two signs are equally extreme
    sizes = np.abs(x)
    if np.allclose(sizes, sizes[0], rtol=1e-9, atol=0.0):
        return float(stats.binomtest(int(np.sum(x > 0)), m, 0.5).pvalue)
    observed = float(x.sum())
    tie = 100 * np.finfo(float).eps * float(sizes.sum())  # null sums equal to the observed one up to rounding
    batches: Iterable[np.ndarray]  # 0/1 sign patterns (1: +), one row per flip
    if 2**m <= PERMUTATIONS:
        batches, draws, extra = [(np.arange(2**m)[:, None] >> np.arange(m)) & 1], 2**m, 0  # every pattern
    else:
        rng = np.random.default_rng(seed)
        rows = max(1, 2**21 // m)  # flips per batch, to keep memory bounded
        batches = (
            rng.integers(0, 2, size=(min(rows, PERMUTATIONS - start), m), dtype=np.int8)
            for start in range(0, PERMUTATIONS, rows)
        )
        draws, extra = PERMUTATIONS, 1  # a Monte Carlo p counts the observed flip as one of the draws
    at_most = at_least = 0
    for bits in batches:
        null = (2.0 * bits - 1) @ sizes
        at_most += int(np.sum(null <= observed + tie))
        at_least += int(np.sum(null >= observed - tie))
    return float(min(1.0, 2 * min(at_most + extra, at_least + extra) / (draws + extra)))


def seed_test(differences: np.ndarray) -> float:
    """Two-sided p of a one-sample t-test that the per-seed differences have mean 0 (identical
    differences: 0 unless they are all 0)."""
    d = np.asarray(differences, dtype=float)
    if np.ptp(d) == 0:
        return 1.0 if d[0] == 0 else 0.0
    return float(stats.ttest_1samp(d, 0.0).pvalue)


def _normal_detectable(
    n: int, k: int, spread: float, most: float, alpha: float = ALPHA, power: float = POWER
) -> float | None:
    """Smallest mean paired difference δ (a share of ``n`` items in ``k`` clusters) detected at ``alpha`` with
    ``power`` by the normal approximation √n·δ = z₁₋α/₂·√s + z_power·√(s − (n/k)·δ²), where s = Σ D_j² / n
    is the null variance of the cluster sums D_j per item (under the alternative each cluster's mean is
    n·δ/k, which takes k·(n·δ/k)² off it); solved for δ in [0, ``most``], the largest δ the discordance
    allows. None when s = 0 or even δ = ``most`` is not detectable."""
    if n <= 0 or k <= 0 or spread <= 0:
        return None
    za, zb = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(power)
    ratio = n / k

    def gap(delta: float) -> float:
        return math.sqrt(n) * delta - za * math.sqrt(spread) - zb * math.sqrt(max(spread - ratio * delta * delta, 0.0))

    if gap(most) < 0:
        return None
    return float(optimize.brentq(gap, 0.0, most))


def connor_detectable(n: int, discordance: float, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """Smallest paired difference δ (a share) that McNemar's test on ``n`` items with discordant share ψ
    detects at ``alpha`` with ``power`` (Connor 1987: √n·δ = z₁₋α/₂·√ψ + z_power·√(ψ − δ²), solved for δ);
    None when even δ = ψ (every discordant item on one side) is not detectable. It is
    ``cluster_detectable`` with every item its own cluster."""
    return _normal_detectable(n, n, discordance, discordance, alpha, power)


def cluster_detectable(cluster_sums: np.ndarray, n: int, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """Smallest mean paired difference δ (a share) that the sign-flip test over the clusters of ``n`` items
    detects at ``alpha`` with ``power``, given the observed cluster sums D_j of a − b (all K clusters, zeros
    included): Connor's approximation with the variance of the cluster sums, √n·δ = z₁₋α/₂·√s +
    z_power·√(s − (n/K)·δ²), s = Σ D_j² / n, δ at most Σ |D_j| / n (every discordant cluster on one side).
    Without pair ids (D_j ∈ {−1, 0, 1}, K = n) s is the discordant share ψ and this is
    ``connor_detectable``; pairs that move together (D_j = ±2) make s twice ψ and n/K two, which is Connor
    on the pairs as units: about √2 more than counting their items as independent."""
    d = np.asarray(cluster_sums, dtype=float)
    return _normal_detectable(n, d.size, float(np.sum(d * d)) / n, float(np.sum(np.abs(d))) / n, alpha, power)


def t_detectable(sd: float, seeds: int, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """Smallest mean of per-seed differences that a two-sided one-sample t-test over ``seeds`` seeds with
    this sd detects at ``alpha`` with ``power`` (noncentral t); None for fewer than two seeds."""
    if seeds < 2:
        return None
    if sd == 0:
        return 0.0
    df = seeds - 1
    crit = stats.t.ppf(1 - alpha / 2, df)

    def gap(nc: float) -> float:
        lower = stats.nct.cdf(-crit, df, nc)  # a tiny tail for nc > 0, which scipy can return as NaN
        return float(stats.nct.sf(crit, df, nc)) + (float(lower) if np.isfinite(lower) else 0.0) - power

    high = 1.0
    while gap(high) < 0:
        high *= 2
    return float(optimize.brentq(gap, 0.0, high) * sd / math.sqrt(seeds))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (same order as given), controlling the family-wise error."""
    p = np.asarray(pvalues, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted.tolist()


def verdict(difference: float, ci95: Sequence[float], p_adjusted: float, alpha: float = ALPHA) -> str:
    """ "ahead" / "behind" when the corrected p is below ``alpha`` and the interval lies on the side of the
    difference; else "no difference shown"."""
    lo, hi = ci95
    if p_adjusted < alpha and difference > 0 and lo > 0:
        return AHEAD
    if p_adjusted < alpha and difference < 0 and hi < 0:
        return BEHIND
    return NO_DIFFERENCE


def paired_test(
    a: np.ndarray,
    b: np.ndarray,
    clusters: np.ndarray,
    resampler: Resampler,
    boot_a: np.ndarray | None = None,
    boot_b: np.ndarray | None = None,
    seed: int = 0,
) -> PairedResult:
    """Compare rows a and b (S×N correctness on the same items, seed s with seed s) on the items of
    ``resampler``'s slice; a row of one seed (a deterministic baseline) stands for every seed.
    ``boot_a``/``boot_b`` are their resampled accuracies when already drawn."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=bool), np.asarray(b, dtype=bool))  # a baseline has one "seed"
    boot_a = resampler.accuracies(a) if boot_a is None else boot_a
    boot_b = resampler.accuracies(b) if boot_b is None else boot_b
    only_a = np.sum(a & ~b, axis=1).astype(float)
    only_b = np.sum(~a & b, axis=1).astype(float)
    return _paired(a.astype(float) - b, boot_a - boot_b, clusters, only_a, only_b, seed)


def gain_test(gain_a: np.ndarray, gain_b: np.ndarray, clusters: np.ndarray, seed: int = 0) -> PairedResult:
    """Is one gain larger than another on the same items? ``gain_a`` and ``gain_b`` are S×N per-item gains
    (a row's correctness minus its baseline's, each in −1, 0, 1: say a curve's twin over ``no_syntax`` at two
    shares of the training data, seed s with seed s), compared exactly as ``paired_test`` compares two rows;
    ``discordant`` counts the items whose gain is larger under a and under b."""
    gain_a, gain_b = np.asarray(gain_a, dtype=float), np.asarray(gain_b, dtype=float)
    resampler = Resampler(clusters, gain_a.shape[0])
    d = gain_a - gain_b
    boot = resampler.accuracies(gain_a) - resampler.accuracies(gain_b)
    return _paired(d, boot, clusters, np.sum(d > 0, axis=1).astype(float), np.sum(d < 0, axis=1).astype(float), seed)


def _paired(
    d: np.ndarray, boot: np.ndarray, clusters: np.ndarray, only_a: np.ndarray, only_b: np.ndarray, seed: int
) -> PairedResult:
    """The paired result from the per-item differences d (S×N, a − b), their resampled means ``boot`` (B)
    and the discordant counts per seed: interval, the items' and the seeds' tests, detectable."""
    seeds, n = d.shape
    per_seed = d.mean(1)  # S shares
    lo, hi = np.percentile(boot, [2.5, 97.5])
    dense, k = _dense(clusters)
    sums = np.bincount(dense, weights=d.mean(0), minlength=k)  # cluster sums, seed-averaged
    p_items = sign_flip(sums, seed)
    detectable_items = cluster_detectable(sums, n)
    if seeds == 1:
        p_seeds, p = None, p_items
        detectable_seeds = None
        detectable = detectable_items
    else:
        p_seeds = seed_test(per_seed)
        p = max(p_items, p_seeds)
        detectable_seeds = t_detectable(float(np.std(per_seed, ddof=1)), seeds)
        detectable = None if detectable_items is None else max(detectable_items, detectable_seeds)

    def points(x: float | None) -> float | None:
        return None if x is None else 100 * x

    return PairedResult(
        n_items=n,
        n_clusters=k,
        seeds=seeds,
        difference=100 * float(per_seed.mean()),
        ci95=[100 * float(lo), 100 * float(hi)],
        discordant=[float(only_a.mean()), float(only_b.mean())],
        p=p,
        p_items=p_items,
        p_seeds=p_seeds,
        detectable=points(detectable),
        detectable_items=points(detectable_items),
        detectable_seeds=points(detectable_seeds),
    )
