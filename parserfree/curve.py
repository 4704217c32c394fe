"""The low-resource curve (``parserfree curve``): the recipes trained on shares of the training split.

The method's own claim is that syntax helps most with little data. For each fraction of the training
split and each seed, every recipe of the config is trained (the seed sets the initialisation and which
share of the training split is kept; for one seed a smaller share is a subset of a larger one) and scored
on the full test split. With ``--recipes pretrain_predictor`` the same command gives the predictor's
scaling curve: UUAS against the number of pre-training sentences. Every run of a curve starts from the same
pre-trained predictor (the config's, trained once with its own seed, or the best cached one of its family:
``main_job.pretrain_stage``), so the seed-to-seed sd measures the task training and the share of the data
kept, not the variance of pre-training; ``curve.json`` names that predictor. Results: ``curve.json`` (every
run, and mean ± sd per fraction and recipe, with each recipe's gain over the baseline, and the paired
verdicts of every like-for-like pair of recipes per fraction over seeds × test items, from the test
predictions each run keeps — ``parserfree.scoring``), ``curve.md`` and ``curve.png``. Runs that finished
are reused, so an interrupted curve resumes.
"""

from __future__ import annotations

import copy
import statistics
from dataclasses import asdict
from pathlib import Path

import numpy as np

from parserfree.breakdown import ALL
from parserfree.distill.config import ExperimentConfig, save_config
from parserfree.distill.predictions import read_predictions
from parserfree.distill.recipes import comparison_roles, get_recipe
from parserfree.encoder.files import write_json, write_text_atomic
from parserfree.like_for_like import Pairing, like_for_like
from parserfree.main_job import pretrain_stage, recipe_config, train_recipes
from parserfree.report_types import MODEL, Contrast
from parserfree.scoring import score_domain


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
    contrasts, missing = curve_contrasts(out, config.data.task, fractions, seeds, recipes, pairings)
    curve = {
        "dataset": config.data.dataset,
        "fractions": fractions,
        "seeds": seeds,
        "recipes": recipes,
        "pretrained": predictor["run_dir"] if predictor else None,  # one pre-training for every seed
        "baseline": comparison_roles(recipes).baseline,
        "runs": runs,
        "summary": summarise(runs),
        "contrasts": [asdict(c) for c in contrasts],
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
    out: Path, task: str, fractions: list[float], seeds: int, recipes: list[str], pairings: list[Pairing]
) -> tuple[list[Contrast], list[str]]:
    """Paired verdicts of every like-for-like pair of recipes at each fraction, over seeds × test items, from
    the test predictions every run keeps (``predictions.jsonl``); the runs without them (trained by an
    older parserfree, or without a task) are listed instead and their fraction gets no verdicts."""
    contrasts: list[Contrast] = []
    missing: list[str] = []
    if task == "none":
        return contrasts, missing  # predictor pre-training: no task, nothing to compare item by item
    for fraction in fractions:
        files = {r: [cell_folder(out, fraction, s) / r / "predictions.jsonl" for s in range(seeds)] for r in recipes}
        absent = [str(f) for paths in files.values() for f in paths if not f.is_file()]
        if absent:
            missing += absent
            continue
        records = {r: [read_predictions(f) for f in paths] for r, paths in files.items()}
        first = records[recipes[0]][0]
        gold = np.array([x["gold"] for x in first])
        if any([x["gold"] for x in seed] != gold.tolist() for seeds_ in records.values() for seed in seeds_):
            missing.append(f"f{fraction:g}: the runs' test items differ")
            continue
        preds = {r: np.array([[x["prediction"] for x in seed] for seed in seeds_]) for r, seeds_ in records.items()}
        n_classes = len(first[0].get("probabilities") or [0, 0]) if first else 2
        scored = score_domain(
            f"{fraction:g}",
            task,
            gold,
            [x["columns"] for x in first],
            preds,
            {r: MODEL for r in recipes},
            pairings,
            n_classes,
        )
        contrasts += scored.contrasts
    return contrasts, missing


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


def _mean_sd(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def summarise(runs: list[dict]) -> dict:
    """Per fraction and recipe: n, mean and sd of the test metric (and of the test DSpr where the runs have
    it), and the training examples used."""
    summary: dict = {}
    for run in runs:
        entry = summary.setdefault(f"{run['fraction']:g}", {}).setdefault(
            run["recipe"], {"values": [], "dspr": [], "n_train": run["n_train"]}
        )
        entry["values"].append(run["test"])
        if "dspr" in run:
            entry["dspr"].append(run["dspr"])
    for by_recipe in summary.values():
        for entry in by_recipe.values():
            values, dspr = entry.pop("values"), entry.pop("dspr")
            mean, sd = _mean_sd(values)
            entry.update(n=len(values), mean=mean, sd=sd)
            if len(dspr) == len(values):
                entry["dspr_mean"], entry["dspr_sd"] = _mean_sd(dspr)
    return summary


def gains(curve: dict, recipe: str) -> dict[str, float]:
    """Mean gain of ``recipe`` over the baseline at each fraction (seed-paired means)."""
    base = curve["baseline"]
    return {
        f: by[recipe]["mean"] - by[base]["mean"]
        for f, by in curve["summary"].items()
        if base and recipe in by and base in by
    }


def curve_markdown(curve: dict) -> str:
    """The curve as a table: mean ± sd per recipe and fraction, and the gain over the baseline."""
    recipes, base = curve["recipes"], curve["baseline"]
    metric = curve["runs"][0]["metric_name"] if curve["runs"] else "metric"
    kind = "Scaling curve of the predictor" if metric == "uuas" else "Low-resource curve"
    seeds = f"{curve['seeds']} seed{'s' if curve['seeds'] != 1 else ''}"
    lines = [
        f"# {kind} — {curve['dataset']} (test {metric}, {seeds}, mean ± sd)",
        "",
        "| fraction | train examples | " + " | ".join(recipes) + " |",
        "|---:|---:|" + "---:|" * len(recipes),
    ]
    for f, by in curve["summary"].items():
        n = next(iter(by.values()))["n_train"]
        cells = [f"{by[r]['mean']:.2f} ± {by[r]['sd']:.2f}" if r in by else "–" for r in recipes]
        lines.append(f"| {f} | {n if n is not None else '–'} | " + " | ".join(cells) + " |")
    if metric == "uuas" and any("dspr_mean" in e for by in curve["summary"].values() for e in by.values()):
        lines += [
            "",
            "Test DSpr (Spearman of D̂ with the tree distances):",
            "",
            "| fraction | " + " | ".join(recipes) + " |",
            "|---:|" + "---:|" * len(recipes),
        ]
        for f, by in curve["summary"].items():
            cells = [
                f"{by[r]['dspr_mean']:.3f} ± {by[r]['dspr_sd']:.3f}" if "dspr_mean" in by.get(r, {}) else "–"
                for r in recipes
            ]
            lines.append(f"| {f} | " + " | ".join(cells) + " |")
    if base:
        lines += [
            "",
            f"Gain over {base} (points):",
            "",
            "| fraction | " + " | ".join(r for r in recipes if r != base) + " |",
            "|---:|" + "---:|" * (len(recipes) - 1),
        ]
        for f in curve["summary"]:
            lines.append(
                f"| {f} | "
                + " | ".join(f"{gains(curve, r).get(f, float('nan')):+.2f}" for r in recipes if r != base)
                + " |"
            )
    lines += verdict_lines(curve)
    return "\n".join(lines) + "\n"


def verdict_lines(curve: dict) -> list[str]:
    """The curve's paired verdicts on all test items, per fraction and like-for-like pair, as Markdown."""
    overall = [c for c in curve.get("contrasts", []) if c["slice"] == ALL]
    lines = []
    if overall:
        seeds = curve["seeds"]
        test = (
            "sign-flip over clusters of test items (McNemar without pairs)"
            if seeds == 1
            else f"sign-flip over test items and t-test over the {seeds} seeds, both must reject"
        )
        lines += [
            "",
            f"Paired verdicts on the test items ({test}; 95 % bootstrap interval; Holm per fraction; *detectable*: the "
            "smallest paired difference detectable at α 0.05 with power 0.8 — docs/statistics.md):",
            "",
            "| fraction | a | b | a − b (points) [95 % interval] | p | p (Holm) | verdict | detectable |",
            "|---:|---|---|---:|---:|---:|---|---:|",
        ]
        for c in overall:
            detectable = f"±{c['detectable']:.2f}" if c["detectable"] is not None else "none"
            lines.append(
                f"| {c['domain']} | {c['a']} | {c['b']} | {c['difference']:+.2f} [{c['ci95'][0]:.2f}, {c['ci95'][1]:.2f}] | "
                f"{c['p']:.3g} | {c['p_holm']:.3g} | **{c['verdict']}** | {detectable} |"
            )
    if curve.get("no_predictions"):
        lines += [
            "",
            f"No verdicts where runs kept no test predictions ({len(curve['no_predictions'])} runs, e.g. "
            f"{curve['no_predictions'][0]}): delete those runs to train them again.",
        ]
    if curve.get("pretrained"):
        lines += [
            "",
            "**Seeds.** Every seed starts from the same pre-training run: the sd covers the task training (initialisation, "
            "batch order, training share), not pre-training.",
        ]
    return lines


def plot_curve(curve: dict, path: Path) -> None:
    """Mean ± sd of the test metric against the fraction of training data, one line per recipe; for a
    predictor-only curve (no task), UUAS and DSpr side by side against the number of training sentences."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metric = curve["runs"][0]["metric_name"] if curve["runs"] else "metric"
    panels = [("mean", "sd", f"test {'UUAS' if metric == 'uuas' else metric}")]
    if metric == "uuas":
        panels.append(("dspr_mean", "dspr_sd", "test DSpr"))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.2), squeeze=False)
    fractions = [float(f) for f in curve["summary"]]
    for ax, (mean, sd, label) in zip(axes[0], panels):
        ax.set_xscale("log")
        ticks = fractions
        for recipe in curve["recipes"]:
            points = [
                (f, by[recipe]) for f, by in zip(fractions, curve["summary"].values()) if mean in by.get(recipe, {})
            ]
            xs = [e["n_train"] if metric == "uuas" else f for f, e in points]
            ax.errorbar(
                xs, [e[mean] for _, e in points], yerr=[e[sd] for _, e in points], marker="o", capsize=3, label=recipe
            )
            ticks = xs
        ax.set_xticks(ticks, [f"{x:,}" if metric == "uuas" else f"{x:g}" for x in ticks])
        ax.minorticks_off()
        ax.set_xlabel("training sentences" if metric == "uuas" else "fraction of the training split")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(f"{curve['dataset']}: {curve['seeds']} seed{'s' if curve['seeds'] > 1 else ''}, mean ± sd")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def seeds_markdown(curve: dict, fraction: str) -> str:
    """One fraction of the curve seed by seed: each recipe's test metric per seed with mean ± sd, and each
    recipe's gain over the baseline per seed (the seeds share their start, so the pairs are like for like)."""
    runs = [r for r in curve["runs"] if f"{r['fraction']:g}" == fraction]
    if not runs:
        raise ValueError(f"the curve has no runs at fraction {fraction} (it has {', '.join(curve['summary'])})")
    seeds = sorted({r["seed"] for r in runs})
    test = {(r["recipe"], r["seed"]): r["test"] for r in runs}
    summary, base = curve["summary"][fraction], curve["baseline"]
    lines = [
        f"Test {runs[0]['metric_name']} at fraction {fraction}, seed by seed:",
        "",
        "| recipe | " + " | ".join(f"seed {s}" for s in seeds) + " | mean ± sd |",
        "|---|" + "---:|" * (len(seeds) + 1),
    ]
    for recipe in curve["recipes"]:
        cells = [f"{test[recipe, s]:.2f}" if (recipe, s) in test else "–" for s in seeds]
        entry = summary.get(recipe)
        mean = f"{entry['mean']:.2f} ± {entry['sd']:.2f}" if entry else "–"
        lines.append(f"| {recipe} | " + " | ".join(cells) + f" | {mean} |")
    for recipe in (r for r in curve["recipes"] if base and r != base):
        cells = [
            f"{test[recipe, s] - test[base, s]:+.2f}" if (recipe, s) in test and (base, s) in test else "–"
            for s in seeds
        ]
        lines.append(
            f"| gain of {recipe} over {base} | "
            + " | ".join(cells)
            + f" | {gains(curve, recipe).get(fraction, float('nan')):+.2f} |"
        )
    return "\n".join(lines)
