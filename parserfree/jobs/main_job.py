"""The main job (``parserfree run``): for each task, data → parse → train the recipes → export → compare.

Strings the whole data flow together from one config per task (``run_task``) and writes an index page
over the tasks' reports (``run_main_job``). The stages below the comparison (pre-training, training,
serving, export) are ``stages``'; the comparison stage is here. Each stage records what it was built
from (``stages.py``: its resolved settings and its inputs' digests), so re-running the same command skips
what is done, resumes what is not (a training run from its ``last.ckpt``) and rebuilds — saying what
changed — every stage whose settings or inputs changed, and every stage downstream of it.
Layout of a task's folder: ``predictor.json`` (which pre-trained predictor the rows start from; the
pre-trainings themselves live in the cache, ``<cache>/predictors/``, shared by every task, curve and output
folder), one run folder per recipe, ``bundle/`` (the parser-free ONNX bundle), ``bundle_<recipe>/`` (the
other recipes' graphs), ``report/``, ``stages/``; with several seeds (``--seeds N``) seed 0 keeps that
layout and seed s its own ``seed-<s>/`` folder of runs, bundles and stage records (every seed starts from
the same pre-trained predictor), and the one report compares the rows over all seeds.

Which models are compared comes from the recipe table: every recipe with a predictor starts from the
pre-trained lower layers and predictor (when pre-training is on), so the like-for-like rows differ in
their distance source only; the parser-free bundle is compared with the parser-fed twin when it is
trained (else the published ``parser_fed``), the others are extra rows of the same report.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import time
from pathlib import Path

from ..core.recipes import comparison_roles
from ..distill.config import ExperimentConfig, save_config
from ..encoder.errors import UsageError
from ..encoder.files import write_json
from ..reports.report import REPORT_FORMAT, Report
from .stage_records import StageRecord, compare_fingerprint
from .stages import export_stage, log, pretrain_stage, read_json, train_recipes


def compare_threads(config: ExperimentConfig) -> int:
    """Intra-op threads of the comparison: the config's ``threads``, else one per core."""
    return config.threads or os.cpu_count() or 1


def seed_folder(out: Path, seed: int) -> Path:
    """Where seed ``seed`` of a task's runs and bundles live: the task folder itself for seed 0 (so a
    one-seed job and seed 0 of a several-seed job are the same runs), ``seed-<s>/`` beside it otherwise."""
    return out if seed == 0 else out / f"seed-{seed}"


def seed_config(config: ExperimentConfig, seed: int) -> ExperimentConfig:
    """The task's config for its ``seed``-th seed: ``config.seed + seed`` (initialisation and batch order;
    the training data stay the same)."""
    cfg = copy.deepcopy(config)
    cfg.seed = config.seed + seed
    return cfg


def run_task(
    config: ExperimentConfig, out_dir: str | Path, cache_dir: str | None = None, progress: bool = True, seeds: int = 1
) -> Report:
    """Run (or resume) every stage of one task, each recipe trained and exported ``seeds`` times; returns its
    comparison report (every row over the seeds, paired verdicts over seeds × items)."""
    from ..comparison.compare import ComparedModels, CompareOptions, compare

    if seeds < 1:
        raise UsageError(f"--seeds {seeds} must be ≥ 1")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_config(config, out / "config.yaml")
    start = time.perf_counter()
    predictor = pretrain_stage(config, cache_dir, progress)
    pretrained = predictor["checkpoint"] if predictor else None
    if predictor:
        write_json(out / "predictor.json", predictor)
    roles = comparison_roles(config.run.recipes)
    bundles: dict[str, list[Path]] = {recipe: [] for recipe in config.run.recipes}
    for seed in range(seeds):
        folder = seed_folder(out, seed)
        if seeds > 1:
            log(f"seed {seed + 1} of {seeds} (seed {config.seed + seed}) → {folder}")
        train_recipes(seed_config(config, seed), config.run.recipes, pretrained, folder, cache_dir, progress)
        for recipe in config.run.recipes:
            main = recipe == roles.parser_free
            bundle = folder / (
                "bundle" if main else f"bundle_{recipe}"
            )  # seed 0's product: with the optimised and int8 variants
            export_stage(config, folder / recipe / "checkpoints" / "best.ckpt", bundle, full=main and seed == 0)
            bundles[recipe].append(bundle)

    settings = {
        "datasets": config.run.compare_datasets,
        "max_examples": config.run.compare_max_examples,
        "latency_examples": config.run.latency_examples,
        "threads": compare_threads(config),
        "roles": str(roles),
        "seeds": seeds,
        "report_format": REPORT_FORMAT,
    }
    every_bundle = {
        recipe if seed == 0 else f"{recipe}@seed-{seed}": bundle
        for recipe, paths in bundles.items()
        for seed, bundle in enumerate(paths)
    }
    compared = [dataclasses.replace(config.data, dataset=d) for d in config.run.compare_datasets]
    record = StageRecord(out / "report", compare_fingerprint(settings, every_bundle, compared))
    saved = read_json(out / "report" / "report.json")
    action, why = record.plan(intact=saved is not None and saved.get("format") == REPORT_FORMAT)
    if action == "skip":
        log("compare: report exists, skipping")
        report = Report.from_dict(saved)
    else:
        if why:
            log(f"compare: {why} — comparing again")
        log(f"compare on {', '.join(config.run.compare_datasets)} ({compare_threads(config)} threads)")
        record.start(fresh=True)
        models = ComparedModels(
            bundles[roles.parser_free],
            bundles[roles.reference],
            bundles[roles.unbiased] if roles.unbiased else (),
            [bundles[r] for r in roles.extra],
        )
        options = CompareOptions(
            threads=compare_threads(config),
            latency_examples=config.run.latency_examples,
            max_examples=config.run.compare_max_examples,
            cache_dir=cache_dir or config.data.cache_dir,
            progress=progress,
        )
        report = compare(models, config.run.compare_datasets, out / "report", options)
        log(f"compare: done in {record.finish():.0f}s")
    log(f"{out.name}: done in {time.perf_counter() - start:.0f}s")
    return report


def stage_seconds(out: Path, tasks: list[str]) -> dict[str, float | None]:
    """Wall seconds of each stage's last build, from the stage records: the pre-training each task starts from
    (in the cache; shared tasks share it), then per task its runs (the first one includes preparing and
    parsing the task's data), bundles and report, and those of its other seeds (``<task>/seed-<s>/…``)."""
    seconds: dict[str, float | None] = {}
    for task in tasks:
        predictor = read_json(out / task / "predictor.json")
        if predictor and not predictor.get("shipped"):  # a shipped parser took no time here
            run_dir = Path(predictor["run_dir"])
            record = read_json(run_dir.parent / "stages" / f"{run_dir.name}.json") or {}
            seconds.setdefault(f"pretrain ({run_dir.parent.name}/{run_dir.name})", record.get("seconds"))
    folders = []
    for task in tasks:
        folders.append((f"{task}/", out / task / "stages"))
        folders += [(f"{task}/{seed.name}/", seed / "stages") for seed in sorted((out / task).glob("seed-*"))]
    seconds.update(
        {
            prefix + path.stem: json.loads(path.read_text(encoding="utf-8")).get("seconds")
            for prefix, folder in folders
            if folder.is_dir()
            for path in sorted(folder.glob("*.json"))
        }
    )
    return seconds


def run_main_job(
    tasks: dict[str, ExperimentConfig],
    out_dir: str | Path,
    cache_dir: str | None = None,
    progress: bool = True,
    seeds: int = 1,
) -> dict[str, Report]:
    """Run every task into ``out_dir/<task>`` (every recipe ``seeds`` times) and write ``index.md`` /
    ``index.json`` over their reports."""
    from ..reports.markdown import write_index

    out = Path(out_dir)
    start = time.perf_counter()
    reports = {}
    for name, config in tasks.items():
        log(f"task {name}")
        reports[name] = run_task(config, out / name, cache_dir, progress, seeds)
    write_index(reports, out, time.perf_counter() - start, stage_seconds(out, list(tasks)))
    log(f"done in {time.perf_counter() - start:.0f}s → {out / 'index.md'}")
    return reports
