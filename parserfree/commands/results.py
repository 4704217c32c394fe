"""The ``parserfree results`` commands: ``render`` the results pages, ``add`` a result record.

Registered on the main CLI by ``add_results_commands(subparsers)`` (parserfree/commands/cli.py); thin argument
parsing over ``parserfree.reports.records`` and ``parserfree.reports.results_page``, imported only when a command
runs. Bad records or placeholders end as the CLI's one-line errors.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .arguments import options


def cmd_results_render(args: argparse.Namespace) -> int:
    """Render the results pages, or with --check only say which differ (exit status 1)."""
    from ..reports.results_page import stale_pages, write_pages

    if args.check:
        stale = stale_pages(args.root)
        for path in stale:
            print(f"{path}: differs from what the records give; run `parserfree results render`")
        return 1 if stale else 0
    changed = write_pages(args.root)
    print(f"rewrote {', '.join(map(str, changed))}" if changed else "pages up to date")
    return 0


def cmd_results_add(args: argparse.Namespace) -> int:
    """Record a result (a file, or a main job's folder) and render the pages again."""
    from ..reports.records import RECORDS_DIR, add_records
    from ..reports.results_page import write_pages

    records = add_records(
        args.root, args.source, args.command, **options(args, "name", "date", "commit", "note", "replace")
    )
    for r in records:
        print(f"recorded {Path(args.root) / RECORDS_DIR / r.name}.json ({r.kind}, {r.date}, commit {r.commit})")
    changed = write_pages(args.root)
    print(
        f"rewrote {', '.join(map(str, changed))}"
        if changed
        else "pages unchanged (no placeholder names these records yet)"
    )
    return 0


def add_results_commands(subparsers) -> None:
    """Register ``results render`` and ``results add`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "results",
        help="the results pages: render docs/results.md and the README from docs/results/, or record a new result",
    )
    sub = p.add_subparsers(dest="results_command", required=True)
    r = sub.add_parser("render", help="render docs/results.md and the README's generated parts from the records")
    r.add_argument("--check", action="store_true", help="change nothing; exit 1 naming each page that differs")
    r.add_argument("--root", default=".", help="repository root (default: the current folder)")
    r.set_defaults(func=cmd_results_render)
    a = sub.add_parser("add", help="copy a result into docs/results/ with its command, date and commit")
    a.add_argument(
        "--from",
        dest="source",
        required=True,
        help="a report.json, curve.json or other result JSON, or a main job's folder (e.g. runs/main)",
    )
    a.add_argument("--command", required=True, help='the command that produced it, e.g. "parserfree run"')
    a.add_argument(
        "--name",
        help="record name (default: <kind>_<dataset>); for a main job's folder the prefix of <prefix>_<task> and "
        "<prefix>_job (default: main)",
    )
    a.add_argument("--note", help="one line on the conditions, e.g. the machine and its load")
    a.add_argument("--date", help="YYYY-MM-DD (default: the day the result file was written)")
    a.add_argument("--commit", help="the code it ran on (default: the checkout's commit)")
    a.add_argument("--replace", action="store_true", help="overwrite a record of the same name")
    a.add_argument("--root", default=".", help="repository root (default: the current folder)")
    a.set_defaults(func=cmd_results_add)
