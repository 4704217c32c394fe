"""The ``parserfree lm-compare`` command: the masked-LM runs compared (``parserfree.comparison.language_model``).

Registered on the main CLI by ``add_language_model_command(subparsers)``; the comparison is imported only
when the command runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def cmd_lm_compare(args: argparse.Namespace) -> int:
    """Compare the masked-LM runs under --runs; write the report's JSON and markdown to --out."""
    from ..comparison.language_model import language_model_report
    from ..encoder.errors import UsageError
    from ..encoder.files import write_json, write_text_atomic
    from ..reports.language_model import render_markdown

    for placeholder in args.masked_parse or []:
        if not placeholder or any(c.isspace() for c in placeholder):
            raise UsageError(f"--masked-parse {placeholder!r}: a placeholder is one word (not empty, no spaces)")
    extra = dict(row.split("=", 1) for row in args.row or [])
    report = language_model_report(
        args.runs,
        progress=not args.quiet,
        pairs=not args.no_pairs,
        extra=extra,
        text_trees=args.text_trees,
        masked_parse=args.masked_parse or (),
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "language_model.json", report.to_dict())
    markdown = render_markdown(report)
    write_text_atomic(out / "language_model.md", markdown)
    print(markdown if not args.quiet else json.dumps(report.perplexity))
    return 0


def add_language_model_command(subparsers) -> None:
    """Register ``lm-compare`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "lm-compare",
        help="the masked-LM rows compared: perplexity paired by sentence, zero-shot agreement minimal pairs",
    )
    p.add_argument(
        "--runs",
        default="runs/lm",
        help="folder with one masked-LM run per recipe (no_syntax, locality, parser_fed_twin), or "
        "builtin:PREFIX for the shipped encoders builtin:PREFIX-<recipe> (e.g. builtin:encoder-en)",
    )
    p.add_argument("--out", default="runs/lm/compare", help="where language_model.json and .md go")
    p.add_argument("--no-pairs", action="store_true", help="perplexity only (no zero-shot agreement pairs)")
    p.add_argument(
        "--row",
        action="append",
        metavar="NAME=RUN",
        help="another masked-LM run as a row, read with its recipe's inference source (repeatable), e.g. "
        "parser_free_scheduled=runs/lm/parser_free_scheduled",
    )
    p.add_argument(
        "--text-trees",
        action="store_true",
        help="add the row parser_free_text: the twin's weights reading its predictor's D̂ of the unmasked text "
        "(the text the twin's parser reads), with its contrasts and place",
    )
    p.add_argument(
        "--masked-parse",
        action="append",
        metavar="PLACEHOLDER",
        help="add the row twin_masked_parse(PLACEHOLDER): the twin reading spaCy's tree of each sentence with its "
        "hidden words replaced by PLACEHOLDER (repeatable; perplexity and place only)",
    )
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_lm_compare)
