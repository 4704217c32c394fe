"""``parserfree soft-labels``: a teacher's soft labels on a task's training texts and transfer set;
``parserfree student-report``: the students it taught against the teacher, with verdicts.

The set a student learns from (``training.soft_labels``; docs/usage.md, "A student"): see
``distill.teacher_labels`` for what the transfer set holds and ``distill.soft_labels`` for the files.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path


def cmd_soft_labels(args: argparse.Namespace) -> int:
    """Label the config's training texts and transfer set with ``--teacher`` into ``--out``."""
    from ..distill.config import load_config
    from ..distill.shipped import models_dir, write_readme
    from ..distill.teacher_labels import make_soft_labels

    config = load_config(args.config, args.set or [])
    command = "parserfree " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    soft = make_soft_labels(
        args.teacher, config, args.out, command, args.cache_dir, args.transfer_limit, progress=not args.quiet
    )
    if Path(args.out).resolve().parent == models_dir():  # a shipped set: the models' README lists it
        write_readme()
    r = soft.record
    print(
        f"soft labels: {args.out}  {r['n_train']:,} training texts + {r['n_transfer']:,} transfer texts "
        f"({r['transfer']}); teacher {r['teacher']['recipe']} dev {r['teacher'].get('dev_metric', float('nan')):.2f}"
    )
    return 0


def add_soft_label_commands(subparsers) -> None:
    """Register ``soft-labels`` and ``student-report`` on the CLI's subparsers."""
    p = subparsers.add_parser("soft-labels", help="a teacher's soft labels on a task's training and transfer texts")
    p.add_argument(
        "--teacher",
        required=True,
        help="the teacher: a checkpoint, or a task folder of a run (e.g. runs/base/agreement), whose row best on "
        "dev teaches",
    )
    p.add_argument(
        "--config", required=True, help="the task's config (the student's data), e.g. configs/main/sentiment.yaml"
    )
    p.add_argument("--out", required=True, help="the set's folder (e.g. models/soft-labels-vader-movies to ship it)")
    p.add_argument("--transfer-limit", type=int, help="label at most this many transfer texts (default: all)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a setting (repeatable)")
    p.add_argument("--cache-dir", help="cache folder for data and parses")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_soft_labels)
    add_student_report_command(subparsers)


def cmd_student_report(args: argparse.Namespace) -> int:
    """Compare the student job's rows with the teacher and the undistilled rows; write JSON and Markdown."""
    from ..encoder.files import write_json, write_text_atomic
    from ..jobs.student_report import markdown, student_report

    result = student_report(Path(args.student), Path(args.teacher), args.small and Path(args.small), args.seeds)
    result["command"] = "parserfree " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    out = Path(args.out)
    write_json(out, result)
    text = markdown(result)
    write_text_atomic(out.with_suffix(".md"), text + "\n")
    print(text)
    return 0


def add_student_report_command(subparsers) -> None:
    """Register ``student-report`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "student-report", help="the students against their teacher and their undistilled rows, with verdicts"
    )
    p.add_argument("--student", default="runs/student", help="the student job (default runs/student)")
    p.add_argument("--teacher", default="runs/base", help="the teacher's job, the base size's (default runs/base)")
    p.add_argument("--small", help="the undistilled small job (e.g. runs/main): each student against its own row")
    p.add_argument("--seeds", type=int, help="read each row's first N seeds (default: all it has)")
    p.add_argument("--out", default="runs/student/student_report.json", help="the report (JSON; .md beside it)")
    p.set_defaults(func=cmd_student_report)
