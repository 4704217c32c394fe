"""The low-resource curve (``parserfree curve``): the recipes trained on shares of the training split.

The method's own claim is that syntax helps most with little data. For each fraction of the training
split and each seed, every recipe of the config is trained (the seed sets the initialisation and which
share of the training split is kept; for one seed a smaller share is a subset of a larger one) and scored
on the full test split. With ``--recipes pretrain_predictor`` the same command gives the predictor's
scaling curve: UUAS against the number of pre-training sentences. Every run of a curve starts from the same
pre-trained predictor (the config's, trained once with its own seed, or the best cached one of its family:
``stages.pretrain_stage``), so the seed-to-seed sd measures the task training and the share of the data
kept, not the variance of pre-training; ``curve.json`` names that predictor. Results: ``curve.json`` (every
run, and mean ± sd per fraction and recipe, with each recipe's gain over the baseline, and the paired
verdicts of every like-for-like pair of recipes per fraction over seeds × test items, from the test
predictions each run keeps — ``parserfree.comparison.scoring``), ``curve.md`` (drawn by ``curve_tables``) and
``curve.png`` (``figures``). Runs that finished are reused, so an interrupted curve resumes.
"""

from __future__ import annotations

import copy
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..comparison.like_for_like import Pairing, like_for_like
from ..comparison.paired import clusters_of, gain_test, holm, verdict
from ..comparison.scoring import score_domain
from ..core.recipes import comparison_roles, get_recipe
from ..distill.config import ExperimentConfig, save_config
from ..distill.data.agreement import PAIR_ID
from ..distill.predictions import read_predictions
from ..encoder.files import write_json, write_text_atomic
from ..reports.curve_tables import curve_markdown, summarise
from ..reports.figures import plot_curve
from ..reports.report import MODEL, Contrast
from .stages import pretrain_stage, recipe_config, train_recipes

Found = tuple[np.ndarray, list, dict[str, np.ndarray], int]
"""One fraction's test items (``test_predictions``): gold labels, columns, each recipe's S×N predictions, classes."""
Loaded = dict[float, Found | list[str]]
"""Each fraction's ``test_predictions``, read once for every verdict of the curve (empty without a task)."""


def run_curve(
    config: ExperimentConfig,
    out_dir: str | Path,
    fractions: list[float],
    seeds: int,
    recipes: list[str] | None = None,
    cache_dir: str | None = None,
    progress: bool = True,
) -> dict:
    """Train ``recipes`` (default: the config's ``run.recipes``) at every fraction × seed; write the curve."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_config(config, out / "config.yaml")
    recipes = list(recipes or config.run.recipes)
    predictor = pretrain_stage(config, cache_dir, progress)  # from the cache: shared with every curve and job
    pretrained = predictor["checkpoint"] if predictor else None
    runs = []
    for fraction in fractions:
        for seed in range(seeds):
            results = train_recipes(
                cell_config(config, fraction, seed),
                recipes,
                pretrained,
                cell_folder(out, fraction, seed),
                cache_dir,
                progress,
            )
            runs += [_run_row(fraction, seed, recipe, results[recipe]) for recipe in recipes]
    pairings = like_for_like(
        {
            r: (recipe_config(cell_config(config, 1.0, 0), r, pretrained).resolved().to_dict(), get_recipe(r))
            for r in recipes
        }
    )
    loaded = {f: test_predictions(out, f, seeds, recipes) for f in fractions} if config.data.task != "none" else {}
    contrasts, missing = curve_contrasts(loaded, recipes, pairings, config.data.task)
    curve = {
        "dataset": config.data.dataset,
        "fractions": fractions,
        "seeds": seeds,
        "recipes": recipes,
        "pretrained": predictor["run_dir"] if predictor else None,  # one pre-training for every seed
        "baseline": comparison_roles(recipes).unbiased,
        "runs": runs,
        "summary": summarise(runs),
        "contrasts": [asdict(c) for c in contrasts],
        "gain_contrasts": gain_contrasts(loaded, recipes, comparison_roles(recipes).unbiased),
        "no_predictions": missing,
    }
    write_json(out / "curve.json", curve)
    write_text_atomic(out / "curve.md", curve_markdown(curve))
    plot_curve(curve, out / "curve.png")
    return curve


def cell_config(config: ExperimentConfig, fraction: float, seed: int) -> ExperimentConfig:
    """The config of one cell of the curve: ``fraction`` of the training split, its share and the
    initialisation chosen by ``seed``."""
    cfg = copy.deepcopy(config)
    cfg.seed = seed
    cfg.data.train_fraction = fraction
    cfg.data.train_sample_seed = seed
    return cfg


def cell_folder(out: Path, fraction: float, seed: int) -> Path:
    """Where the runs of one cell live."""
    return out / f"f{fraction:g}-s{seed}"


def curve_contrasts(
    loaded: Loaded, recipes: list[str], pairings: list[Pairing], task: str
) -> tuple[list[Contrast], list[str]]:
    """Paired verdicts of every like-for-like pair of recipes at each fraction, over seeds × test items, from
    the test predictions every run keeps (``predictions.jsonl``); the runs without them (trained by an
    older parserfree) are listed instead and their fraction gets no verdicts."""
    contrasts: list[Contrast] = []
    missing: list[str] = []
    for fraction, found in loaded.items():
        if isinstance(found, list):
            missing += found
            continue
        gold, columns, preds, n_classes = found
        scored = score_domain(
            f"{fraction:g}", task, gold, columns, preds, {r: MODEL for r in recipes}, pairings, n_classes
        )
        contrasts += scored.contrasts
    return contrasts, missing


def test_predictions(out: Path, fraction: float, seeds: int, recipes: list[str]) -> Found | list[str]:
    """One fraction's test items: gold labels (N), the items' columns, each recipe's S×N predictions and the
    number of classes —
    or what is missing (the runs without ``predictions.jsonl``, or one line when the runs' items differ)."""
    files = {r: [cell_folder(out, fraction, s) / r / "predictions.jsonl" for s in range(seeds)] for r in recipes}
    absent = [str(f) for paths in files.values() for f in paths if not f.is_file()]
    if absent:
        return absent
    records = {r: [read_predictions(f) for f in paths] for r, paths in files.items()}
    first = records[recipes[0]][0]
    gold = np.array([x["gold"] for x in first])
    if any([x["gold"] for x in seed] != gold.tolist() for seeds_ in records.values() for seed in seeds_):
        return [f"f{fraction:g}: the runs' test items differ"]
    preds = {r: np.array([[x["prediction"] for x in seed] for seed in seeds_]) for r, seeds_ in records.items()}
    n_classes = len(first[0].get("probabilities") or [0, 0]) if first else 2
    return gold, [x["columns"] for x in first], preds, n_classes


def gain_contrasts(loaded: Loaded, recipes: list[str], baseline: str | None) -> list[dict]:
    """Is a recipe's gain over the baseline larger with less data? For every recipe but the baseline and
    every fraction but the largest, the gain there minus the gain at the largest fraction, paired over the
    same test items and seed by seed (``paired.gain_test``; Holm over the fractions of one recipe). Empty
    without a baseline, a task, or the test predictions of every run."""
    fractions = list(loaded)
    if not baseline or len(fractions) < 2:
        return []
    found: dict[float, dict[str, np.ndarray]] = {}
    largest = max(fractions)
    reference = loaded[largest]
    if isinstance(reference, list):
        return []
    gold, columns = reference[0], reference[1]
    for fraction in fractions:
        got = loaded[fraction]
        if isinstance(got, list) or not np.array_equal(got[0], gold):
            return []  # a run without predictions, or other test items: nothing to pair
        found[fraction] = got[2]
    clusters = clusters_of([(c or {}).get(PAIR_ID) for c in columns], len(gold))

    def gain(fraction: float, recipe: str) -> np.ndarray:
        preds = found[fraction]
        return (preds[recipe] == gold).astype(float) - (preds[baseline] == gold)

    rows: list[dict] = []
    for recipe in (r for r in recipes if r != baseline):
        tests = [(f, gain_test(gain(f, recipe), gain(largest, recipe), clusters)) for f in fractions if f != largest]
        for (fraction, result), p_holm in zip(tests, holm([t.p for _, t in tests]), strict=True):
            rows.append(
                {
                    "recipe": recipe,
                    "baseline": baseline,
                    "fraction": fraction,
                    "against": largest,
                    **asdict(result),
                    "p_holm": p_holm,
                    "verdict": verdict(result.difference, result.ci95, p_holm),
                }
            )
    return rows


def _run_row(fraction: float, seed: int, recipe: str, result: dict) -> dict:
    """One run of the curve: its task metric on dev and test (UUAS for predictor pre-training, which has
    no task), and D̂ quality on test where the model has a predictor."""
    dev, test = result["dev"], result["test"]
    name = test.get("metric_name", "uuas")
    row = {
        "fraction": fraction,
        "seed": seed,
        "recipe": recipe,
        "n_train": result.get("n_train"),
        "metric_name": name,
        "dev": dev.get("metric", dev.get("uuas")),
        "test": test.get("metric", test.get("uuas")),
    }
    row.update({k: test[k] for k in ("uuas", "dspr") if k in test})
    return row
