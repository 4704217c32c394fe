"""Where a parser-free request spends its time: by stage, and inside the graph by part of the model.

Stages (wall-clock per sentence, each timed alone over the same length-sorted batches, fastest of
``--passes``): the tokenizer (``ParserFreeModel.tokenize``), featurisation (``graph_inputs``: words →
ids, feature ids and mask), the graph (``session.run``, on the session ``predict`` uses for that batch
size), decoding and output (``ParserFreeModel.decode``: softmax, labels, the result dicts) and the rest
of ``predict``: its own time minus the four — its checks and sorting, and the graph running slower between
Python steps than back to back; noise can make it negative.

Runs a bundle's graph (fp32 ``model.onnx`` or another variant) on the benchmark texts in length-sorted
batches (32 and 1 by default), with onnxruntime's per-node profiler on, and sums the kernel time of the
nodes by part of the model — dense layers (QKV, output and feed-forward products with their bias adds and
GELU), attention (scores, softmax, weighted sum and the reshapes around them), layer norms, the syntax
bias (distance → table lookup and interpolation), the predictor's arc scorer and its tree ops (argmax,
cycle breaking, distances), embeddings, residual adds and the rest — and by operator type. The shares are
of the summed kernel time (the time between kernels — scheduling, memory allocation — is not in them;
the table also gives the wall-clock time of the same runs).

    python -m bench.profile_graph [--bundle B] [--variant int8] [--threads 1] [--quick]

``--checkpoint C`` profiles instead the parser graph ``bench.parser`` times (a checkpoint's predictor
exported as a parser: heads and labels; ``--quantize int8`` its int8 copy) on the same texts, tokenised
by spaCy's tokenizer, in length-sorted batches of 32: where the parser's time goes after the tokenizer.

    python -m bench.profile_graph --checkpoint models/parser-tower-en-ff256/model.ckpt --quantize int8 --threads 1
"""

from __future__ import annotations

import collections
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from parserfree.export.graph_inputs import graph_inputs
from parserfree.export.runtime import SINGLE_TEXT_THREADS, SPINNING, ParserFreeModel
from parserfree.export.session import make_session
from parserfree.export.timing import batches, machine

from bench.lib.common import DEFAULT_RUN, benchmark_texts, finish, format_table, parse, script_arguments

# (part, pattern on the node name or, for nodes the optimiser renamed, "op:<type>"), first match wins
PARTS = [
    ("label projections", r"/predictor/(dep|head|linear)/"),
    ("tree ops + label products", r"/predictor/(?!arc_scorer|norm)"),  # unscoped label-scorer ops land here
    ("arc scorer", r"/predictor/"),
    ("syntax bias", r"/bias/"),
    ("dense layers", r"/(qkv|out|feed_forward)/|op:BiasGelu|op:Gelu|op:FastGelu"),
    ("attention", r"/attention(_\d+)?/"),
    ("layer norms", r"norm/|op:LayerNormalization|op:SkipLayerNormalization"),
    ("embeddings", r"embedding/|/model/(Gather|ReduceSum|Slice)"),
    ("task head", r"/head/"),
    ("residual adds", r"/layers\.\d+(_\d+)?/Add"),
]


def part_of(name: str, op: str) -> str:
    """The part of the model a profiled node belongs to (see PARTS), else "other"."""
    for part, pattern in PARTS:
        if re.search(pattern, name) or re.search(pattern, f"op:{op}"):
            return part
    return "other"


def profile(model_path: Path, feeds: list[dict], threads: int, passes: int) -> dict:
    """Per-part and per-operator kernel milliseconds (summed over ``passes`` runs of ``feeds``, after a
    warm-up pass), and the wall-clock milliseconds of those runs."""
    with tempfile.TemporaryDirectory() as tmp:
        options_prefix = str(Path(tmp) / "profile")
        session = make_session(model_path, threads, spinning=SPINNING, profile_prefix=options_prefix)
        for f in feeds:
            session.run(None, f)
        start = time.perf_counter()
        for _ in range(passes):
            for f in feeds:
                session.run(None, f)
        wall = time.perf_counter() - start
        events = json.loads(Path(session.end_profiling()).read_text())
    # the warm-up pass is profiled too: keep the last ``passes`` runs only
    runs = [e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"]
    first = runs[-passes * len(feeds)]["ts"] if len(runs) >= passes * len(feeds) else 0
    parts: collections.Counter = collections.Counter()
    ops: collections.Counter = collections.Counter()
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and e["ts"] >= first:
            op = e["args"].get("op_name", "?")
            parts[part_of(e["name"], op)] += e["dur"] / 1e3
            ops[op] += e["dur"] / 1e3
    return {"wall_ms": 1e3 * wall, "kernel_ms": sum(parts.values()), "parts_ms": dict(parts), "ops_ms": dict(ops)}


def stages(model: ParserFreeModel, texts: list[str], size: int, passes: int) -> dict[str, float]:
    """Microseconds per sentence of each stage of ``predict`` at batch ``size`` (see the module docstring)."""
    words = model.tokenize(texts)
    order = sorted(range(len(texts)), key=lambda i: len(words[i]))
    slices = [order[k : k + size] for k in range(0, len(order), size)]
    groups = [[texts[i] for i in rows] for rows in slices]
    word_groups = [[words[i] for i in rows] for rows in slices]
    feeds = [graph_inputs(model.vocab, w, model.max_len, None) for w in word_groups]
    outputs = [model.run_outputs(w) for w in word_groups]
    steps = {
        "tokenizer": lambda: [model.tokenize(g) for g in groups],
        "featurisation": lambda: [graph_inputs(model.vocab, w, model.max_len, None) for w in word_groups],
        "graph": lambda: [model.session_for(len(f["mask"])).run(None, f) for f in feeds],
        "decoding and output": lambda: [model.decode(w, o, [False] * len(w)) for w, o in zip(word_groups, outputs)],
        "predict": lambda: [model.predict(g, batch_size=size) for g in groups],
    }
    best = {name: float("inf") for name in steps}
    for _ in range(passes + 1):  # the first pass warms caches and the single-text session
        for name, step in steps.items():
            start = time.perf_counter()
            step()
            best[name] = min(best[name], time.perf_counter() - start)
    per = {name: 1e6 * t / len(texts) for name, t in best.items()}
    parts = ("tokenizer", "featurisation", "graph", "decoding and output")
    per["rest of predict"] = per["predict"] - sum(per[k] for k in parts)  # may come out below 0: timing noise
    return per


def arguments():
    parser = script_arguments(__file__, __doc__, threads=2, quick="300 texts")
    parser.add_argument("--bundle", default=str(DEFAULT_RUN / "bundle"))
    parser.add_argument("--variant", default="default", help="default (fp32), optimized or int8")
    parser.add_argument("--batches", type=int, nargs="*", default=[32, 1])
    parser.add_argument("--n", type=int, help="texts (default 1000, --quick 300)")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--checkpoint", help="profile this checkpoint's parser graph instead of a bundle")
    parser.add_argument("--quantize", choices=["int8"], help="with --checkpoint: its int8 copy")
    return parser


STAGES = ("tokenizer", "featurisation", "graph", "decoding and output", "rest of predict")


def parser_graph(checkpoint: str, quantize: str | None, texts: list[str], threads: int, passes: int) -> dict:
    """The kernel time by part of a checkpoint's parser graph (``bench.lib.parse_speed.checkpoint_system``'s
    ``parse``) over ``texts``, tokenised by spaCy's tokenizer, in length-sorted batches of its BATCH."""
    from parserfree.core.checkpoints import load_trained
    from parserfree.core.parse import DEFAULT_MODEL, load_pipeline
    from parserfree.export.tokenizer import words_of

    from bench.lib.parse_speed import BATCH, checkpoint_system

    words = sorted(words_of(load_pipeline(DEFAULT_MODEL).tokenizer, texts), key=len)
    with tempfile.TemporaryDirectory() as tmp:
        system, _ = checkpoint_system(checkpoint, threads, Path(tmp), quantize)
        vocab, max_len = load_trained(checkpoint).vocab, system.max_len
        feeds = [graph_inputs(vocab, [w[:max_len] for w in rows], max_len) for rows in batches(words, BATCH)]
        name = f"parser.{quantize}.onnx" if quantize else "parser.onnx"
        got = profile(Path(tmp) / name, feeds, threads, passes)
    return {**got, "batch": BATCH, "texts": len(texts), "words": sum(len(w) for w in words), "threads": threads}


def tables(result: dict[str, Any]) -> str:
    """Per batch size: the stages of ``predict`` (µs per sentence) and the graph's kernel time by part."""
    out = []
    for size, per in result["stages_us_per_sentence"].items():
        rows = [{"stage": k, "us": per[k], "share": 100 * per[k] / per["predict"]} for k in STAGES]
        out += [
            f"batch {size}: stages of predict, µs per sentence ({per['predict']:.0f} in all)",
            format_table(
                rows, [("stage", "stage", ""), ("us", "µs/sentence", ".1f"), ("share", "% of predict", ".1f")]
            ),
        ]
    for size, got in result["batches"].items():
        rows = [
            {"part": k, "ms": v, "share": 100 * v / got["kernel_ms"]}
            for k, v in sorted(got["parts_ms"].items(), key=lambda kv: -kv[1])
        ]
        top = sorted(got["ops_ms"].items(), key=lambda kv: -kv[1])[:8]
        out += [
            f"batch {size}: {got['texts']} texts × {result['passes']} passes, kernels {got['kernel_ms']:.0f} ms of "
            f"{got['wall_ms']:.0f} ms wall-clock ({got['threads']} thread(s), {result['variant']})",
            format_table(rows, [("part", "part", ""), ("ms", "kernel ms", ".1f"), ("share", "% of kernels", ".1f")]),
            "top operators: " + ", ".join(f"{op} {100 * ms / got['kernel_ms']:.1f}%" for op, ms in top),
        ]
    return "\n\n".join(out)


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    texts = benchmark_texts("vader-movies", args.n or (300 if args.quick else 1000), None)
    if args.checkpoint:
        got = parser_graph(args.checkpoint, args.quantize, texts, args.threads, args.passes)
        variant = args.quantize or "fp32"
        result = {
            "machine": machine(),
            "checkpoint": args.checkpoint,
            "variant": f"parser graph, {variant}",
            "threads": args.threads,
            "passes": args.passes,
            "stages_us_per_sentence": {},
            "batches": {got["batch"]: got},
        }
        return finish(result, args, tables)
    model = ParserFreeModel.load(args.bundle, threads=args.threads, variant=args.variant)
    words = model.tokenize(texts)
    result: dict[str, Any] = {
        "machine": machine(),
        "bundle": args.bundle,
        "variant": args.variant,
        "threads": args.threads,
        "passes": args.passes,
        "stages_us_per_sentence": {},
        "batches": {},
    }
    for size in args.batches:
        chosen_texts = texts if size > 1 else texts[:: max(1, len(texts) // 100)]
        result["stages_us_per_sentence"][size] = stages(model, chosen_texts, size, args.passes)
    for size in args.batches:
        chosen = words if size > 1 else words[:: max(1, len(words) // 100)]
        feeds = [graph_inputs(model.vocab, w, model.max_len, None) for w in batches(chosen, size)]
        threads = SINGLE_TEXT_THREADS if size == 1 else args.threads  # the session predict runs the batch on
        got = profile(model.folder / model.manifest["models"][args.variant], feeds, threads, args.passes)
        result["batches"][size] = {**got, "texts": len(chosen), "threads": threads}
    return finish(result, args, tables)


if __name__ == "__main__":
    main()
