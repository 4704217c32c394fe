"""``parserfree ship``: train (or find) a pre-training of a config and ship it as ``builtin:<name>``.

The shipped artefact and its record are ``distill/shipped.py``'s; this command strings the steps: the
pre-training of the config's ``run.pretrain_*`` settings (trained into the cache, or the finished one of
exactly these settings reused) — or, with ``--run DIR``, the config's own masked-LM training
(``data.task: masked_lm``, docs/language_model.md) trained, resumed or reused in ``DIR`` per its stage
record — its dev and test scores from the run, optionally the scores of ``python -m bench.parser`` by
spaCy's scorer (``--scores``: its record, e.g. ``docs/bench/parser-en.json``), then the float16 copy and
the record in ``models/<name>/``, refused when the shipped record is better.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..distill.config import ExperimentConfig
    from ..distill.data.datasets import DataConfig

SCORE_KEYS = ("uuas", "uas", "las", "dspr", "perplexity", "accuracy")


def run_scores(metrics: dict) -> dict:
    """The dev and test scores of a finished pre-training's ``metrics.json``: a parser's tree scores (in %),
    a masked-LM encoder's perplexity and accuracy (in %)."""
    return {
        split: {k: metrics[split][k] for k in SCORE_KEYS if isinstance(metrics.get(split, {}).get(k), int | float)}
        for split in ("dev", "test")
        if isinstance(metrics.get(split), dict)
    }


def bench_scores(path: str) -> dict:
    """The overall scores (spaCy's scorer on the held-out sentences) and speed of a ``python -m bench.parser``
    result of the shipped checkpoint: its record (``docs/bench/*.json``: the result is its payload) or a
    result file as the bench wrote it before records."""
    result = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(result.get("payload"), dict) and "command" in result:
        result = result["payload"]
    overall = result["accuracy"]["predictor"]["all"]
    speed = result["speed"]
    return {
        "file": path,
        "dataset": f"{result.get('dataset')} {result.get('split')}",
        **{k: overall[k] for k in ("sentences", "words", "uuas", "uas", "las") if k in overall},
        "words_per_s": speed["systems"]["predictor"]["words_per_s"],
        "spacy_words_per_s": speed["spacy"]["words_per_s"],
        "times_spacy": speed["systems"]["predictor"]["times_spacy"],
        "threads": speed["threads"],
        "machine": result.get("machine", {}).get("machine_type"),
    }


def encoder_pretraining(
    config: ExperimentConfig, run_dir: Path, args: argparse.Namespace
) -> tuple[Path, dict, DataConfig]:
    """The config's masked-LM training in ``run_dir`` — trained, resumed, or reused when its stage record
    matches (``stages.train_stage``): (best checkpoint, metrics, data settings)."""
    from ..distill.config import ConfigError
    from ..encoder.masked_words import MASKED_LM
    from .stages import train_stage

    if config.data.task != MASKED_LM:
        raise ConfigError(
            f"{args.config}: --run ships a masked-LM encoder (data.task: {MASKED_LM}, e.g. "
            f"configs/main/language_model.yaml), not data.task={config.data.task!r}"
        )
    metrics = train_stage(config, run_dir, args.cache_dir, not args.quiet)
    return run_dir / "checkpoints" / "best.ckpt", metrics, config.data


def cmd_ship(args: argparse.Namespace) -> int:
    """Ship the pre-training of ``--config`` as ``builtin:<name>``."""
    from ..distill.config import ConfigError, load_config
    from ..distill.fingerprints import data_digest
    from ..distill.shipped import ship, write_readme
    from ..reports.records import RecordError, current_commit
    from .stages import pretrain_config, pretrain_stage

    config = load_config(args.config, args.set or [], args.size)
    if args.run:
        checkpoint, metrics, data_config = encoder_pretraining(config, Path(args.run), args)
    else:
        predictor = pretrain_stage(config, args.cache_dir, not args.quiet, mode="train")
        if predictor is None:
            raise ConfigError(f"{args.config}: run.pretrain_datasets and run.pretrain_epochs > 0 say what to pre-train")
        checkpoint, metrics, data_config = (
            Path(predictor["checkpoint"]),
            predictor["metrics"] or {},
            pretrain_config(config).data,
        )
    size = ["--size", args.size] if args.size != "small" else []
    options = ["--config", args.config, *size, *(["--run", args.run] if args.run else []), "--name", args.name]
    command = "parserfree ship " + " ".join(shlex.quote(a) for a in [*options, *(f"--set={s}" for s in args.set or [])])
    extra = {
        "n_train": metrics.get("n_train"),
        "steps": metrics.get("steps"),
        "config": args.config,
        "settings": args.set or [],
        "size": args.size,
    }
    if args.scores:
        extra["spacy_scorer"] = bench_scores(args.scores)
    root = Path(args.models_dir)
    try:
        commit = current_commit(root)  # "-dirty" when tracked files differ from it
    except RecordError:
        commit = None  # not a git checkout
    record = ship(
        checkpoint,
        args.name,
        command,
        run_scores(metrics),
        data_digest(data_config),
        extra,
        root,
        args.force,
        commit,
        args.cache_dir or config.data.cache_dir,
    )
    write_readme(root)
    print(
        f"shipped {record['name']}: {root / args.name} ({record['bytes'] / 2**20:.1f} MB, sha256 {record['sha256'][:12]}…)"
    )
    print(f"test: {record['scores'].get('test')}")
    return 0


def add_ship_command(sub) -> argparse.ArgumentParser:
    """The ``ship`` subcommand (its parser: the caller adds ``--size``)."""
    p = sub.add_parser(
        "ship", help="pre-train a config's predictor or masked-LM encoder (or reuse it) and ship it as builtin:<name>"
    )
    p.add_argument("--config", required=True, help="a task's YAML config; its run.pretrain_* and model settings")
    p.add_argument(
        "--run",
        metavar="DIR",
        help="ship the config's own masked-LM training (data.task: masked_lm), trained, resumed or reused in DIR",
    )
    p.add_argument("--name", required=True, help="the shipped name, e.g. parser-en (builtin:parser-en)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a setting (repeatable)")
    p.add_argument(
        "--scores",
        help="a `python -m bench.parser` record of the same checkpoint (e.g. docs/bench/parser-en.json), kept in the record",
    )
    p.add_argument("--models-dir", default="models", help="where the shipped models live (default: models)")
    p.add_argument("--force", action="store_true", help="replace the shipped model even if its record is better")
    p.add_argument("--cache-dir", help="cache folder for data, parses and pre-trainings")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_ship)
    return p
