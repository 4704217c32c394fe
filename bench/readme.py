"""Render bench/README.md's tables from the committed records in docs/bench/ (``--check``: change nothing, exit 1 if it differs).

bench/README.md is hand-written prose with generated regions, as the project README's results are:
between ``<!-- results: bench NAME -->`` and ``<!-- /results -->`` stands, for each machine type, the table
of the record ``docs/bench/NAME-<machine type>.json`` as the script that wrote it draws it (its
``tables``), under the record's command, date and commit — or, where there is no such record yet, "not
measured on this machine type yet" and the command that writes it. ``TABLES`` says which script draws
NAME and which command records it; a table of ``per_machine=False`` is one record of that very name (the
shipped parser's scores, ``docs/bench/parser-en.json``). The regions, the record files and their source
lines are the results pages' (``parserfree.reports.results_page``, ``parserfree.reports.records``): only the
renderers are the benchmarks'.

    python -m bench.readme [--check]
"""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

from parserfree.encoder.errors import ParserfreeError
from parserfree.encoder.files import write_text_atomic
from parserfree.reports.records import RecordError, load_records
from parserfree.reports.results_page import Context, render_regions

from bench.lib.common import MACHINE_TYPES, RECORDS, REPO, machine_slug

README = Path("bench") / "README.md"


@dataclass(frozen=True)
class Table:
    """A table of bench/README.md: the script that wrote its records (and draws them) and the command that
    records it (run from the repository root, on an idle machine of the type it is kept for)."""

    script: str
    command: str
    per_machine: bool = True  # records NAME-<machine type>; else the one record NAME


MAIN = "runs/main/sentiment"  # `parserfree run` writes the bundles the speed tables time
TABLES = {
    "inference": Table("inference", "python -m bench.inference --record"),
    "compare_graphs-no-syntax-b32": Table(
        "compare_graphs",
        f"python -m bench.compare_graphs {MAIN}/bundle {MAIN}/bundle_no_syntax {MAIN}/bundle:int8 {MAIN}/bundle:tree "
        "--passes 30 --tag no-syntax-b32 --record",
    ),
    **{
        f"compare_graphs-one-pass-b{batch}": Table(
            "compare_graphs",
            f"python -m bench.compare_graphs runs/onepass/bundles/sentiment-true runs/onepass/bundles/sentiment-false "
            f"--batch {batch} --tag one-pass-b{batch} --record",
        )
        for batch in (32, 1)
    },
    "compare_graphs-no-syntax-b1": Table(
        "compare_graphs",
        f"python -m bench.compare_graphs {MAIN}/bundle {MAIN}/bundle_no_syntax --batch 1 --threads 1 --passes 20 "
        "--tag no-syntax-b1 --record",
    ),
    "task_distances": Table("task_distances", f"python -m bench.task_distances {MAIN}/bundle --passes 30 --record"),
    "profile_graph": Table("profile_graph", "python -m bench.profile_graph --record"),
    "predictor_cost": Table("predictor_cost", "python -m bench.predictor_cost --widths 64 128 256 512 --record"),
    "pareto": Table("pareto", "python -m bench.pareto --record"),
    "sizes": Table("sizes", "python -m bench.sizes --record"),
    "train": Table("train", "python -m bench.train --record"),
    "trees": Table("trees", "python -m bench.trees --record"),
    "tree_ops": Table("tree_ops", "python -m bench.tree_ops --record"),
    "spacy_component": Table("spacy_component", "python -m bench.spacy_component --record"),
    "serve": Table("serve", "python -m bench.serve --serving-venv /tmp/parserfree-serving --record"),
    "parser-en": Table(
        "parser",
        "python -m bench.parser --checkpoint models/parser-en/model.ckpt --threads 1 --record-as parser-en",
        per_machine=False,
    ),
    "parser-tower-en": Table(
        "parser",
        "python -m bench.parser --checkpoint models/parser-tower-en/model.ckpt --threads 1 --record-as parser-tower-en",
        per_machine=False,
    ),
    "parser-tower-en-int8": Table(
        "parser",
        "python -m bench.parser --checkpoint models/parser-tower-en/model.ckpt --threads 1 --quantize int8 "
        "--record-as parser-tower-en-int8",
        per_machine=False,
    ),
    "parser-tower-en-vs-en": Table(
        "parser_pair",
        "python -m bench.parser_pair --a models/parser-tower-en/model.ckpt --b models/parser-en/model.ckpt "
        "--record-as parser-tower-en-vs-en",
        per_machine=False,
    ),
    "parser-tower-en-ff256-int8": Table(
        "parser",
        "python -m bench.parser --checkpoint models/parser-tower-en-ff256/model.ckpt --threads 1 --quantize int8 "
        "--record-as parser-tower-en-ff256-int8",
        per_machine=False,
    ),
    "parser-tower-en-ff256-vs-tower": Table(
        "parser_pair",
        "python -m bench.parser_pair --a models/parser-tower-en-ff256/model.ckpt --b models/parser-tower-en/model.ckpt "
        "--record-as parser-tower-en-ff256-vs-tower",
        per_machine=False,
    ),
    **{
        f"decoding-{name}": Table(
            "decoding",
            f"python -m bench.decoding --checkpoint models/{name}/model.ckpt --threads 1 --record-as decoding-{name}",
            per_machine=False,
        )
        for name in ("parser-en", "parser-tower-en")
    },
}


def record_names(ctx: Context, name: str) -> dict[str, str]:
    """Machine type → the record name that holds table ``name`` on it: one per type of ``MACHINE_TYPES``,
    and one per other type some record of this table was made on."""
    found = set()
    for key, record in ctx.records.items():
        machine_type = record.payload.get("machine", {}).get("machine_type")
        if machine_type and key == f"{name}-{machine_slug(machine_type)}":
            found.add(machine_type)
    types = list(MACHINE_TYPES) + sorted(found - set(MACHINE_TYPES))
    return {t: f"{name}-{machine_slug(t)}" for t in types}


def _draw(ctx: Context, table: Table, name: str) -> str:
    record = ctx.record(name, "json")
    tables = importlib.import_module(f"bench.{table.script}").tables
    return tables(record.payload).strip("\n") + "\n\n" + ctx.source(record)


def _bench(ctx: Context, name: str) -> str:
    """A bench table per machine type (``bench NAME``, NAME one of ``bench.readme.TABLES``)."""
    table = TABLES.get(name)
    if table is None:
        raise RecordError(f"no bench table '{name}' (one of {', '.join(TABLES)}: bench/readme.py TABLES)")
    if not table.per_machine:
        if name in ctx.records:
            machine_type = ctx.records[name].payload.get("machine", {}).get("machine_type", "machine type not recorded")
            return f"**{machine_type}**\n\n" + _draw(ctx, table, name)
        return f"Not measured yet: `{table.command}` writes `{ctx.records_dir / name}.json`."
    parts = []
    for machine_type, record in record_names(ctx, name).items():
        if record in ctx.records:
            recorded = ctx.records[record].payload.get("machine", {}).get("machine_type")
            if recorded != machine_type:
                raise RecordError(f"{ctx.records_dir / record}.json was measured on {recorded!r}, not {machine_type!r}")
            parts.append(f"**{machine_type}**\n\n" + _draw(ctx, table, record))
        else:
            parts.append(
                f"**{machine_type}**: not measured on this machine type yet — `{table.command}` on such a machine "
                f"writes `{ctx.records_dir / record}.json`."
            )
    return "\n\n".join(parts)


RENDERERS = {"bench": _bench}


def expected(root: str | Path = REPO) -> str:
    """What bench/README.md must hold, given its text and the records under ``root``."""
    root = Path(root)
    page = root / README
    if not page.is_file():
        raise RecordError(f"{page}: no bench/README.md to render")
    ctx = Context(load_records(root, RECORDS), "../docs/bench/", RECORDS)
    return render_regions(page.read_text(encoding="utf-8"), ctx, str(README), RENDERERS)


def is_current(root: str | Path = REPO) -> bool:
    """Whether bench/README.md under ``root`` is what its records give."""
    return (Path(root) / README).read_text(encoding="utf-8") == expected(root)


def arguments():
    parser = argparse.ArgumentParser(prog="python -m bench.readme", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when the page differs")
    parser.add_argument("--root", default=str(REPO), help="repository root (default: this checkout)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = arguments().parse_args(argv)
    try:
        text = expected(args.root)
    except ParserfreeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    page = Path(args.root) / README
    if page.read_text(encoding="utf-8") == text:
        print(f"{README}: up to date")
        return 0
    if args.check:
        print(f"{README}: differs from what the records give; run `python -m bench.readme`")
        return 1
    write_text_atomic(page, text)
    print(f"rewrote {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
