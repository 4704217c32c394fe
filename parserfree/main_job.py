"""The main job (``parserfree run``): for each task, data → parse → train the recipes → export → compare.

Strings the whole data flow together from one config per task (``run_task``) and writes an index page
over the tasks' reports (``run_main_job``). Each stage records what it was built from (``stages.py``:
its resolved settings and its inputs' digests), so re-running the same command skips what is done,
resumes what is not (a training run from its ``last.ckpt``) and rebuilds — saying what changed — every
stage whose settings or inputs changed, and every stage downstream of it.
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

import yaml

from parserfree.distill.archives import default_cache_dir
from parserfree.distill.config import ExperimentConfig, save_config
from parserfree.distill.datasets import DataConfig
from parserfree.distill.fingerprints import digest, file_digest, without
from parserfree.distill.recipes import comparison_roles, training_rule
from parserfree.distill.shipped import SCHEME, is_shipped, read_record, shipped_checkpoint
from parserfree.encoder.errors import UsageError
from parserfree.encoder.files import write_json
from parserfree.report_types import REPORT_FORMAT, Report
from parserfree.stages import StageRecord, compare_fingerprint, export_fingerprint, training_fingerprint


def compare_threads(config: ExperimentConfig) -> int:
    """Intra-op threads of the comparison: the config's ``threads``, else one per core."""
    return config.threads or os.cpu_count() or 1


def _log(message: str) -> None:
    print(f"[parserfree run] {message}", flush=True)


PREDICTORS = "predictors"  # the cache's folder of pre-trained predictors: <family>/<settings>/


def pretrain_config(config: ExperimentConfig) -> ExperimentConfig:
    """The pre-training run of a task's config: recipe ``pretrain_predictor`` on the text of
    ``run.pretrain_datasets`` for ``run.pretrain_epochs`` epochs, with the task's encoder, predictor and
    vocabulary settings. Several datasets are joined as one (each keeps its own split, so nothing a dataset
    holds out is pre-trained on); one with trees (``silver-trees``) is used as it is, parsing nothing. With a
    parser tower only the tower (its own embeddings and layers) and the scorers learn, so the encoder is set to
    one minimal unused layer: tasks whose encoders differ share the pre-training (its family)."""
    pre = copy.deepcopy(config)
    pre.recipe = "pretrain_predictor"
    pre.training.max_epochs = config.run.pretrain_epochs
    pre.training.init_from = None  # pre-training starts from scratch
    names = list(config.run.pretrain_datasets)
    pre.data = DataConfig(
        dataset=names[0] if len(names) == 1 else names,
        task="none",
        split=config.data.split,
        text_column=config.data.text_column,
        cache_dir=config.data.cache_dir,
        archive=config.data.archive,
        train_fraction=config.run.pretrain_fraction,
        train_sample_seed=config.seed,
        builtin_corpora=config.data.builtin_corpora,
    )
    if (
        pre.predictor.tower_layers > 0
    ):  # a tower pre-trains the embeddings and itself only: the encoder's layers are not part of it
        shape = pre.predictor.tower_shape(pre.encoder)
        pre.predictor = dataclasses.replace(
            pre.predictor, tower_d_model=shape.d_model, tower_heads=shape.n_heads, tower_d_ff=shape.d_ff
        )
        pre.encoder = dataclasses.replace(
            pre.encoder,
            d_model=8,
            n_layers=1,
            n_heads=1,
            d_ff=1,
            bias_all_layers=False,
            bias=dataclasses.replace(pre.encoder.bias, mode="none"),
        )
    pre.validate()
    return pre


def pretrain_keys(pre: ExperimentConfig) -> tuple[str, str]:
    """(family, settings) digests of a pre-training: the family is what the predictor is — its settings but
    the training schedule, and the digests of its text — so a longer training of the same predictor is of
    the same family; the second digest adds the schedule."""
    fingerprint = training_fingerprint(pre)
    family = {**fingerprint, "settings": without(fingerprint["settings"], ("training",))}
    return digest(family)[:12], digest(fingerprint)[:12]


def cached_predictors(pre: ExperimentConfig, cache: Path) -> list[dict]:
    """Finished pre-trainings of ``pre``'s family in the cache that read at least as many sentences as ``pre``
    would (a shorter one is never preferred to training its own), best dev UUAS first: folder and metrics."""
    family, _ = pretrain_keys(pre)
    found = []
    for run_dir in sorted((cache / PREDICTORS / family).glob("*")):
        metrics = _read_json(run_dir / "metrics.json")
        record = _read_json(run_dir.parent / "stages" / f"{run_dir.name}.json")
        if metrics and record and record.get("finished") and (run_dir / "checkpoints" / "best.ckpt").is_file():
            if sentences_read(metrics, run_dir) >= 0.99 * budget_sentences(pre, metrics, run_dir):
                found.append({"run_dir": str(run_dir), "metrics": metrics})
    return sorted(found, key=lambda f: -(f["metrics"].get("dev", {}).get("uuas") or 0.0))


def _settings(run_dir: Path) -> dict:
    try:
        return yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}


def sentences_read(metrics: dict, run_dir: Path) -> float:
    """Training sentences a finished pre-training read: its steps × its batch size."""
    return float(metrics.get("steps", 0)) * float(_settings(run_dir).get("training", {}).get("batch_size", 0))


def budget_sentences(pre: ExperimentConfig, metrics: dict, run_dir: Path) -> float:
    """Training sentences ``pre`` would read: its epochs × its share of the text's training split (the split's
    size from a cached run of the same text: its sentences over its own share) × its batch limit."""
    settings = _settings(run_dir)
    their_fraction = float(settings.get("data", {}).get("train_fraction", 1.0)) or 1.0
    full = float(metrics.get("n_train", 0)) / their_fraction
    limit = pre.training.limit_train_batches if pre.training.limit_train_batches <= 1 else 1.0
    budget = pre.training.max_epochs * pre.data.train_fraction * limit * full
    if pre.training.max_steps > 0:
        budget = min(budget, pre.training.max_steps * pre.training.batch_size)
    return budget


def pretrain_stage(
    config: ExperimentConfig, cache_dir: str | None, progress: bool, mode: str | None = None
) -> dict | None:
    """The pre-trained lower layers and predictor a task starts from (when ``run.pretrain_epochs`` > 0):
    with ``run.pretrained: auto`` the best finished one of its family in the cache (``parserfree pretrain``
    writes them there, whatever the output folder), else the one of its own settings, trained (or resumed)
    into ``<cache>/predictors/<family>/<settings>``; ``train`` always the latter; a path that checkpoint.
    Returns {"checkpoint", "run_dir", "metrics", "chosen"} (and "shipped": the name, for a shipped model)
    or None without pre-training."""
    mode = mode or config.run.pretrained
    if is_shipped(mode):  # a shipped model: nothing to pre-train
        name = mode.removeprefix(SCHEME)
        path = shipped_checkpoint(name)
        return {
            "checkpoint": str(path),
            "run_dir": str(path.parent),
            "metrics": read_record(name).get("scores"),
            "chosen": f"shipped ({mode})",
            "shipped": mode,
        }
    if not config.run.pretrain_datasets or config.run.pretrain_epochs <= 0:
        return None
    if mode not in ("auto", "train"):
        path = Path(mode)
        if not path.is_file():
            raise FileNotFoundError(f"run.pretrained={mode}: no such checkpoint")
        return {
            "checkpoint": str(path),
            "run_dir": str(path.parent.parent),
            "metrics": _read_json(path.parent.parent / "metrics.json"),
            "chosen": "given by run.pretrained",
        }
    pre = pretrain_config(config)
    cache = Path(cache_dir or config.data.cache_dir or default_cache_dir())
    if mode == "auto":
        found = cached_predictors(pre, cache)
        if found:
            best = found[0]
            _log(
                f"pretrain: using the cached predictor {best['run_dir']} (dev UUAS {best['metrics']['dev'].get('uuas', 0):.1f}, "
                f"the best of {len(found)} of these settings)"
            )
            return {
                "checkpoint": str(Path(best["run_dir"]) / "checkpoints" / "best.ckpt"),
                **best,
                "chosen": "best cached",
            }
    family, settings = pretrain_keys(pre)
    run_dir = cache / PREDICTORS / family / settings
    metrics = train_stage(pre, run_dir, cache_dir, progress)
    return {
        "checkpoint": str(run_dir / "checkpoints" / "best.ckpt"),
        "run_dir": str(run_dir),
        "metrics": metrics,
        "chosen": "trained for these settings",
    }


def cached_init(config: ExperimentConfig, cache_dir: str | None) -> ExperimentConfig:
    """``training.init_from: cached`` replaced by the best cached pre-training of the config's family (see
    ``pretrain_stage``); a one-line error when there is none yet."""
    if config.training.init_from != "cached":
        return config
    cache = Path(cache_dir or config.data.cache_dir or default_cache_dir())
    found = cached_predictors(pretrain_config(config), cache) if config.run.pretrain_datasets else []
    if not found:
        raise FileNotFoundError(
            "training.init_from=cached: no pre-trained predictor of these settings in the cache "
            f"({cache / PREDICTORS}); run `parserfree pretrain` with this config first"
        )
    out = copy.deepcopy(config)
    out.training.init_from = str(Path(found[0]["run_dir"]) / "checkpoints" / "best.ckpt")
    return out


def recipe_config(config: ExperimentConfig, recipe: str, pretrained: str | None) -> ExperimentConfig:
    """The task's config for one recipe: the like-for-like rows (those with a predictor) all start from
    the pre-training when there is one."""
    cfg = copy.deepcopy(config)
    cfg.recipe = recipe
    if pretrained and cfg.recipe_row.predictor:
        cfg.training.init_from = pretrained
    cfg.validate()
    return cfg


def _read_json(path: Path) -> dict | None:
    """A stage's JSON output, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _plan_run(record: StageRecord, run_dir: Path, recipe: str, redo: str) -> tuple[str, dict | None]:
    """The plan of a run stage (``StageRecord.plan``) and, when it is skipped, the run's metrics; says why
    an existing run is redone."""
    metrics = _read_json(run_dir / "metrics.json")
    action, why = record.plan(intact=metrics is not None)
    if action == "skip":
        _log(f"{recipe}: finished earlier, skipping ({run_dir})")
    elif why:
        _log(f"{recipe}: {why} — {redo}")
    return action, metrics


def train_stage(config: ExperimentConfig, run_dir: Path, cache_dir: str | None, progress: bool) -> dict:
    """Train one recipe into ``run_dir``, or skip / resume it per its stage record."""
    from parserfree.distill.checkpoints import CheckpointError
    from parserfree.distill.train import train

    record = StageRecord(run_dir, training_fingerprint(config))
    action, metrics = _plan_run(record, run_dir, config.recipe, "training again from the start")
    if action == "skip":
        return metrics
    record.start(fresh=action == "build")
    last = run_dir / "checkpoints" / "last.ckpt"
    resume = action == "resume" and last.exists()
    _log(f"{config.recipe}: training{' (resuming)' if resume else ''} → {run_dir}")
    try:
        result = train(config, run_dir, resume=resume, cache_dir=cache_dir, progress=progress)
    except CheckpointError as e:
        if resume and str(e).startswith(str(last)):
            raise CheckpointError(f"{e} — delete it to train {config.recipe} from the start") from None
        raise
    _log(f"{config.recipe}: trained in {record.finish():.0f}s")
    return result


def train_recipes(
    config: ExperimentConfig,
    recipes: list[str],
    pretrained: str | None,
    out: Path,
    cache_dir: str | None,
    progress: bool,
) -> dict[str, dict]:
    """Train each recipe into ``out/<recipe>`` — once per training rule: a recipe that would train exactly
    as one already trained (``parser_free`` with ``teacher_forcing_end`` = 1 and its twin) is served from
    that run instead (``serve_stage``). Returns each recipe's metrics."""
    results: dict[str, dict] = {}
    trained: dict[tuple, str] = {}  # training rule → the recipe trained with it
    for recipe in recipes:
        cfg = recipe_config(config, recipe, pretrained)
        rule = training_rule(cfg.recipe_row, cfg.training.teacher_forcing_end)
        if rule in trained:
            results[recipe] = serve_stage(cfg, out / trained[rule], out / recipe, cache_dir, progress)
        else:
            results[recipe] = train_stage(cfg, out / recipe, cache_dir, progress)
            trained[rule] = recipe
    return results


def serve_stage(
    config: ExperimentConfig, source_run: Path, run_dir: Path, cache_dir: str | None, progress: bool
) -> dict:
    """A recipe whose training is exactly that of a recipe already trained (``recipes.training_rule``): the
    source run's weights served with this recipe's distances (``distill.train.serve_trained``), or skip."""
    from parserfree.distill.train import serve_trained

    fingerprint = training_fingerprint(config)
    fingerprint["inputs"]["trained_as"] = file_digest(source_run / "checkpoints" / "best.ckpt")
    record = StageRecord(run_dir, fingerprint)
    action, metrics = _plan_run(record, run_dir, config.recipe, "again")
    if action == "skip":
        return metrics
    record.start(fresh=True)
    _log(
        f"{config.recipe}: trains exactly as {source_run.name} → its weights, served with its own distances ({run_dir})"
    )
    result = serve_trained(config, source_run, run_dir, cache_dir, progress)
    _log(f"{config.recipe}: scored in {record.finish():.0f}s")
    return result


def _bundle_intact(bundle: Path) -> bool:
    from parserfree.export.bundle import verify_bundle
    from parserfree.export.errors import BundleError

    try:
        verify_bundle(bundle)
        return True
    except BundleError:
        return False


def _export_stage(config: ExperimentConfig, checkpoint: Path, bundle: Path, full: bool = False) -> None:
    """Export ``checkpoint`` to ``bundle`` (with the optimised and int8 variants when ``full``), unless the
    bundle on disk is intact and was built from the same checkpoint and settings."""
    from parserfree.export.builder import export_bundle

    optimize, quantize = full, "int8" if full else None
    variants = {"optimize": optimize, "quantize": quantize}
    record = StageRecord(bundle, export_fingerprint(config, checkpoint, variants))
    action, why = record.plan(intact=_bundle_intact(bundle))
    if action == "skip":
        _log(f"export: {bundle} exists, skipping")
        return
    _log(f"export: {why} — exporting again" if why else f"export: {checkpoint} → {bundle}")
    record.start(fresh=True)
    export_bundle(checkpoint, bundle, optimize=optimize, quantize=quantize, overwrite=True)
    _log(f"export: {bundle.name} in {record.finish():.0f}s")


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
    from parserfree.compare import ComparedModels, CompareOptions, compare

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
            _log(f"seed {seed + 1} of {seeds} (seed {config.seed + seed}) → {folder}")
        train_recipes(seed_config(config, seed), config.run.recipes, pretrained, folder, cache_dir, progress)
        for recipe in config.run.recipes:
            main = recipe == roles.parser_free
            bundle = folder / (
                "bundle" if main else f"bundle_{recipe}"
            )  # seed 0's product: with the optimised and int8 variants
            _export_stage(config, folder / recipe / "checkpoints" / "best.ckpt", bundle, full=main and seed == 0)
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
    saved = _read_json(out / "report" / "report.json")
    action, why = record.plan(intact=saved is not None and saved.get("format") == REPORT_FORMAT)
    if action == "skip":
        _log("compare: report exists, skipping")
        report = Report.from_dict(saved)
    else:
        if why:
            _log(f"compare: {why} — comparing again")
        _log(f"compare on {', '.join(config.run.compare_datasets)} ({compare_threads(config)} threads)")
        record.start(fresh=True)
        models = ComparedModels(
            bundles[roles.parser_free],
            bundles[roles.reference],
            bundles[roles.baseline] if roles.baseline else (),
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
        _log(f"compare: done in {record.finish():.0f}s")
    _log(f"{out.name}: done in {time.perf_counter() - start:.0f}s")
    return report


def stage_seconds(out: Path, tasks: list[str]) -> dict[str, float | None]:
    """Wall seconds of each stage's last build, from the stage records: the pre-training each task starts from
    (in the cache; shared tasks share it), then per task its runs (the first one includes preparing and
    parsing the task's data), bundles and report, and those of its other seeds (``<task>/seed-<s>/…``)."""
    seconds: dict[str, float | None] = {}
    for task in tasks:
        predictor = _read_json(out / task / "predictor.json")
        if predictor and not predictor.get("shipped"):  # a shipped parser took no time here
            run_dir = Path(predictor["run_dir"])
            record = _read_json(run_dir.parent / "stages" / f"{run_dir.name}.json") or {}
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
    from parserfree.report import write_index

    out = Path(out_dir)
    start = time.perf_counter()
    reports = {}
    for name, config in tasks.items():
        _log(f"task {name}")
        reports[name] = run_task(config, out / name, cache_dir, progress, seeds)
    write_index(reports, out, time.perf_counter() - start, stage_seconds(out, list(tasks)))
    _log(f"done in {time.perf_counter() - start:.0f}s → {out / 'index.md'}")
    return reports
