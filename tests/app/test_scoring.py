"""Scoring a domain: which contrasts are made (like-for-like pairs, every model against every baseline, on every
slice), Holm within a slice, verdicts that follow the data, the margin over the best baseline, and seeds."""

from __future__ import annotations

import numpy as np
import pytest

from parserfree.comparison.like_for_like import Pairing
from parserfree.comparison.paired import AHEAD, NO_DIFFERENCE
from parserfree.comparison.scoring import score_domain
from parserfree.reports.report import BASELINE, LIKE_FOR_LIKE, MODEL


def agreement_fixture(pairs: int = 300, seed: int = 0):
    """Minimal pairs (grammatical version first, label 1; flipped second, label 0) with varied attractors,
    distances and subject numbers."""
    rng = np.random.default_rng(seed)
    columns, gold = [], []
    for p in range(pairs):
        attractors, number = int(rng.integers(0, 3)), "sg" if rng.random() < 0.5 else "pl"
        distance = 1 + attractors + int(rng.integers(0, 5))
        for label in (1, 0):
            columns.append(
                {"attractors": attractors, "distance": distance, "subject_number": number, "pair_id": f"p{p}"}
            )
            gold.append(label)
    return np.array(gold), columns


def noisy(gold: np.ndarray, accuracy: float, rng, seeds: int = 1) -> np.ndarray:
    """S×N predictions right on about ``accuracy`` of the items."""
    wrong = rng.random((seeds, gold.size)) > accuracy
    return np.where(wrong, 1 - gold, gold)


def test_contrasts_verdicts_holm_and_the_margin_over_the_best_baseline():
    gold, columns = agreement_fixture()
    rng = np.random.default_rng(1)
    twin = noisy(gold, 0.9, rng)
    free = twin.copy()
    free[0, :6] = 1 - free[0, :6]  # six items differ from the twin
    preds = {
        "parser_fed_twin": twin,
        "parser_free": free,
        "no_syntax": noisy(gold, 0.7, rng),
        "majority": np.ones((1, gold.size), dtype=int),
        "prev_word": noisy(gold, 0.6, rng),
    }
    kinds = {
        "parser_fed_twin": MODEL,
        "parser_free": MODEL,
        "no_syntax": MODEL,
        "majority": BASELINE,
        "prev_word": BASELINE,
    }
    like = [
        Pairing("no_syntax", "parser_fed_twin", ("no_syntax", "parser_fed_twin"), "distance source"),
        Pairing("parser_free", "parser_fed_twin", ("parser_free", "parser_fed_twin"), "distance source"),
    ]
    scored = score_domain("agreement", "binary", gold, columns, preds, kinds, like, 2, resamples=500)

    overall = {(c.a, c.b): c for c in scored.contrasts if c.slice == "all"}
    assert set(overall) == {("no_syntax", "parser_fed_twin"), ("parser_free", "parser_fed_twin")} | {
        (m, b) for m in ("parser_fed_twin", "parser_free", "no_syntax") for b in ("majority", "prev_word")
    }
    assert (
        overall[("no_syntax", "parser_fed_twin")].verdict == "behind"
        and overall[("no_syntax", "parser_fed_twin")].kind == LIKE_FOR_LIKE
    )
    assert overall[("parser_free", "parser_fed_twin")].verdict == NO_DIFFERENCE
    assert (
        overall[("parser_fed_twin", "majority")].verdict == AHEAD
        and overall[("parser_fed_twin", "majority")].kind == BASELINE
    )
    assert (
        overall[("parser_fed_twin", "majority")].n_clusters == 300
        and overall[("parser_fed_twin", "majority")].n_items == 600
    )

    slices = {c.slice for c in scored.contrasts}
    assert {"attractors:2+", "distance:1", "subject_number×attractors:pl/1"} <= slices
    for name in slices:  # Holm over the 8 contrasts of one slice, not over all slices
        family = [c for c in scored.contrasts if c.slice == name]
        smallest = min(family, key=lambda c: c.p)
        assert len(family) == 8 and smallest.p_holm == pytest.approx(min(1.0, 8 * smallest.p))

    margin = scored.scores["parser_fed_twin"].over_best_baseline
    assert margin.baseline == "prev_word" and margin.verdict == AHEAD  # majority is at 50 %, prev_word near 60 %
    assert margin.difference == pytest.approx(
        scored.scores["parser_fed_twin"].metric - scored.scores["prev_word"].metric
    )
    assert scored.scores["majority"].over_best_baseline is None
    assert (
        scored.scores["majority"].pair_accuracy == 0.0 and scored.n_pairs == 300
    )  # always "grammatical": one of each pair
    assert scored.breakdown["parser_fed_twin"]["subject_number×attractors"]["sg/0"].n > 0


def test_several_seeds_give_mean_and_sd_and_verdicts_over_seeds_and_items():
    gold, columns = agreement_fixture(pairs=200)
    rng = np.random.default_rng(2)
    preds = {
        "parser_fed_twin": noisy(gold, 0.85, rng, seeds=3),
        "no_syntax": noisy(gold, 0.7, rng, seeds=3),
        "majority": np.ones((1, gold.size), dtype=int),
    }
    kinds = {"parser_fed_twin": MODEL, "no_syntax": MODEL, "majority": BASELINE}
    like = [Pairing("no_syntax", "parser_fed_twin", ("no_syntax", "parser_fed_twin"), "distance source")]
    scored = score_domain("agreement", "binary", gold, columns, preds, kinds, like, 2, resamples=300)
    twin = scored.scores["parser_fed_twin"]
    per_seed = [100 * np.mean(p == gold) for p in preds["parser_fed_twin"]]
    assert twin.metric == pytest.approx(np.mean(per_seed)) and twin.metric_sd == pytest.approx(np.std(per_seed, ddof=1))
    assert len(twin.per_seed) == 3 and scored.scores["majority"].metric_sd is None
    c = next(c for c in scored.contrasts if c.slice == "all" and c.a == "no_syntax")
    assert c.seeds == 3 and c.p_seeds is not None and c.p == max(c.p_items, c.p_seeds) and c.verdict == "behind"
    assert c.detectable is not None and c.detectable_seeds is not None


def test_regression_domains_get_scores_but_no_verdicts():
    gold = np.linspace(-1, 1, 20)
    preds = {"a": gold[None] + 0.1, "b": -gold[None]}
    scored = score_domain("scores", "regression", gold, None, preds, {"a": MODEL, "b": MODEL}, [], 1)
    assert scored.contrasts == [] and scored.scores["a"].metric == pytest.approx(1.0) and scored.breakdown is None
