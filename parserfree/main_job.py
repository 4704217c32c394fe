"""The main job (``parserfree run``): for each task, data → parse → train the recipes → export → compare.

Strings the whole data flow together from one config per task (``run_task``) and writes an index page
over the tasks' reports (``run_main_job``). Each stage records what it was built from (``stages.py``:
its resolved settings and its inputs' digests), so re-running the same command skips what is done,
resumes what is not (a training run from its ``last.ckpt``) and rebuilds — saying what changed — every
stage whose settings or inputs changed, and every stage downstream of it.
Layout of a task's folder: ``pretrain/`` (optional), one run folder per recipe, ``bundle/`` (the
parser-free ONNX bundle), ``bundle_<recipe>/`` (the other recipes' graphs), ``report/``, ``stages/``.

Which models are compared comes from the recipe table: every recipe with a predictor starts from the
pre-trained lower layers and predictor (when pre-training is on), so the like-for-like rows differ in
their distance source only; the parser-free bundle is compared with the parser-fed twin when it is
trained (else the published ``parser_fed``), the others are extra rows of the same report.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path

from parserfree.distill.config import ExperimentConfig, save_config
from parserfree.distill.fingerprints import file_digest
from parserfree.distill.recipes import comparison_roles, training_rule
from parserfree.distill.datasets import DataConfig, load_dataset, normalise_text
from parserfree.encoder.files import write_text_atomic
from parserfree.stages import StageRecord, compare_fingerprint, export_fingerprint, training_fingerprint


def compare_threads(config: ExperimentConfig) -> int:
    """Intra-op threads of the comparison: the config's ``threads``, else one per core."""
    return config.threads or os.cpu_count() or 1


def _log(message: str) -> None:
    print(f"[parserfree run] {message}", flush=True)


def pretrain_key(pre: ExperimentConfig) -> str:
    """A short digest of what a pre-training config depends on (its folder name): every setting but the
    task's data, which pre-training replaces by the text of ``run.pretrain_datasets``."""
    settings = pre.to_dict()
    wanted = {k: v for k, v in settings.items() if k not in ("data", "run")}
    wanted["run"] = {k: settings["run"][k] for k in ("pretrain_datasets", "pretrain_epochs")}
    wanted["split"] = settings["data"]["split"]
    return hashlib.sha256(json.dumps(wanted, sort_keys=True).encode()).hexdigest()[:10]


def pretrain_text(config: ExperimentConfig, path: Path) -> Path:
    """Train- and dev-split texts of the pre-training datasets, one per line (the predictor's unlabeled
    data). Test texts are left out; since splits go by a hash of the text, the pre-training run's own
    train/dev split is exactly the union of the datasets' train/dev splits. Rewritten only when its content
    changes (the pre-training stage's fingerprint holds its digest)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for name in config.run.pretrain_datasets:
        data = DataConfig(dataset=name, task="none", cache_dir=config.data.cache_dir, archive=config.data.archive, split=config.data.split)
        splits = load_dataset(data).splits
        lines += [normalise_text(e.text) for e in splits["train"] + splits["dev"]]
    text = "\n".join(lines) + "\n"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        write_text_atomic(path, text)
    return path


def pretrain_stage(config: ExperimentConfig, root: Path, cache_dir: str | None, progress: bool) -> str | None:
    """Pre-train layers 1..k and the predictor on the configured text (when ``run.pretrain_epochs`` > 0)
    into ``root/pretrain-<key>``, shared by every task with the same settings; returns its checkpoint.
    A single pre-training dataset is used as it is — e.g. ``silver-trees``, whose trees need no parsing;
    several are joined into one text file of their train and dev texts (``pretrain_text``), then parsed."""
    if not config.run.pretrain_datasets or config.run.pretrain_epochs <= 0:
        return None
    pre = copy.deepcopy(config)
    pre.recipe = "pretrain_predictor"
    pre.training.max_epochs = config.run.pretrain_epochs
    shared = root / f"pretrain-{pretrain_key(pre)}"
    if len(config.run.pretrain_datasets) == 1:  # one dataset is used as it is: its own splits (and trees, if it has them)
        pre.data = DataConfig(dataset=config.run.pretrain_datasets[0], task="none", split=config.data.split,
                              cache_dir=config.data.cache_dir, archive=config.data.archive)
    else:
        text = pretrain_text(config, root / f"{shared.name}.txt")  # beside the run folder, which a rebuild empties
        pre.data = DataConfig(dataset=str(text), format="txt", task="none",
                              split=config.data.split, cache_dir=config.data.cache_dir)
    train_stage(pre, shared, cache_dir, progress)
    return str(shared / "checkpoints" / "best.ckpt")


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


def train_recipes(config: ExperimentConfig, recipes: list[str], pretrained: str | None, out: Path,
                  cache_dir: str | None, progress: bool) -> dict[str, dict]:
    """Train each recipe into ``out/<recipe>`` — once per training rule: a recipe that would train exactly
    as one already trained (``parser_free`` with ``teacher_forcing_end`` = 1 and its twin) is served from
    that run instead (``serve_stage``). Returns each recipe's metrics."""
    results, trained = {}, {}  # trained: training rule → the recipe trained with it
    for recipe in recipes:
        cfg = recipe_config(config, recipe, pretrained)
        rule = training_rule(cfg.recipe_row, cfg.training.teacher_forcing_end)
        if rule in trained:
            results[recipe] = serve_stage(cfg, out / trained[rule], out / recipe, cache_dir, progress)
        else:
            results[recipe] = train_stage(cfg, out / recipe, cache_dir, progress)
            trained[rule] = recipe
    return results


def serve_stage(config: ExperimentConfig, source_run: Path, run_dir: Path, cache_dir: str | None, progress: bool) -> dict:
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
    _log(f"{config.recipe}: trains exactly as {source_run.name} → its weights, served with its own distances ({run_dir})")
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

    variants = {"optimize": full, "quantize": "int8" if full else None}
    record = StageRecord(bundle, export_fingerprint(config, checkpoint, variants))
    action, why = record.plan(intact=_bundle_intact(bundle))
    if action == "skip":
        _log(f"export: {bundle} exists, skipping")
        return
    _log(f"export: {why} — exporting again" if why else f"export: {checkpoint} → {bundle}")
    record.start(fresh=True)
    export_bundle(checkpoint, bundle, optimize=variants["optimize"], quantize=variants["quantize"], overwrite=True)
    _log(f"export: {bundle.name} in {record.finish():.0f}s")


def run_task(config: ExperimentConfig, out_dir: str | Path, cache_dir: str | None = None, progress: bool = True) -> dict:
    """Run (or resume) every stage of one task; returns its comparison report."""
    from parserfree.compare import compare

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_config(config, out / "config.yaml")
    start = time.perf_counter()
    pretrained = pretrain_stage(config, out.parent, cache_dir, progress)
    train_recipes(config, config.run.recipes, pretrained, out, cache_dir, progress)

    roles = comparison_roles(config.run.recipes)
    bundles = {}
    for recipe in config.run.recipes:
        main = recipe == roles.parser_free  # the product: with the optimised and int8 variants
        bundles[recipe] = out / ("bundle" if main else f"bundle_{recipe}")
        _export_stage(config, out / recipe / "checkpoints" / "best.ckpt", bundles[recipe], full=main)

    settings = {"datasets": config.run.compare_datasets, "max_examples": config.run.compare_max_examples,
                "latency_examples": config.run.latency_examples, "threads": compare_threads(config), "roles": str(roles)}
    compared = [dataclasses.replace(config.data, dataset=d) for d in config.run.compare_datasets]
    record = StageRecord(out / "report", compare_fingerprint(settings, bundles, compared))
    report = _read_json(out / "report" / "report.json")
    action, why = record.plan(intact=report is not None)
    if action == "skip":
        _log("compare: report exists, skipping")
    else:
        if why:
            _log(f"compare: {why} — comparing again")
        _log(f"compare on {', '.join(config.run.compare_datasets)} ({compare_threads(config)} threads)")
        record.start(fresh=True)
        report = compare(
            bundles[roles.parser_free], bundles[roles.reference], config.run.compare_datasets, out / "report",
            baseline=bundles.get(roles.baseline), extra={r: bundles[r] for r in roles.extra},
            threads=compare_threads(config), latency_examples=config.run.latency_examples, max_examples=config.run.compare_max_examples,
            cache_dir=cache_dir or config.data.cache_dir, progress=progress,
        )
        _log(f"compare: done in {record.finish():.0f}s")
    _log(f"{out.name}: done in {time.perf_counter() - start:.0f}s")
    return report


def stage_seconds(out: Path, tasks: list[str]) -> dict[str, float | None]:
    """Wall seconds of each stage's last build, from the stage records: the shared pre-training, then per
    task its runs (the first one includes preparing and parsing the task's data), bundles and report."""
    folders = [("", out / "stages"), *((f"{task}/", out / task / "stages") for task in tasks)]
    return {prefix + path.stem: json.loads(path.read_text(encoding="utf-8")).get("seconds")
            for prefix, folder in folders if folder.is_dir() for path in sorted(folder.glob("*.json"))}


def run_main_job(tasks: dict[str, ExperimentConfig], out_dir: str | Path, cache_dir: str | None = None,
                 progress: bool = True) -> dict[str, dict]:
    """Run every task into ``out_dir/<task>`` and write ``index.md`` / ``index.json`` over their reports."""
    from parserfree.report import write_index

    out = Path(out_dir)
    start = time.perf_counter()
    reports = {}
    for name, config in tasks.items():
        _log(f"task {name}")
        reports[name] = run_task(config, out / name, cache_dir, progress)
    write_index(reports, out, time.perf_counter() - start, stage_seconds(out, list(tasks)))
    _log(f"done in {time.perf_counter() - start:.0f}s → {out / 'index.md'}")
    return reports
