"""The main job (``parserfree run``): data → parse → train three recipes → export → compare → report.

Strings the whole data flow together from one config. Each stage leaves a file that marks it finished
(a run's ``metrics.json``, a bundle's ``manifest.json``, ``report/report.json``), so re-running the same
command skips what is done and resumes what is not (a training run resumes from its ``last.ckpt``).
Layout of the output folder: ``pretrain/`` (optional), ``no_syntax/``, ``parser_fed/``, ``parser_free/``
(run folders), ``bundle/`` (parser-free ONNX), ``bundle_parser_fed/``, ``report/``.
"""

from __future__ import annotations

import copy
import json
import os
import time
from pathlib import Path

from parserfree.distill.config import ExperimentConfig, save_config
from parserfree.distill.datasets import DataConfig, load_dataset, normalise_text
from parserfree.encoder.files import write_text_atomic


def compare_threads(config: ExperimentConfig) -> int:
    """Intra-op threads of the comparison: the config's ``threads``, else one per core."""
    return config.threads or os.cpu_count() or 1


def _log(message: str) -> None:
    print(f"[parserfree run] {message}", flush=True)


def pretrain_text(config: ExperimentConfig, path: Path) -> Path:
    """Train- and dev-split texts of the pre-training datasets, one per line (the predictor's unlabeled
    data). Test texts are left out; since splits go by a hash of the text, the pre-training run's own
    train/dev split is exactly the union of the datasets' train/dev splits."""
    if path.exists():
        return path
    lines = []
    for name in config.run.pretrain_datasets:
        data = DataConfig(dataset=name, task="none", cache_dir=config.data.cache_dir, archive=config.data.archive, split=config.data.split)
        splits = load_dataset(data).splits
        lines += [normalise_text(e.text) for e in splits["train"] + splits["dev"]]
    write_text_atomic(path, "\n".join(lines) + "\n")
    return path


def _train_stage(config: ExperimentConfig, run_dir: Path, cache_dir: str | None, progress: bool) -> dict:
    from parserfree.distill.train import train

    done = run_dir / "metrics.json"
    if done.exists():
        _log(f"{config.recipe}: finished earlier, skipping ({run_dir})")
        return json.loads(done.read_text())
    resume = (run_dir / "checkpoints" / "last.ckpt").exists()
    _log(f"{config.recipe}: training{' (resuming)' if resume else ''} → {run_dir}")
    return train(config, run_dir, resume=resume, cache_dir=cache_dir, progress=progress)


def _export_stage(checkpoint: Path, bundle: Path) -> None:
    from parserfree.export.builder import export_bundle

    if (bundle / "manifest.json").exists():
        _log(f"export: {bundle} exists, skipping")
        return
    _log(f"export: {checkpoint} → {bundle}")
    export_bundle(checkpoint, bundle, optimize=True, quantize="int8", overwrite=True)


def run_main_job(config: ExperimentConfig, out_dir: str | Path, cache_dir: str | None = None, progress: bool = True) -> dict:
    """Run (or resume) every stage; returns the comparison report."""
    from parserfree.compare import compare

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_config(config, out / "config.yaml")
    start = time.perf_counter()
    results = {}

    if config.run.pretrain_datasets and config.run.pretrain_epochs > 0:
        pre = copy.deepcopy(config)
        pre.recipe = "pretrain_predictor"
        pre.data = DataConfig(dataset=str(pretrain_text(config, out / "pretrain_text.txt")), format="txt", task="none",
                              split=config.data.split, cache_dir=config.data.cache_dir)
        pre.training.max_epochs = config.run.pretrain_epochs
        results["pretrain_predictor"] = _train_stage(pre, out / "pretrain", cache_dir, progress)

    for recipe in config.run.recipes:
        cfg = copy.deepcopy(config)
        cfg.recipe = recipe
        if recipe == "parser_free" and "pretrain_predictor" in results:
            cfg.training.init_from = str(out / "pretrain" / "checkpoints" / "best.ckpt")
        cfg.validate()
        results[recipe] = _train_stage(cfg, out / recipe, cache_dir, progress)

    _export_stage(out / "parser_free" / "checkpoints" / "best.ckpt", out / "bundle")
    fed = out / "parser_fed"
    if config.run.export_parser_fed:
        _export_stage(fed / "checkpoints" / "best.ckpt", out / "bundle_parser_fed")
        fed = out / "bundle_parser_fed"

    report_file = out / "report" / "report.json"
    if report_file.exists():
        _log("compare: report exists, skipping")
        report = json.loads(report_file.read_text())
    else:
        _log(f"compare on {', '.join(config.run.compare_datasets)} ({compare_threads(config)} threads)")
        report = compare(
            out / "bundle", fed, config.run.compare_datasets, out / "report",
            baseline=out / "no_syntax" if "no_syntax" in config.run.recipes else None,
            threads=compare_threads(config), latency_examples=config.run.latency_examples, max_examples=config.run.compare_max_examples,
            cache_dir=cache_dir or config.data.cache_dir, progress=progress,
        )
    _log(f"done in {time.perf_counter() - start:.0f}s")
    return report
