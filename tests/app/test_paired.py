"""Paired verdicts: the sign-flip test over minimal pairs (the exact McNemar test without them), Holm's
correction, the bootstrap over minimal pairs, the tests over seeds, and power figures that hold when
simulated."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from parserfree.comparison.paired import (
    AHEAD,
    BEHIND,
    NO_DIFFERENCE,
    PERMUTATIONS,
    Resampler,
    cluster_detectable,
    clusters_of,
    connor_detectable,
    gain_test,
    holm,
    mcnemar,
    paired_test,
    seed_test,
    sign_flip,
    t_detectable,
    verdict,
)


def test_mcnemar_is_the_exact_binomial_test_on_the_discordant_items():
    a = np.array([1] * 10 + [0] * 2 + [1] * 30 + [0] * 8, dtype=bool)  # 10 only a, 2 only b, 30 both, 8 neither
    b = np.array([0] * 10 + [1] * 2 + [1] * 30 + [0] * 8, dtype=bool)
    p, only_a, only_b = mcnemar(a, b)
    assert (only_a, only_b) == (10, 2)
    assert p == pytest.approx(2 * (1 + 12 + 66) / 4096)  # 2·P(X ≤ 2), X ~ Bin(12, ½), by hand
    assert mcnemar(a, a)[0] == 1.0


def test_holm_multiplies_by_the_rank_and_keeps_the_order_monotone():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_items_sharing_a_pair_id_form_one_cluster_and_others_stand_alone():
    got = clusters_of(["p1", "p2", "p1", None, "p2", None], 6)
    assert got[0] == got[2] and got[1] == got[4] and len(set(got.tolist())) == 4
    assert clusters_of(None, 3).tolist() == [0, 1, 2]


def test_the_interval_resamples_minimal_pairs_so_pairs_that_move_together_widen_it():
    """Both versions of a pair right or wrong together: an item bootstrap would count each pair twice as
    evidence; the pair bootstrap sees half as many independent units (interval about √2 wider)."""
    rng = np.random.default_rng(1)
    per_pair_a = rng.random(400) < 0.7
    per_pair_b = rng.random(400) < 0.6
    a, b = np.repeat(per_pair_a, 2)[None], np.repeat(per_pair_b, 2)[None]
    pairs = np.repeat(np.arange(400), 2)
    by_pair = paired_test(a, b, pairs, Resampler(pairs, 1))
    by_item = paired_test(a, b, np.arange(800), Resampler(np.arange(800), 1))
    width = lambda r: r.ci95[1] - r.ci95[0]  # noqa: E731
    assert by_pair.difference == by_item.difference == pytest.approx(100 * (per_pair_a.mean() - per_pair_b.mean()))
    assert width(by_pair) / width(by_item) == pytest.approx(np.sqrt(2), rel=0.15)
    assert by_pair.n_clusters == 400 and by_item.n_clusters == 800


def test_one_seed_without_pairs_the_sign_flip_test_is_mcnemars():
    a = np.array([1] * 9 + [0] * 3 + [1] * 5, dtype=bool)
    b = np.array([0] * 9 + [1] * 3 + [1] * 5, dtype=bool)
    assert sign_flip(a.astype(float) - b) == pytest.approx(mcnemar(a, b)[0])
    assert sign_flip(np.array([0.0, 1.0, 0.0])) == 1.0 == mcnemar(np.array([0, 1, 0], bool), np.zeros(3, bool))[0]


def _pairs(*kinds: tuple[int, tuple[int, int], tuple[int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows a and b (1×N) and the cluster of each item from (how many pairs, a's two versions, b's two)."""
    a, b = [], []
    for count, in_a, in_b in kinds:
        a += list(in_a) * count
        b += list(in_b) * count
    return np.array(a, bool)[None], np.array(b, bool)[None], np.repeat(np.arange(len(a) // 2), 2)


def test_one_seed_p_value_counts_a_minimal_pair_once_not_as_two_independent_items():
    """Both versions of a pair flip together: 6 pairs only a gets right, 1 only b, 1 pair where a gets one
    version more; 10 pairs both rows get right. McNemar sees 13 vs 2 discordant items (p 0.007); over the 8
    differing pairs (cluster sums 2 ×6, −2, 1; T = 11 of at most 15) only the 9 flips of total size ≤ 2
    reach 11 either way: p = 2·9/2⁸ = 0.07, so the gap is not shown."""
    a, b, clusters = _pairs((6, (1, 1), (0, 0)), (1, (0, 0), (1, 1)), (1, (1, 0), (0, 0)), (10, (1, 1), (1, 1)))
    result = paired_test(a, b, clusters, Resampler(clusters, 1))
    p_mcnemar, only_a, only_b = mcnemar(a[0], b[0])
    assert (only_a, only_b) == (13, 2) and p_mcnemar == pytest.approx(2 * (1 + 15 + 105) / 2**15)
    assert result.p == result.p_items == pytest.approx(18 / 256, abs=1e-12)
    assert p_mcnemar < 0.05 < result.p
    assert result.n_clusters == 18 and result.discordant == [13.0, 2.0]


def test_one_seed_p_value_without_pair_ids_is_the_exact_mcnemar_p():
    """Every item its own cluster: the sign-flip test is McNemar's to rounding, also with far more than 13
    discordant items (where a sign-flip test would otherwise draw random flips)."""
    rng = np.random.default_rng(4)
    b = rng.random(600) < 0.7
    a = np.where(rng.random(600) < 0.15, ~b, b)
    clusters = clusters_of([None] * 600, 600)
    result = paired_test(a[None], b[None], clusters, Resampler(clusters, 1))
    p, only_a, only_b = mcnemar(a, b)
    assert only_a + only_b > 60
    assert abs(result.p - stats.binomtest(only_a, only_a + only_b, 0.5).pvalue) < 1e-12 and result.p == p


def test_one_seed_detectable_counts_a_minimal_pair_once_not_as_two_independent_items():
    """Pairs that move together: the detectable difference is Connor's on the 400 pairs as units, about √2
    more than Connor's on the 800 items as if they were independent."""
    rng = np.random.default_rng(1)
    per_pair_a, per_pair_b = rng.random(400) < 0.7, rng.random(400) < 0.6
    a, b = np.repeat(per_pair_a, 2)[None], np.repeat(per_pair_b, 2)[None]
    pairs = np.repeat(np.arange(400), 2)
    result = paired_test(a, b, pairs, Resampler(pairs, 1))
    by_pairs = connor_detectable(400, float(np.mean(per_pair_a != per_pair_b)))
    as_items = connor_detectable(800, float(np.mean(a != b)))
    assert result.detectable == result.detectable_items == pytest.approx(100 * by_pairs, rel=1e-6)
    assert result.detectable / (100 * as_items) == pytest.approx(np.sqrt(2), rel=0.05)


def test_one_seed_detectable_without_pair_ids_is_connors():
    rng = np.random.default_rng(5)
    b = rng.random(900) < 0.7
    a = np.where(rng.random(900) < 0.1, ~b, b)
    result = paired_test(a[None], b[None], np.arange(900), Resampler(np.arange(900), 1))
    assert result.detectable == 100 * connor_detectable(900, float(np.mean(a != b)))
    assert cluster_detectable(np.array([1.0, 0.0, -1.0]), 3) is None  # two discordant items: nothing detectable


def test_sign_flip_is_exact_when_every_differing_cluster_differs_by_as_much():
    """40 pairs that each flip together (sums ±2): the flips are a binomial count, no random draws."""
    sums = np.array([2.0] * 28 + [-2.0] * 12 + [0.0] * 5)
    assert abs(sign_flip(sums) - stats.binomtest(28, 40, 0.5).pvalue) < 1e-12


def test_sign_flip_enumerates_every_flip_when_few_clusters_differ_and_draws_them_otherwise():
    def scipy_sign_flip(x: np.ndarray) -> float:
        x = x[x != 0]
        return stats.permutation_test(
            (x,), lambda v, axis: np.sum(v, axis=axis), permutation_type="samples", n_resamples=PERMUTATIONS, rng=0
        ).pvalue

    few = np.array([2.0, 2.0, 1.0, -1.0, 2.0, -2.0, 1.0, 0.0, 2.0, 1.0, 2.0, -1.0, 2.0, 1.0])  # 13 differ
    assert sign_flip(few) == pytest.approx(scipy_sign_flip(few), abs=1e-12)
    many = np.random.default_rng(1).choice([-2.0, -1.0, 1.0, 2.0], 200) * 0.5  # seed-averaged sizes; p ≈ 0.2
    assert sign_flip(many) == pytest.approx(scipy_sign_flip(many), abs=0.03)  # two Monte Carlo draws (sd 0.006)
    assert sign_flip(many, seed=0) == sign_flip(many, seed=0)


def test_a_gap_shown_by_one_lucky_seed_is_not_shown_over_seeds():
    assert seed_test(np.array([0.04, 0.05, 0.045])) < 0.01
    assert seed_test(np.array([0.12, -0.01, 0.0])) > 0.05
    assert seed_test(np.zeros(3)) == 1.0


def test_a_verdict_needs_the_corrected_p_and_the_interval_on_one_side():
    assert verdict(2.0, [0.5, 3.5], 0.01) == AHEAD
    assert verdict(-2.0, [-3.5, -0.5], 0.01) == BEHIND
    assert verdict(2.0, [-0.1, 3.5], 0.01) == NO_DIFFERENCE  # the pairs say it may be chance
    assert verdict(2.0, [0.5, 3.5], 0.08) == NO_DIFFERENCE


def _mcnemar_power(n: int, psi: float, delta: float, runs: int = 4000) -> float:
    """Share of simulated test splits (n items, discordant share ψ, paired difference δ) on which the exact
    McNemar test rejects at 0.05."""
    rng = np.random.default_rng(0)
    discordant = rng.binomial(n, psi, runs)
    only_a = rng.binomial(discordant, (psi + delta) / (2 * psi))
    low = np.minimum(only_a, discordant - only_a)
    p = np.minimum(1.0, 2 * stats.binom.cdf(low, discordant, 0.5))
    return float(np.mean((p < 0.05) & (discordant > 0)))


def test_the_detectable_difference_is_detected_about_four_times_in_five():
    n, psi = 3000, 0.12
    delta = connor_detectable(n, psi)
    assert 0.01 < delta < 0.03
    assert _mcnemar_power(n, psi, delta) == pytest.approx(0.8, abs=0.04)
    assert _mcnemar_power(n, psi, delta / 2) < 0.4  # half of it mostly goes unseen
    assert connor_detectable(10, 0.1) is None  # one discordant item expected: nothing is detectable
    assert connor_detectable(n, 0.0) is None


def test_the_detectable_mean_over_seeds_is_detected_about_four_times_in_five():
    sd, seeds = 1.5, 3
    delta = t_detectable(sd, seeds)
    rng = np.random.default_rng(0)
    draws = rng.normal(delta, sd, size=(20000, seeds))
    rejected = stats.ttest_1samp(draws, 0.0, axis=1).pvalue < 0.05
    assert rejected.mean() == pytest.approx(0.8, abs=0.02)
    assert t_detectable(sd, 1) is None


def test_several_seeds_need_both_the_items_and_the_seeds_to_agree():
    """Seed 0 of row a is far ahead, seeds 1 and 2 are level: the items side (seed-averaged) rejects, the
    seeds side does not, so the combined p is the seeds side's."""
    rng = np.random.default_rng(3)
    b = rng.random((3, 2000)) < 0.7
    a = b.copy()
    flip = rng.random(2000) < 0.25
    a[0] = np.where(flip, True, b[0])
    clusters = np.arange(2000)
    result = paired_test(a, b, clusters, Resampler(clusters, 3))
    assert result.p_items < 0.001 and result.p_seeds > 0.05 and result.p == result.p_seeds
    assert result.detectable == max(result.detectable_items, result.detectable_seeds)
    assert result.seeds == 3 and result.difference == pytest.approx(100 * (a.mean() - b.mean()))


def test_two_seeds_give_a_finite_detectable_difference():
    """With one degree of freedom scipy's noncentral t returns NaN for the far tail; the power search must not."""
    delta = t_detectable(1.0, 2)
    rng = np.random.default_rng(0)
    draws = rng.normal(delta, 1.0, size=(40000, 2))
    assert stats.ttest_1samp(draws, 0.0, axis=1).pvalue.__lt__(0.05).mean() == pytest.approx(0.8, abs=0.02)


def test_rows_that_never_disagree_have_no_detectable_difference_with_several_seeds():
    same = np.random.default_rng(0).random((3, 100)) < 0.7
    result = paired_test(same, same.copy(), np.arange(100), Resampler(np.arange(100), 3))
    assert result.detectable is None and result.detectable_items is None
    assert result.difference == 0.0 and result.p == 1.0


def test_a_gain_against_no_gain_is_the_paired_test_of_its_two_rows():
    """gain_test compares per-item gains (row − baseline) as paired_test compares rows: against a zero gain it
    is the paired test of the row with its baseline, to the last digit, interval and both tests included."""
    rng = np.random.default_rng(3)
    twin = rng.random((3, 400)) < 0.8
    plain = rng.random((3, 400)) < 0.7
    clusters = clusters_of([f"p{i // 2}" for i in range(400)], 400)
    gain = twin.astype(float) - plain
    mine = gain_test(gain, np.zeros_like(gain), clusters)
    theirs = paired_test(twin, plain, clusters, Resampler(clusters, 3))
    assert mine.difference == pytest.approx(theirs.difference)
    assert mine.ci95 == pytest.approx(theirs.ci95) and mine.p_items == pytest.approx(theirs.p_items)
    assert mine.p_seeds == pytest.approx(theirs.p_seeds) and mine.detectable == pytest.approx(theirs.detectable)


def test_a_larger_gain_with_less_data_is_positive_and_equal_gains_show_nothing():
    rng = np.random.default_rng(4)
    base = rng.random((3, 600)) < 0.7
    small_share = np.where(rng.random((3, 600)) < 0.15, True, base).astype(float) - base  # the row gains ~4.5
    full_share = np.where(rng.random((3, 600)) < 0.02, True, base).astype(float) - base  # ~0.6
    clusters = np.arange(600)
    result = gain_test(small_share, full_share, clusters)
    assert result.difference > 2 and result.ci95[0] > 0 and result.p < 0.05
    assert verdict(result.difference, result.ci95, result.p) == AHEAD
    same = gain_test(small_share, small_share, clusters)
    assert same.difference == 0 and same.p == 1
