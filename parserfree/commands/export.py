"""The ``parserfree export`` and ``parserfree predict`` commands: thin argument parsing over export/.

Registered on the main CLI by ``add_export_commands(subparsers)`` (parserfree/commands/cli.py). ``export`` calls
``export_bundle`` and prints the parity of each model variant; ``predict`` reads UTF-8 text lines (a file
or stdin), predicts with ``ParserFreeModel`` and writes one JSON line per input line in the same order
(a file, written atomically, or stdout), with a progress bar on stderr when reading a file; with
``--with-tree`` each line also gets its predicted tree (``tree`` edges, ``heads`` and, from a labelled
graph, ``labels``), and with ``--svg DIR`` a displaCy drawing of it (DIR/<line number>.svg).
Errors (bad bundle, invalid UTF-8 with its line number) end as the CLI's one-line errors.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ..distill.data.readers import DataError
from ..encoder.errors import UsageError
from ..encoder.files import atomic_open
from ..reports.parts import Variants, from_json
from .arguments import options, positive_int

CHUNK_LINES = 1024  # lines predicted per call (sorted by length within a chunk)


def add_export_commands(subparsers) -> None:
    """Register ``export`` and ``predict`` on the CLI's subparsers (each with ``set_defaults(func=...)``)."""
    p = subparsers.add_parser("export", help="export a trained checkpoint to a self-checking ONNX bundle")
    p.add_argument(
        "--checkpoint", required=True, help="a run's checkpoint, e.g. runs/parser_free/checkpoints/best.ckpt"
    )
    p.add_argument("--out", required=True, help="bundle folder to create")
    p.add_argument(
        "--optimize",
        action="store_true",
        help="also write model.optimized.onnx (and tree.optimized.onnx; onnxruntime extended optimisations)",
    )
    p.add_argument(
        "--quantize", choices=["int8"], help="also write model.int8.onnx (and tree.int8.onnx; dynamic quantisation)"
    )
    p.add_argument("--threads", type=positive_int, help="onnxruntime intra-op threads for the parity checks")
    p.add_argument("--overwrite", action="store_true", help="replace an existing bundle at --out")
    p.add_argument(
        "--task-distances",
        choices=["auto", "pointer_jumps", "adjacency_powers"],
        default="auto",
        help="how the task graph computes the D̂ its bias reads: exact path lengths by pointer jumping, or "
        "clamped where the bias saturates, by powers of the head adjacency (the same bias; timed by python -m "
        "bench.task_distances); auto (default): adjacency powers wherever they apply. The tree graph's D̂ is "
        "exact either way",
    )
    p.set_defaults(func=cmd_export)

    p = subparsers.add_parser("predict", help="predict from text lines with an exported bundle (no parser)")
    p.add_argument("--model", required=True, help="bundle folder written by `parserfree export`")
    p.add_argument("--input", help="UTF-8 text file, one text per line (default: stdin)")
    p.add_argument("--output", help="JSON lines file (default: stdout)")
    p.add_argument(
        "--with-tree",
        action="store_true",
        help="add the predicted tree: its edges, each word's head and, from a labelled graph, its dependency label",
    )
    p.add_argument("--with-distances", action="store_true", help="add the predicted distance matrix D̂")
    p.add_argument(
        "--svg",
        metavar="DIR",
        help="with --with-tree: also draw each line's predicted tree (displaCy) to DIR/<line number>.svg",
    )
    p.add_argument("--batch-size", type=positive_int, default=32, help="texts per onnxruntime run (default 32)")
    p.add_argument("--threads", type=positive_int, help="onnxruntime intra-op threads (default: onnxruntime's)")
    p.add_argument(
        "--variant",
        choices=["default", "optimized", "int8"],
        default="default",
        help="which model of the bundle to run (default model.onnx)",
    )
    p.add_argument("--digest", help="refuse the bundle unless its digest (printed by export) is this one")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_predict)


def _format_report(variant: str, report: dict) -> str:
    parts = [f"task_output max |Δ| {report['task_output_max_diff']:.2g}"]
    if report["distances_max_diff"] is not None:
        parts.append(
            f"D̂ max |Δ| {report['distances_max_diff']:.2g} ({report['distance_rows_differing']:.1%} of rows differ)"
        )
    for key, what in (("heads_differing", "heads"), ("labels_differing", "labels")):
        if report.get(key) is not None:
            parts.append(f"{what} differ on {report[key]:.1%} of words")
    if report["prediction_agreement"] is not None:
        parts.append(f"prediction agreement {report['prediction_agreement']:.1%}")
    return f"  {variant:<9} vs PyTorch: " + ", ".join(parts)


def format_evaluation(evaluation: Variants) -> list[str]:
    """Lines of the test-split evaluation of every variant (the manifest's ``evaluation`` read as
    ``Variants``): metric, agreement with fp32, D̂, heads and labels as fp32, speed."""
    if evaluation.skipped is not None:
        return [f"  no test-split evaluation of the variants: {evaluation.skipped}"]
    lines = [
        f"  {evaluation.source}, {evaluation.n_examples} sentences (speed: graph only, batch "
        f"{evaluation.batch_size}, {evaluation.threads or 'default'} threads):"
    ]
    for variant, v in evaluation.variants.items():
        trees = f", D̂ rows as fp32 {v.distance_rows_as_fp32:.1%}" if v.distance_rows_as_fp32 is not None else ""
        for share, what in ((v.heads_as_fp32, "heads"), (v.labels_as_fp32, "labels")):
            if share is not None:
                trees += f", {what} as fp32 {share:.1%}"
        if v.tree_sentences_per_s is not None:
            trees += f", tree graph {v.tree_sentences_per_s:,.0f} sentences/s, task graph"
        lines.append(
            f"  {variant:<9} {v.metric_name} {v.metric:.2f}, agreement with fp32 "
            f"{v.agreement_with_fp32:.1%}{trees}, {v.sentences_per_s or float('nan'):,.0f} sentences/s"
        )
    return lines


def cmd_export(args: argparse.Namespace) -> int:
    """Export a checkpoint and print the parity of every model variant."""
    from ..export.bundle import bundle_digest
    from ..jobs.exporting import export_checkpoint

    manifest = export_checkpoint(
        args.checkpoint, args.out, **options(args, "optimize", "quantize", "threads", "overwrite", "task_distances")
    )
    parity = manifest["parity"]
    tree = manifest.get("tree_graph")
    files = [*manifest["models"].values(), *(tree["models"].values() if tree else ())]
    print(f"{manifest['kind']} bundle → {args.out} ({', '.join(files)})")
    print(f"  parity set: {parity['default']['source']}, batches (B, T) {parity['default']['batches']}")
    print(f"  task graph ({', '.join(o['name'] for o in manifest['outputs'])}):")
    for variant, report in parity.items():
        print(_format_report(variant, report))
    if tree:
        print(f"  tree graph ({', '.join(o['name'] for o in tree['outputs'])}):")
        for variant, report in tree["parity"].items():
            print(_format_report(variant, report))
    for line in format_evaluation(from_json(Variants, manifest["evaluation"])):
        print(line)
    words = manifest["tokenizer"]["training_words"]
    print(
        f"  tokenizer reproduces the training words of {words['identical']}/{words['sentences']} sentences "
        f"({words['reference']})"
    )
    print(f"  bundle digest: sha256:{bundle_digest(args.out)} (pin it with `parserfree predict --digest`)")
    return 0


def read_lines(stream: BinaryIO, name: str) -> list[str]:
    """Lines of a UTF-8 byte stream (``\\n`` or ``\\r\\n``; a final newline ends the last line).

    Invalid UTF-8 raises DataError naming the source and the 1-based line number.
    """
    data = stream.read()
    raw = data.split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    lines = []
    for number, line in enumerate(raw, start=1):
        try:
            lines.append(line.removesuffix(b"\r").decode("utf-8"))
        except UnicodeDecodeError as e:
            raise DataError(f"{name}:{number}: invalid UTF-8 ({e.reason} at byte {e.start})") from None
    return lines


def _chunks(lines: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(lines), CHUNK_LINES):
        yield lines[start : start + CHUNK_LINES]


def cmd_predict(args: argparse.Namespace) -> int:
    """Text lines in → JSON lines out, same count and order."""
    from ..export.runtime import ParserFreeModel

    if args.svg and not args.with_tree:
        raise UsageError("--svg draws the predicted tree: add --with-tree")
    model = ParserFreeModel.load(args.model, threads=args.threads, variant=args.variant, digest=args.digest)
    if args.input:
        with open(args.input, "rb") as f:
            lines = read_lines(f, args.input)
    else:
        lines = read_lines(sys.stdin.buffer, "<stdin>")
    progress = None
    if args.input and not args.quiet:
        from tqdm import tqdm

        progress = tqdm(total=len(lines), unit="line", file=sys.stderr, desc="predict")
    target = Path(args.output) if args.output else None
    try:
        with atomic_open(target, "wb") if target else contextlib.nullcontext(sys.stdout.buffer) as out:
            for number, chunk in enumerate(_chunks(lines)):
                results = model.predict(
                    chunk, batch_size=args.batch_size, with_distances=args.with_distances, with_tree=args.with_tree
                )
                if args.svg:
                    _write_svgs(results, Path(args.svg), number * CHUNK_LINES + 1, len(str(len(lines))))
                out.write(
                    b"".join(
                        (json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8") for r in results
                    )
                )
                if progress is not None:
                    progress.update(len(chunk))
            out.flush()
    finally:
        if progress is not None:
            progress.close()
    if target:
        print(f"{len(lines)} predictions → {target}", file=sys.stderr)
    if args.svg:
        print(f"predicted trees → {args.svg}/*.svg", file=sys.stderr)
    return 0


def _write_svgs(results: list[dict], folder: Path, first_line: int, digits: int) -> None:
    """One displaCy SVG of the predicted tree (heads and labels) per result with words, named by its
    1-based line number."""
    from ..encoder.files import write_text_atomic
    from ..export.spacy_component import tree_svg

    folder.mkdir(parents=True, exist_ok=True)
    for line, item in enumerate(results, start=first_line):
        if "heads" in item:
            write_text_atomic(
                folder / f"{line:0{digits}d}.svg", tree_svg(item["words"], item["heads"], item.get("labels"))
            )
