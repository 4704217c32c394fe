"""What every bench script shares: its command line, the benchmark texts, the machine facts and its record.

The measuring itself (``time_calls``, ``seconds_per_call``, ``batches``) and the machine facts (``machine``:
CPU, vector flags, machine type, cores, library versions) are ``parserfree.export.timing``, shared with
``parserfree compare``, so bench numbers and the comparison report mean the same thing.

A script builds its command line with ``script_arguments`` — the options every script has (``--out``,
``--record``, ``--record-as``, ``--tag``, ``--note``) and those it asks for (``--threads``, ``--quick``,
``--cache-dir``) — parses it with ``parse`` (which keeps the arguments for the record's command) and ends
with ``write_record``: its result, with the machine it ran on, as a result record
(``parserfree.reports.records``: command, date, commit, kind ``json``, note, payload), written to
``bench/results/<script>.json`` (scratch, git-ignored) or, with ``--record``, to
``docs/bench/<script>[-<tag>]-<machine type>.json`` to be committed (``--record-as NAME``: to
``docs/bench/NAME.json``, for a record named by what it measures, e.g. ``parser-en``). bench/README.md's
tables are rendered from the committed records (``python -m bench.readme``).
"""

from __future__ import annotations

import argparse
import datetime
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from parserfree.encoder.files import write_json
from parserfree.export.timing import machine
from parserfree.reports.records import NAME, RecordError, ResultRecord, current_commit

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"  # scratch results (git-ignored)
RECORDS = Path("docs") / "bench"  # committed records, relative to the repository root
DEFAULT_RUN = Path("runs/main/sentiment")  # the main job's sentiment task (`parserfree run`): the default models
# The machine types bench/README.md keeps a table for even before one is measured (the project's machines);
# a record of any other type adds its own.
MACHINE_TYPES = ("AVX-512 + VNNI", "AVX2, no AVX-512")


def machine_slug(machine_type: str) -> str:
    """The machine type as it ends a record's name: "AVX-512 + VNNI" → "avx512-vnni", "AVX2, no AVX-512" →
    "avx2", "no AVX2" → "no-avx2"."""
    if machine_type.startswith("AVX2"):
        return "avx2"
    words = machine_type.lower().replace("avx-512", "avx512").replace("+", " ").replace(",", " ").split()
    return "-".join(words)


def script_arguments(
    file: str, doc: str | None, *, threads: int | None = None, quick: str | None = None, cache_dir: bool = False
) -> argparse.ArgumentParser:
    """The command line of the script ``file`` (its ``__file__``), described by the first line of ``doc``:
    the record options of every script, and ``--threads`` (default ``threads``), ``--quick`` (help
    ``quick``) and ``--cache-dir`` where asked for."""
    script = Path(file).stem
    parser = argparse.ArgumentParser(prog=f"python -m bench.{script}", description=(doc or script).splitlines()[0])
    parser.set_defaults(script=script)
    if threads is not None:
        parser.add_argument("--threads", type=int, default=threads, help=f"intra-op threads (default {threads})")
    if quick is not None:
        parser.add_argument("--quick", action="store_true", help=quick)
    if cache_dir:
        parser.add_argument("--cache-dir", help="data cache (default $PARSERFREE_CACHE or ~/.cache/parserfree)")
    where = parser.add_argument_group("where the result goes (a record: command, date, commit, machine, result)")
    out = where.add_mutually_exclusive_group()
    out.add_argument("--out", help=f"scratch JSON file (default bench/results/{script}.json)")
    out.add_argument(
        "--record",
        action="store_true",
        help=f"write the record to commit: {RECORDS}/{script}[-TAG]-<machine type>.json (bench/README.md shows it)",
    )
    out.add_argument("--record-as", metavar="NAME", help=f"write the record to commit as {RECORDS}/NAME.json")
    where.add_argument("--tag", help="a name for this way of running the script, in the record's name")
    where.add_argument("--note", help="one line on the conditions (the machine's load, what else ran)")
    return parser


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse ``argv`` (default: the process's arguments), keeping them as ``args.argv`` for the record's command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    for name in filter(None, (args.tag, args.record_as)):
        if not NAME.fullmatch(name):
            parser.error(f"{name!r}: a record's name is lower-case letters, digits, '_' or '-'")
    args.argv = argv
    return args


def command(args: argparse.Namespace) -> str:
    """The command line that ran the script, as a record keeps it."""
    return " ".join(["python", "-m", f"bench.{args.script}", *map(shlex.quote, args.argv)])


def record_stem(args: argparse.Namespace) -> str:
    """The record's name before its machine type: the script, then its ``--tag``."""
    return args.script + (f"-{args.tag}" if args.tag else "")


def record_path(args: argparse.Namespace, machine_type: str) -> Path:
    """Where the result goes: the committed record's file (``--record``, ``--record-as``), else the scratch file."""
    if args.record_as:
        return REPO / RECORDS / f"{args.record_as}.json"
    if args.record:
        return REPO / RECORDS / f"{record_stem(args)}-{machine_slug(machine_type)}.json"
    return Path(args.out) if args.out else RESULTS / f"{record_stem(args)}.json"


def write_record(result: dict[str, Any], args: argparse.Namespace) -> Path:
    """Write ``result`` (with ``bench``: the script, and ``machine`` when it has none) as a record; returns
    its path. A committed record needs a git checkout (its commit; "-dirty" when tracked files differ)."""
    result["bench"] = args.script
    result.setdefault("machine", machine())
    path = record_path(args, result["machine"]["machine_type"])
    committed = bool(args.record or args.record_as)
    try:
        commit = current_commit(REPO)
    except RecordError as e:
        if committed:
            raise SystemExit(f"{args.script}: {e}") from None
        commit = "unknown"
    date = datetime.datetime.now(datetime.UTC).date().isoformat()
    record = ResultRecord(path.stem, "json", command(args), date, commit, result, note=args.note)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, record.to_json())
    return path


def benchmark_texts(dataset: str, n: int, cache_dir: str | None) -> list[str]:
    """The first ``n`` texts of the test split, then of dev, sorted by length (so batches of 32 are alike)."""
    from parserfree.distill.data.datasets import DataConfig, load_dataset

    data = load_dataset(DataConfig(dataset=dataset, task="binary", cache_dir=cache_dir))
    texts = [e.text for e in data.splits["test"] + data.splits["dev"]][:n]
    return sorted(texts, key=len)


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str, str]]) -> str:
    """A Markdown table: ``columns`` are (key, header, format spec); a missing or None value prints "–"."""

    def cell(row: dict, key: str, spec: str) -> str:
        value = row.get(key)
        return "–" if value is None else format(value, spec)

    lines = [
        "| " + " | ".join(header for _, header, _ in columns) + " |",
        "|" + "|".join("---" if spec == "" else "---:" for _, _, spec in columns) + "|",
    ]
    lines += ["| " + " | ".join(cell(row, key, spec) for key, _, spec in columns) + " |" for row in rows]
    return "\n".join(lines)


def finish(result: dict[str, Any], args: argparse.Namespace, tables: Callable[[dict], str]) -> dict[str, Any]:
    """The end of a script's run: the machine, the tables, the record written (its path printed); ``result``."""
    from parserfree.export.timing import describe_machine

    print(describe_machine(result["machine"]))
    print(tables(result))
    print(f"results: {write_record(result, args)}")
    return result
