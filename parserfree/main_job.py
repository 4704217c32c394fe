"""The main job (``parserfree run``): for each task, data → parse → train the recipes → export → compare.

Strings the whole data flow together from one config per task (``run_task``) and writes an index page
over the tasks' reports (``run_main_job``). Each stage leaves a file that marks it finished (a run's
``metrics.json``, a bundle's ``manifest.json``, ``report/report.json``), so re-running the same command
skips what is done and resumes what is not (a training run resumes from its ``last.ckpt``).
Layout of a task's folder: ``pretrain/`` (optional), one run folder per recipe, ``bundle/`` (the
parser-free ONNX bundle), ``bundle_<recipe>/`` (the other recipes' graphs), ``report/``.

Which models are compared comes from the recipe table: every recipe with a predictor starts from the
pre-trained lower layers and predictor (when pre-training is on), so the like-for-like rows differ in
their distance source only; the parser-free bundle is compared with the parser-fed twin when it is
trained (else the published ``parser_fed``), the others are extra rows of the same report.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import time
from pathlib import Path

from parserfree.distill.config import ExperimentConfig, save_config
from parserfree.distill.recipes import comparison_roles
from parserfree.distill.datasets import DataConfig, load_dataset, normalise_text
from parserfree.encoder.files import write_text_atomic


def compare_threads(config: ExperimentConfig) -> int:
    """Intra-op threads of the comparison: the config's ``threads``, else one per core."""
    return config.threads or os.cpu_count() or 1


def _log(message: str) -> None:
    print(f"[parserfree run] {message}", flush=True)


def pretrain_key(config: ExperimentConfig) -> str:
    """A short digest of everything the pre-training stage depends on (its folder name)."""
    settings = config.to_dict()
    wanted = {k: settings[k] for k in ("seed", "parse", "vocab", "encoder", "predictor", "training")}
    wanted["run"] = {k: settings["run"][k] for k in ("pretrain_datasets", "pretrain_epochs")}
    wanted["split"] = settings["data"]["split"]
    return hashlib.sha256(json.dumps(wanted, sort_keys=True).encode()).hexdigest()[:10]


def pretrain_text(config: ExperimentConfig, path: Path) -> Path:
    """Train- and dev-split texts of the pre-training datasets, one per line (the predictor's unlabeled
    data). Test texts are left out; since splits go by a hash of the text, the pre-training run's own
    train/dev split is exactly the union of the datasets' train/dev splits."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for name in config.run.pretrain_datasets:
        data = DataConfig(dataset=name, task="none", cache_dir=config.data.cache_dir, archive=config.data.archive, split=config.data.split)
        splits = load_dataset(data).splits
        lines += [normalise_text(e.text) for e in splits["train"] + splits["dev"]]
    write_text_atomic(path, "\n".join(lines) + "\n")
    return path


def pretrain_stage(config: ExperimentConfig, root: Path, cache_dir: str | None, progress: bool) -> str | None:
    """Pre-train layers 1..k and the predictor on the configured text (when ``run.pretrain_epochs`` > 0)
    into ``root/pretrain-<key>``, shared by every task with the same settings; returns its checkpoint."""
    if not config.run.pretrain_datasets or config.run.pretrain_epochs <= 0:
        return None
    shared = root / f"pretrain-{pretrain_key(config)}"
    pre = copy.deepcopy(config)
    pre.recipe = "pretrain_predictor"
    pre.data = DataConfig(dataset=str(pretrain_text(config, shared / "pretrain_text.txt")), format="txt", task="none",
                          split=config.data.split, cache_dir=config.data.cache_dir)
    pre.training.max_epochs = config.run.pretrain_epochs
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


def train_stage(config: ExperimentConfig, run_dir: Path, cache_dir: str | None, progress: bool) -> dict:
    from parserfree.distill.train import train

    done = run_dir / "metrics.json"
    if done.exists():
        _log(f"{config.recipe}: finished earlier, skipping ({run_dir})")
        return json.loads(done.read_text())
    resume = (run_dir / "checkpoints" / "last.ckpt").exists()
    _log(f"{config.recipe}: training{' (resuming)' if resume else ''} → {run_dir}")
    return train(config, run_dir, resume=resume, cache_dir=cache_dir, progress=progress)


def _export_stage(checkpoint: Path, bundle: Path, full: bool = False) -> None:
    from parserfree.export.builder import export_bundle

    if (bundle / "manifest.json").exists():
        _log(f"export: {bundle} exists, skipping")
        return
    _log(f"export: {checkpoint} → {bundle}")
    export_bundle(checkpoint, bundle, optimize=full, quantize="int8" if full else None, overwrite=True)


def run_task(config: ExperimentConfig, out_dir: str | Path, cache_dir: str | None = None, progress: bool = True) -> dict:
    """Run (or resume) every stage of one task; returns its comparison report."""
    from parserfree.compare import compare

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_config(config, out / "config.yaml")
    start = time.perf_counter()
    pretrained = pretrain_stage(config, out.parent, cache_dir, progress)
    for recipe in config.run.recipes:
        train_stage(recipe_config(config, recipe, pretrained), out / recipe, cache_dir, progress)

    roles = comparison_roles(config.run.recipes)
    bundles = {}
    for recipe in config.run.recipes:
        main = recipe == roles.parser_free  # the product: with the optimised and int8 variants
        bundles[recipe] = out / ("bundle" if main else f"bundle_{recipe}")
        _export_stage(out / recipe / "checkpoints" / "best.ckpt", bundles[recipe], full=main)

    report_file = out / "report" / "report.json"
    if report_file.exists():
        _log("compare: report exists, skipping")
        report = json.loads(report_file.read_text())
    else:
        _log(f"compare on {', '.join(config.run.compare_datasets)} ({compare_threads(config)} threads)")
        report = compare(
            bundles[roles.parser_free], bundles[roles.reference], config.run.compare_datasets, out / "report",
            baseline=bundles.get(roles.baseline), extra={r: bundles[r] for r in roles.extra},
            threads=compare_threads(config), latency_examples=config.run.latency_examples, max_examples=config.run.compare_max_examples,
            cache_dir=cache_dir or config.data.cache_dir, progress=progress,
        )
    _log(f"{out.name}: done in {time.perf_counter() - start:.0f}s")
    return report


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
    write_index(reports, out, time.perf_counter() - start)
    _log(f"done in {time.perf_counter() - start:.0f}s → {out / 'index.md'}")
    return reports
