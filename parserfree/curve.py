"""The low-resource curve (``parserfree curve``): the recipes trained on shares of the training split.

The method's own claim is that syntax helps most with little data. For each fraction of the training
split and each seed, every recipe of the config is trained (the seed sets the initialisation and which
share of the training split is kept; for one seed a smaller share is a subset of a larger one) and scored
on the full test split. With ``--recipes pretrain_predictor`` the same command gives the predictor's
scaling curve: UUAS against the number of pre-training sentences. Every run of a curve starts from the same
pre-trained predictor (the config's, trained once with its own seed, or the best cached one of its family:
``main_job.pretrain_stage``), so the seed-to-seed sd measures the task training and the share of the data
kept, not the variance of pre-training; ``curve.json`` names that predictor. Results: ``curve.json`` (every run, and mean ± sd per fraction and recipe, with
each recipe's gain over the baseline), ``curve.md`` and ``curve.png``. Runs that finished are reused,
so an interrupted curve resumes.
"""

from __future__ import annotations

import copy
import statistics
from pathlib import Path

from parserfree.distill.config import ExperimentConfig, save_config
from parserfree.distill.recipes import comparison_roles
from parserfree.encoder.files import write_json, write_text_atomic
from parserfree.main_job import pretrain_stage, train_recipes


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
            cfg = copy.deepcopy(config)
            cfg.seed = seed
            cfg.data.train_fraction = fraction
            cfg.data.train_sample_seed = seed
            results = train_recipes(cfg, recipes, pretrained, out / f"f{fraction:g}-s{seed}", cache_dir, progress)
            runs += [_run_row(fraction, seed, recipe, results[recipe]) for recipe in recipes]
    curve = {"dataset": config.data.dataset, "fractions": fractions, "seeds": seeds, "recipes": recipes,
             "pretrained": predictor["run_dir"] if predictor else None,  # one pre-training for every seed
             "baseline": comparison_roles(recipes).baseline, "runs": runs, "summary": summarise(runs)}
    write_json(out / "curve.json", curve)
    write_text_atomic(out / "curve.md", curve_markdown(curve))
    plot_curve(curve, out / "curve.png")
    return curve


def _run_row(fraction: float, seed: int, recipe: str, result: dict) -> dict:
    """One run of the curve: its task metric on dev and test (UUAS for predictor pre-training, which has
    no task), and D̂ quality on test where the model has a predictor."""
    dev, test = result["dev"], result["test"]
    name = test.get("metric_name", "uuas")
    row = {"fraction": fraction, "seed": seed, "recipe": recipe, "n_train": result.get("n_train"), "metric_name": name,
           "dev": dev.get("metric", dev.get("uuas")), "test": test.get("metric", test.get("uuas"))}
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
            run["recipe"], {"values": [], "dspr": [], "n_train": run["n_train"]})
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
    return {f: by[recipe]["mean"] - by[base]["mean"] for f, by in curve["summary"].items() if base and recipe in by and base in by}


def curve_markdown(curve: dict) -> str:
    """The curve as a table: mean ± sd per recipe and fraction, and the gain over the baseline."""
    recipes, base = curve["recipes"], curve["baseline"]
    metric = curve["runs"][0]["metric_name"] if curve["runs"] else "metric"
    kind = "Scaling curve of the predictor" if metric == "uuas" else "Low-resource curve"
    seeds = f"{curve['seeds']} seed{'s' if curve['seeds'] != 1 else ''}"
    lines = [f"# {kind} — {curve['dataset']} (test {metric}, {seeds}, mean ± sd)", "",
             "| fraction | train examples | " + " | ".join(recipes) + " |", "|---:|---:|" + "---:|" * len(recipes)]
    for f, by in curve["summary"].items():
        n = next(iter(by.values()))["n_train"]
        cells = [f"{by[r]['mean']:.2f} ± {by[r]['sd']:.2f}" if r in by else "–" for r in recipes]
        lines.append(f"| {f} | {n if n is not None else '–'} | " + " | ".join(cells) + " |")
    if metric == "uuas" and any("dspr_mean" in e for by in curve["summary"].values() for e in by.values()):
        lines += ["", "Test DSpr (Spearman of D̂ with the tree distances):", "", "| fraction | " + " | ".join(recipes) + " |",
                  "|---:|" + "---:|" * len(recipes)]
        for f, by in curve["summary"].items():
            cells = [f"{by[r]['dspr_mean']:.3f} ± {by[r]['dspr_sd']:.3f}" if "dspr_mean" in by.get(r, {}) else "–" for r in recipes]
            lines.append(f"| {f} | " + " | ".join(cells) + " |")
    if base:
        lines += ["", f"Gain over {base} (points):", "", "| fraction | " + " | ".join(r for r in recipes if r != base) + " |",
                  "|---:|" + "---:|" * (len(recipes) - 1)]
        for f in curve["summary"]:
            lines.append(f"| {f} | " + " | ".join(f"{gains(curve, r).get(f, float('nan')):+.2f}" for r in recipes if r != base) + " |")
    return "\n".join(lines) + "\n"


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
            points = [(f, by[recipe]) for f, by in zip(fractions, curve["summary"].values()) if mean in by.get(recipe, {})]
            xs = [e["n_train"] if metric == "uuas" else f for f, e in points]
            ax.errorbar(xs, [e[mean] for _, e in points], yerr=[e[sd] for _, e in points], marker="o", capsize=3, label=recipe)
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
    lines = [f"Test {runs[0]['metric_name']} at fraction {fraction}, seed by seed:", "",
             "| recipe | " + " | ".join(f"seed {s}" for s in seeds) + " | mean ± sd |", "|---|" + "---:|" * (len(seeds) + 1)]
    for recipe in curve["recipes"]:
        cells = [f"{test[recipe, s]:.2f}" if (recipe, s) in test else "–" for s in seeds]
        entry = summary.get(recipe)
        mean = f"{entry['mean']:.2f} ± {entry['sd']:.2f}" if entry else "–"
        lines.append(f"| {recipe} | " + " | ".join(cells) + f" | {mean} |")
    for recipe in (r for r in curve["recipes"] if base and r != base):
        cells = [f"{test[recipe, s] - test[base, s]:+.2f}" if (recipe, s) in test and (base, s) in test else "–" for s in seeds]
        lines.append(f"| gain of {recipe} over {base} | " + " | ".join(cells) + f" | {gains(curve, recipe).get(fraction, float('nan')):+.2f} |")
    return "\n".join(lines)
