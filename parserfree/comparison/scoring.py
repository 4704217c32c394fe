"""Scoring one domain from its rows' per-item predictions: task scores over seeds, breakdowns, minimal-pair
accuracy and the paired verdicts of every like-for-like pair and of every model row against every
shortcut baseline, overall and per breakdown bucket.

Shared by ``parserfree compare`` (predictions of models run end to end, and of the baselines) and
``parserfree curve`` (the test predictions every training run keeps), so a verdict means the same in
both. Needs no model: rows are class ids (or regression scores) per seed and item. Regression domains
get scores only (no paired test of accuracy applies).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ..core.task_metrics import task_metrics
from ..distill.data.agreement import PAIR_ID
from ..reports.parts import RowBreakdown
from ..reports.report import BASELINE, LIKE_FOR_LIKE, MODEL, Contrast, Margin, Score, StatisticsNote
from ..reports.slices import ALL
from .breakdown import Slices, breakdowns, item_slices
from .like_for_like import Pairing
from .paired import ALPHA, POWER, RESAMPLES, holm, paired_test, verdict

AGAINST_BASELINE = "a model row against a shortcut baseline"


@dataclass
class DomainScores:
    """What ``score_domain`` finds on one domain."""

    scores: dict[str, Score]
    breakdown: dict[str, RowBreakdown] | None
    contrasts: list[Contrast]
    n_pairs: int


def row_score(task: str, predictions: np.ndarray, gold: np.ndarray, n_classes: int, slices: Slices | None) -> Score:
    """A row's Score from its S×N predictions: ``task_metrics`` of every seed, the mean and sd of the
    metric, and minimal-pair accuracy (classification with pair ids)."""
    per_seed = [task_metrics(task, p, gold, n_classes) for p in predictions]
    values = np.array([m["metric"] for m in per_seed], dtype=float)
    pairs, n_pairs = (None, 0)
    if slices is not None:
        pairs, n_pairs = slices.pair_accuracy(predictions == gold, slices.masks[ALL])
    return Score(
        metric_name=per_seed[0]["metric_name"],
        metric=float(values.mean()),
        metric_sd=float(np.std(values, ddof=1)) if values.size > 1 else None,
        per_seed=per_seed,
        pair_accuracy=pairs,
        n_pairs=n_pairs,
    )


def statistics_note(seeds: int, pairs: bool, resamples: int) -> StatisticsNote:
    """What the verdicts of a report of this many seeds are (docs/statistics.md)."""
    test = (
        "sign-flip test over clusters (minimal pairs, else items) of the difference in correct items; "
        "exact McNemar without pairs"
        if seeds == 1
        else "sign-flip permutation test over clusters of the seed-averaged difference and one-sample t-test "
        "over the per-seed differences, both must reject (p = the larger)"
    )
    power = (
        "Connor 1987 normal approximation on the cluster sums at the observed discordance (McNemar's without pairs)"
        if seeds == 1
        else "normal approximation on the cluster sums (items) and noncentral t (seeds); the larger"
    )
    return StatisticsNote(
        alpha=ALPHA,
        power=POWER,
        resamples=resamples,
        resampling_unit="minimal pair" if pairs else "item",
        test=test,
        power_method=power,
    )


def pairings_with_baselines(like_for_like: Sequence[Pairing], kinds: Mapping[str, str]) -> list[tuple[Pairing, str]]:
    """The like-for-like pairs among the model rows, then every model row against every baseline row."""
    models = [n for n, k in kinds.items() if k == MODEL]
    baselines = [n for n, k in kinds.items() if k == BASELINE]
    out = [(p, LIKE_FOR_LIKE) for p in like_for_like if p.a in models and p.b in models]
    out += [(Pairing(m, b, (m, b), AGAINST_BASELINE), BASELINE) for m in models for b in baselines]
    return out


def verdicts(
    dataset: str, correct: Mapping[str, np.ndarray], pairings: Sequence[tuple[Pairing, str]], slices: Slices
) -> list[Contrast]:
    """Every pairing on every slice, Holm-corrected within each slice."""
    out: list[Contrast] = []
    for name, mask in slices.masks.items():
        if not mask.any():
            continue
        resampler = slices.resampler(name)
        boot = {row: resampler.accuracies(c[:, mask]) for row, c in correct.items()}
        results = [
            paired_test(
                correct[p.a][:, mask], correct[p.b][:, mask], slices.clusters[mask], resampler, boot[p.a], boot[p.b]
            )
            for p, _ in pairings
        ]
        for (p, kind), result, adjusted in zip(pairings, results, holm([r.p for r in results])):
            out.append(
                Contrast(
                    **asdict(result),
                    domain=dataset,
                    slice=name,
                    a=p.a,
                    b=p.b,
                    kind=kind,
                    differs_in=p.differs_in,
                    p_holm=adjusted,
                    verdict=verdict(result.difference, result.ci95, adjusted),
                )
            )
    return out


def score_domain(
    dataset: str,
    task: str,
    gold: np.ndarray,
    columns: Sequence[Mapping | None] | None,
    predictions: Mapping[str, np.ndarray],
    kinds: Mapping[str, str],
    like_for_like: Sequence[Pairing],
    n_classes: int,
    resamples: int = RESAMPLES,
) -> DomainScores:
    """Scores, breakdowns and paired verdicts of the rows of one domain (name → S×N predictions in item
    order, S = 1 for a baseline; ``kinds`` says which rows are models and which baselines)."""
    gold = np.asarray(gold)
    predictions = {name: np.atleast_2d(np.asarray(p)) for name, p in predictions.items()}
    if task == "regression":
        return DomainScores(
            {name: row_score(task, p, gold, n_classes, None) for name, p in predictions.items()}, None, [], 0
        )
    seeds = max(p.shape[0] for p in predictions.values())
    slices = item_slices(columns, gold.size, seeds, resamples, PAIR_ID)
    correct = {name: p == gold for name, p in predictions.items()}
    scores = {name: row_score(task, p, gold, n_classes, slices) for name, p in predictions.items()}
    contrasts = verdicts(dataset, correct, pairings_with_baselines(like_for_like, kinds), slices)
    baselines = [n for n, k in kinds.items() if k == BASELINE]
    if baselines:
        best = max(baselines, key=lambda n: scores[n].metric)
        for c in contrasts:
            if c.slice == ALL and c.kind == BASELINE and c.b == best:
                scores[c.a].over_best_baseline = Margin(
                    baseline=best, difference=c.difference, ci95=c.ci95, p_holm=c.p_holm, verdict=c.verdict
                )
    n_pairs = slices.pair_accuracy(np.ones((1, gold.size), dtype=bool), slices.masks[ALL])[1]
    return DomainScores(scores, breakdowns(correct, slices), contrasts, n_pairs)
