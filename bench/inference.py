"""Benchmark: parser-free inference against the parser-fed pipeline, on the same sentences and threads.

Every row turns the same raw texts (the vader-movies test split, topped up from dev to N = 1,000; 300 with
``--quick``) into model outputs, in batches of 32 sorted by word count (as ``ParserFreeModel.predict``
batches a call), and one text at a time on an even sample of them (500; 100 with ``--quick``), with
PyTorch and onnxruntime limited to the same intra-op threads (2 by default):

- anchors: the spaCy tokenizer alone and the spaCy parser alone (tok2vec + parser, no model);
- parser-fed end-to-end: spaCy parse → tree distances → the parser-fed model, in PyTorch (the reference
  every ratio is taken against) and in onnxruntime when a parser-fed bundle is given;
- parser-free: tokenizer → the parser-free model, in PyTorch (source = predicted) and in onnxruntime
  (fp32 ``model.onnx``, the optimised graph and the int8 graph, when the bundle has them).

Reported per row and batch size: sentences/s, words/s, latency p50/p95 per call and the speed ratio to the
fastest parser-fed pipeline at the same batch size (per-call rows, PyTorch or onnxruntime; at batch 32
also spaCy streamed with its best ``n_process`` × ``batch_size``, bench/lib/spacy_tuning.py); then the graph
alone against the machine's limit (bench/lib/attainable.py: the large-GEMM rate measured in the same run;
bench/lib/flops.py: FLOPs per word) and the levers tried on it (bench/lib/graph_levers.py), next to the ``no_syntax`` graph of the same
size and run; then the goals (bench/lib/inference_goals.py: parser-free ORT ≥10× parser-fed end to end at batch 32 and at batch 1, int8
counting only when it loses ≤ 0.3 test points; the parser-free graph ≥ 0.85× the sentences/s of the
no_syntax graph; the fp32 graph at ≥ 35 % of the attainable rate at batch 32; fp32 parity ≤ 1e-4 from the
bundle's export check; ORT ≥1.5× PyTorch on the same model). With ``--repeats`` > 1 each row keeps its
fastest pass. Every result records the CPU's vector flags and machine type (AVX2 / AVX-512 / VNNI), the
threads and the runtime's session settings. Models default to the main job's sentiment task
(``parserfree run``: runs/main/sentiment/...).

    python -m bench.inference [--bundle B --parser-fed F --no-syntax N] [--threads 2] [--spinning] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from parserfree.comparison.pipelines import (
    ModelSource,
    parser_fed_pipeline,
    resolve_model,
    tokenizer_pipeline,
    torch_outputs,
)
from parserfree.core.checkpoints import TrainedModel, load_trained
from parserfree.core.parse import DEFAULT_MODEL
from parserfree.distill.teacher import SpacyTeacher
from parserfree.encoder.text import normalise_text
from parserfree.export.runtime import SINGLE_TEXT_THREADS, SPINNING, ParserFreeModel
from parserfree.export.timing import describe_machine, machine

from bench.lib.attainable import attainable_rates
from bench.lib.common import DEFAULT_RUN, benchmark_texts, parse, script_arguments, write_record
from bench.lib.flops import bundle_shape, flops_per_word
from bench.lib.graph_levers import graph_levers
from bench.lib.inference_goals import (
    REFERENCE,
    add_reference,
    describe_levers,
    goals,
    parity_goal,
    tables,
    variant_accuracy,
)
from bench.lib.rows import measure
from bench.lib.spacy_tuning import tuned_stream


def parser_free_torch(trained: TrainedModel, tokenize: Callable[[Sequence[str]], list[list[str]]]):
    """Tokenizer → the parser-free checkpoint in PyTorch with its own predicted distances."""

    def run(texts):
        words = tokenize(texts)
        return torch_outputs(trained, words, None, "predicted"), words, None, None

    return run


def no_syntax_model(args: argparse.Namespace) -> ParserFreeModel | None:
    """The no_syntax bundle of the same run (``--no-syntax``, default runs/main/sentiment/bundle_no_syntax),
    or None when there is none (the goal against it is then not measured)."""
    path = Path(args.no_syntax) if args.no_syntax else DEFAULT_RUN / "bundle_no_syntax"
    if not path.exists():
        if args.no_syntax:
            sys.exit(f"bench.inference: no no_syntax bundle at {path}")
        return None
    model = ParserFreeModel.load(path, threads=args.threads, spinning=args.spinning)
    if model.recipe != "no_syntax":
        sys.exit(f"bench.inference: {path} is a {model.recipe} bundle, not no_syntax")
    return model


def find_models(args: argparse.Namespace) -> tuple[Path, Path]:
    """The parser-free bundle and the parser-fed model (bundle or run), or exit with what to run first."""
    bundle = Path(args.bundle or DEFAULT_RUN / "bundle")
    fed = Path(args.parser_fed) if args.parser_fed else DEFAULT_RUN / "bundle_parser_fed_twin"
    if not args.parser_fed and not fed.exists():
        fed = DEFAULT_RUN / "parser_fed_twin"
    missing = [
        f"{what} at {path}"
        for what, path in (("no parser-free bundle", bundle), ("no parser-fed bundle or run", fed))
        if not path.exists()
    ]
    if missing:
        sys.exit(
            "bench.inference: " + "; ".join(missing) + ".\n  Run the main job first (`parserfree run`, which "
            "writes runs/main/sentiment/{bundle,bundle_parser_fed_twin,parser_free}), or pass --bundle and --parser-fed "
            "(e.g. from `parserfree train` + `parserfree export --optimize --quantize int8`)."
        )
    return bundle, fed


def pipelines(args: argparse.Namespace) -> tuple[dict[str, tuple[str, Callable]], dict, dict]:
    """name → (runtime, pipeline) for every row this machine can run, where each model came from, and the
    models themselves (``free``: the fp32 ParserFreeModel, ``fed``: the parser-fed ModelSource, ``spacy``)."""
    bundle_path, fed_path = find_models(args)
    free = resolve_model(bundle_path, args.threads, args.spinning)
    fed = resolve_model(fed_path, args.threads, args.spinning)
    if free.recipe != "parser_free" or free.bundle is None:
        sys.exit(f"bench.inference: {bundle_path} is not a parser-free bundle (it is {free.recipe})")
    if not fed.row.needs_parser_at_inference:
        sys.exit(
            f"bench.inference: {fed_path} is not a parser-fed bundle or run (it is {fed.recipe}, which needs no parser)"
        )
    free_ckpt = load_trained(args.checkpoint) if args.checkpoint else free.trained
    teacher = SpacyTeacher(free.bundle.manifest["tokenizer"].get("spacy_model", DEFAULT_MODEL))
    tokenize = free.bundle.tokenize

    rows: dict[str, tuple[str, Callable]] = {
        "spaCy tokenizer only": ("spaCy", lambda texts: (None, tokenize(texts), None, None)),
        "spaCy parse only": (
            "spaCy",
            lambda texts: (None, list(teacher.parse(map(normalise_text, texts))), None, None),
        ),
    }
    if fed.trained is not None:
        rows[REFERENCE] = ("PyTorch", parser_fed_pipeline(ModelSource(None, fed.trained, None), teacher))
    if fed.bundle is not None:
        rows["parser-fed end-to-end (ORT)"] = (
            "onnxruntime",
            parser_fed_pipeline(ModelSource(fed.bundle, None, None), teacher),
        )
    if REFERENCE not in rows:
        sys.exit(f"bench.inference: the parser-fed checkpoint of {fed_path} is missing (needed for the reference row)")
    if free_ckpt is not None:
        rows["parser-free PyTorch"] = ("PyTorch", parser_free_torch(free_ckpt, tokenize))
    names = {
        "default": "parser-free ORT fp32",
        "optimized": "parser-free ORT optimised",
        "int8": "parser-free ORT int8",
    }
    loaded = {}
    for variant, name in names.items():
        if variant in free.bundle.manifest.get("models", {}):
            loaded[variant] = ParserFreeModel.load(
                bundle_path, threads=args.threads, variant=variant, spinning=args.spinning
            )
            task_graph = tokenizer_pipeline(ModelSource(loaded[variant], None, None), tokenize, distances=False)
            rows[name] = ("onnxruntime", task_graph)
    sources = {
        "parser_free_bundle": str(bundle_path),
        "parser_fed": str(fed_path),
        "parser_free_checkpoint": str(free_ckpt.path) if free_ckpt is not None else None,
        "parser_free_manifest": {k: free.bundle.manifest.get(k) for k in ("recipe", "predictor_form", "max_len")},
        "encoder": {k: getattr(free_ckpt.encoder_config, k) for k in ("d_model", "n_layers", "n_heads", "d_ff")}
        if free_ckpt
        else None,
    }
    models = {"free": loaded["default"], "fed": fed, "spacy": teacher.model}
    return rows, sources, models


def arguments():
    parser = script_arguments(
        __file__, __doc__, threads=2, quick="300 texts, one pass (well under 3 minutes)", cache_dir=True
    )
    parser.add_argument("--bundle", help="parser-free bundle (default runs/main/sentiment/bundle)")
    parser.add_argument(
        "--parser-fed",
        help="parser-fed bundle or run folder (default runs/main/sentiment/bundle_parser_fed_twin, "
        "else runs/main/sentiment/parser_fed_twin)",
    )
    parser.add_argument(
        "--checkpoint", help="parser-free checkpoint for the PyTorch row (default: from the bundle's manifest)"
    )
    parser.add_argument(
        "--no-syntax", help="no_syntax bundle of the same size (default runs/main/sentiment/bundle_no_syntax)"
    )
    parser.add_argument(
        "--compare-bundle",
        help="another bundle of the same checkpoint (e.g. exported by an older commit): its graph is timed beside "
        "model.onnx as the variant 'compared'",
    )
    parser.add_argument("--dataset", default="vader-movies")
    parser.add_argument("--n", type=int, help="number of texts (default 1000, --quick 300)")
    parser.add_argument(
        "--spinning",
        action="store_true",
        default=SPINNING,
        help="idle onnxruntime threads spin, for every onnxruntime row and graph (the runtime's default: they "
        "sleep; spinning is the faster choice on a machine with nothing else to do)",
    )
    parser.add_argument("--repeats", type=int, help="passes per row, fastest kept (default 2, --quick 1)")
    parser.add_argument("--no-tuning", action="store_true", help="skip the tuned spaCy stream (n_process × batch_size)")
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    torch.set_num_threads(args.threads)

    rows, sources, models = pipelines(args)
    texts = benchmark_texts(args.dataset, args.n or (300 if args.quick else 1000), args.cache_dir)
    tokenized = rows["spaCy tokenizer only"][1](texts)[1]
    words = {t: len(w) for t, w in zip(texts, tokenized)}
    tokenized = sorted(tokenized, key=len)
    texts = sorted(texts, key=lambda t: words[t])  # by word count, as ParserFreeModel.predict batches a call
    every = max(1, len(texts) // (100 if args.quick else 500))
    single = texts[::every]  # batch 1: an even sample over the lengths
    repeats = args.repeats or (1 if args.quick else 2)
    load_before = os.getloadavg()[0]
    attainable = attainable_rates(args.threads, min_time=0.5 if args.quick else 1.0)
    measured = measure(rows, {32: texts, 1: single}, words, repeats)
    free, fed = models["free"], models["fed"]
    shape = bundle_shape(free.folder)
    levers = graph_levers(
        free,
        tokenized,
        shape,
        attainable,
        args.threads,
        max(repeats, 2),
        every,
        no_syntax_model(args),
        args.spinning,
        ParserFreeModel.load(args.compare_bundle, threads=args.threads) if args.compare_bundle else None,
    )
    # the machine's best during the run: measured again after the graph, the higher rate kept (a burst of load
    # elsewhere during one measurement must not inflate the share), and the shares recomputed against it
    attainable = best_of(attainable, attainable_rates(args.threads, min_time=0.5 if args.quick else 1.0))
    rescale_shares(levers, attainable)
    run_fed = (
        fed.bundle.run_words if fed.bundle is not None else lambda w, d: torch_outputs(fed.trained, w, d, "parser")
    )
    tuned = (
        None
        if args.no_tuning
        else tuned_stream(texts, models["spacy"], run_fed, (1, 2), (64, 256) if args.quick else (32, 128, 512))
    )
    references = add_reference(measured, tuned)
    accuracy = variant_accuracy(free.manifest)
    n_words = sum(words[t] for t in texts)
    result = {
        "machine": machine(),
        "threads": args.threads,
        "dataset": args.dataset,
        "n_texts": len(texts),
        "n_words": n_words,
        "n_texts_batch_1": len(single),
        "quick": args.quick,
        "load_average": [load_before, os.getloadavg()[0]],
        "models": sources,
        "rows": measured,
        "attainable_gflops": attainable["fp32"]["best"],
        "attainable_int8_gops": attainable["int8"]["best"],
        "attainable": attainable,
        "flops_per_word": {
            "shape": vars(shape),
            "mean_length": n_words / len(texts),
            **flops_per_word(shape, round(n_words / len(texts))),
        },
        "graph": levers,
        "parser_fed_tuning": tuned,
        "reference": references,
        "accuracy": accuracy,
        "parity": parity_goal(free.manifest),
        "session": {"threads": args.threads, "spinning": args.spinning, "single_text_threads": SINGLE_TEXT_THREADS},
        "goals": goals(measured, levers, accuracy),
    }

    print(describe_machine(result["machine"]))
    print(
        f"{len(texts)} {args.dataset} texts ({n_words:,} words; batch 1 on {len(single)} of them), "
        f"{args.threads} threads, encoder {sources['encoder']}"
    )
    if max(result["load_average"]) > 0.5:
        print(
            f"note: the machine was busy (load average {result['load_average'][0]:.1f} → "
            f"{result['load_average'][1]:.1f}); threaded PyTorch suffers most, so ratios to it are inflated"
        )
    print(tables(result))
    if tuned:
        print(
            "spaCy tuning (stream texts/s, cold / warm): "
            + "; ".join(
                f"{k}: {v['cold_texts_per_s']:.0f} / {v['warm_texts_per_s']:.0f}" for k, v in tuned["grid"].items()
            )
        )
    print(describe_levers(result))
    print(f"results: {write_record(result, args)}")
    return result


def best_of(a: dict, b: dict) -> dict:
    """Two ``attainable_rates`` results → per library and size the higher rate, and the best per number type."""
    out = {}
    for kind in a:
        out[kind] = {
            lib: {n: max(a[kind][lib][n], b[kind][lib][n]) for n in a[kind][lib]} for lib in a[kind] if lib != "best"
        }
        out[kind]["best"] = max(a[kind]["best"], b[kind]["best"])
    return out


def rescale_shares(levers: dict, attainable: dict) -> None:
    """Recompute every variant's ``peak_share`` against ``attainable``."""
    for batch in levers["batches"].values():
        for row in batch["variants"].values():
            row["peak_share"] = row["useful_gflops"] / attainable[row["attainable"]]["best"]


if __name__ == "__main__":
    main()
