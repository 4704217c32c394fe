"""A curve's tables as Markdown: ``curve.json`` → curve.md, and the curves on the results pages.

The rendering half of ``parserfree curve`` (``parserfree.jobs.curve`` trains the runs; ``parserfree.reports.figures``
draws curve.png): ``summarise`` turns the runs into mean ± sd per fraction and recipe, ``gains`` the gain
of a recipe over the baseline, ``curve_markdown`` the whole table with the paired verdicts and
``seeds_markdown`` one fraction seed by seed. Needs no model and no training code.
"""

from __future__ import annotations

import statistics

from .slices import ALL


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
        lines += [f"| {c['domain']} | {c['a']} | {c['b']} | {_paired_cells(c, c['verdict'])} |" for c in overall]
    gains_ = curve.get("gain_contrasts") or []
    if gains_:
        lines += [
            "",
            f"Is the gain larger with less data? Each share's gain over {gains_[0]['baseline']} minus the gain at "
            f"{gains_[0]['against']:g}, paired over the same test items seed by seed (the same tests; Holm over "
            "the shares of one recipe):",
            "",
            "| fraction | recipe | gain there − gain at the largest (points) [95 % interval] | p | p (Holm) | verdict | detectable |",
            "|---:|---|---:|---:|---:|---|---:|",
        ]
        for g in gains_:
            verdict = {"ahead": "larger", "behind": "smaller"}.get(g["verdict"], g["verdict"])
            lines.append(f"| {g['fraction']:g} | {g['recipe']} | {_paired_cells(g, verdict)} |")
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


def _paired_cells(c: dict, verdict: str) -> str:
    """A paired result's cells: difference [interval] | p | p (Holm) | verdict | detectable."""
    detectable = f"±{c['detectable']:.2f}" if c["detectable"] is not None else "none"
    return (
        f"{c['difference']:+.2f} [{c['ci95'][0]:.2f}, {c['ci95'][1]:.2f}] | {c['p']:.3g} | {c['p_holm']:.3g} | "
        f"**{verdict}** | {detectable}"
    )


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
