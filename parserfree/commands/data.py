"""The ``parserfree data`` and ``parserfree parse`` commands: a dataset's summary, and its parse into the cache.

Registered on the main CLI by ``add_data_commands(subparsers)`` (parserfree/commands/cli.py), first, as the data
flow starts: the dataset options both commands share (``--dataset``, its format and columns, ``--task``,
``--cache-dir``, ``--archive``) read into a ``DataConfig``, and the Dask cluster options
(``add_cluster_args``, ``cluster``) that ``parse`` and the main job's ``run`` share. Thin argument parsing
over ``distill.data.datasets.describe`` and ``distill.parsing.parse_dataset``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from ..core.parse import DEFAULT_MODEL
from ..distill.data.archives import default_cache_dir
from ..distill.data.builtin import ARCHIVES, BUILTIN, builtin_table
from ..distill.data.datasets import SPLITS, TASKS, DataConfig, describe, load_dataset
from ..encoder.errors import UsageError


def _add_data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dataset",
        default="vader-movies",
        help=f"built-in name ({', '.join(BUILTIN)}), a file path, or a file per split: '{{train: a.csv, dev: b.csv, test: c.csv}}'",
    )
    p.add_argument(
        "--format", choices=["csv", "tsv", "jsonl", "txt", "conllu"], help="file format (default: from the extension)"
    )
    p.add_argument("--text-column", default="text")
    p.add_argument("--label-column", default="label")
    p.add_argument(
        "--split-column", help="the column whose values (train, dev, test) fix each row's split (default: by hash)"
    )
    p.add_argument(
        "--task",
        choices=TASKS,
        help="label view (default: the built-in dataset's task, else binary)",
    )
    p.add_argument("--cache-dir", help="cache folder (default: $PARSERFREE_CACHE or ~/.cache/parserfree)")
    p.add_argument(
        "--archive",
        help=f"local source archive(s), comma-separated ({', '.join(a.filename for a in ARCHIVES)}), for fully offline use",
    )


def _dataset_arg(value: str) -> str | dict[str, str]:
    """``--dataset``: a name or path, or (written as a YAML mapping, ``{train: a.csv, ...}``) a file per split."""
    if not value.lstrip().startswith("{"):
        return value
    try:
        files = yaml.safe_load(value)
    except yaml.YAMLError:
        files = None
    if not isinstance(files, dict):
        raise UsageError(
            f"--dataset {value!r}: a file per split is a YAML mapping, e.g. '{{train: a.csv, test: b.csv}}'"
        )
    return files


def _data_config(args: argparse.Namespace) -> DataConfig:
    dataset = _dataset_arg(args.dataset)
    return DataConfig(
        dataset=dataset,
        format=args.format,
        text_column=args.text_column,
        label_column=args.label_column,
        task=args.task or (BUILTIN[dataset].task if isinstance(dataset, str) and dataset in BUILTIN else "binary"),
        split_column=args.split_column,
        cache_dir=args.cache_dir,
        archive=args.archive,
    )


def _cache_dir(args: argparse.Namespace) -> Path:
    return Path(args.cache_dir) if args.cache_dir else default_cache_dir()


def cmd_data(args: argparse.Namespace) -> int:
    """Print counts, label balance and length percentiles of a dataset (``--list``: the built-in ones)."""
    if args.list:
        print(builtin_table(), end="")
        return 0
    report = describe(load_dataset(_data_config(args)))
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{report['dataset']}: {report['read']:,} examples read, {report['kept']:,} kept for task '{report['task']}'")
    for s in SPLITS:
        e = report["splits"][s]
        extra = ""
        if "labels" in e:
            extra = "  " + " ".join(f"{k}={v}" for k, v in e["labels"].items())
        elif "label_mean" in e:
            extra = f"  label mean={e['label_mean']:.3f} std={e['label_std']:.3f}"
        print(
            f"  {s:<5} {e['examples']:>7,}  words p50={e['length_p50']:.0f} p90={e['length_p90']:.0f} p99={e['length_p99']:.0f} max={e['length_max']}{extra}"
        )
    for column, title in (("attractors", "attractors"), ("distance", "subject-verb distance")):
        if column in report["splits"]["train"]:
            print(
                f"  by {title}: "
                + " · ".join(
                    f"{s} " + " ".join(f"{b}={report['splits'][s][column][b]:,}" for b in report["splits"][s][column])
                    for s in SPLITS
                )
            )
    if args.dataset in BUILTIN:
        print(f"Source: {BUILTIN[args.dataset].citation}")
    return 0


def add_cluster_args(p: argparse.ArgumentParser) -> None:
    """``--scheduler`` / ``--workers``: where a command's parsing and tagging run (``parse`` and ``run``)."""
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="parse and tag on a running Dask cluster, e.g. "
        "tcp://10.0.0.5:8786 (its workers need parserfree and the spaCy model installed)",
    )
    group.add_argument(
        "--workers", type=int, metavar="N", help="parse and tag on a Dask LocalCluster of N worker processes"
    )


def cluster(args: argparse.Namespace):
    """The Dask cluster the command's parsing and tagging run on (none: this process, with --n-process)."""
    from ..distill.cluster import ClusterConfig, use_cluster

    return use_cluster(ClusterConfig(args.scheduler, args.workers))


def cmd_parse(args: argparse.Namespace) -> int:
    """Parse a dataset with the spaCy teacher through the cache (resumable; on Dask with --scheduler/--workers).
    A built-in dataset made from tagged text (agreement, silver-trees) is tagged on the same cluster."""
    from ..distill.parsing import ParseConfig, parse_dataset

    cache = _cache_dir(args)
    model = args.spacy_model or (BUILTIN[args.dataset].spacy_model if args.dataset in BUILTIN else DEFAULT_MODEL)
    config = ParseConfig(model, args.batch_size, args.n_process)
    config.validate()
    with cluster(args):
        dataset = load_dataset(_data_config(args))
        splits, stats = parse_dataset(dataset, config, cache, progress=not args.quiet)
    where = stats.get("folder", "(gold trees, nothing to parse)")
    print(
        f"{stats['texts']:,} texts: {stats.get('reused', 0)} chunks reused, {stats.get('parsed', 0)} parsed → {where}"
    )
    words = sum(len(p.words) for s in splits.values() for p in s)
    roots = sum(int((p.heads == range(len(p.heads))).sum()) for s in splits.values() for p in s)
    print(f"{sum(len(s) for s in splits.values()):,} examples, {words:,} words, {roots:,} sentence roots")
    return 0


def add_data_commands(sub) -> None:
    """Register ``data`` and ``parse`` on the CLI's subparsers (each with ``set_defaults(func=...)``)."""
    p = sub.add_parser("data", help="summarise a dataset: counts, label balance, lengths")
    _add_data_args(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument(
        "--list", action="store_true", help="list the built-in datasets (the table in docs/data.md) and exit"
    )
    p.set_defaults(func=cmd_data)

    p = sub.add_parser("parse", help="parse a dataset with spaCy into the cache")
    _add_data_args(p)
    p.add_argument(
        "--spacy-model",
        help=f"spaCy model package (default: the built-in dataset's language's, e.g. "
        f"fr_core_news_sm for fr-reviews; else {DEFAULT_MODEL}; e.g. en_core_web_sm)",
    )
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--n-process", type=int, default=1, help="spaCy processes on this machine (without a Dask cluster)")
    add_cluster_args(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_parse)
