"""What the predictor and the syntax bias cost, as the encoder grows: parser-free graph vs no_syntax graph.

The parser-free graph runs everything the no_syntax graph of the same size runs, plus the predictor (the
unbiased pass over layers 1..k, the arc scorer, cycle breaking, the tree distances and the label scorer)
and the syntax bias. Most of that added work grows with the sentence (T² pairs, log-depth pointer jumps)
and with the predictor's own widths, not with the encoder's width, so its share falls as the encoder
grows. This bench measures that curve: for each encoder width (3 layers, 4 heads, ff 4·d, the main job's
predictor settings: k = 1, all layers biased, arc width 64, label scorer 32 wide over spaCy's 45 labels),
one model with fresh weights exported as parser-free, parser-free without its label scorer, parser-free
in one pass (``bias_all_layers: false``: layers 2..N biased, the predictor reading layer 1's output of the
same pass — no second pass over layer 1) and no_syntax, and each graph alone timed on the same texts (the main job's bundle tokenizer and
vocabulary; length-sorted batches of 32 and single texts; interleaved passes, fastest kept). Fresh
weights give the graphs the shapes and node counts of a trained model; only the number of argmax cycles
(a few rows of work) differs from a trained predictor's.

    python -m bench.predictor_cost [--widths 64 128 256] [--threads 2] [--quick]
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from typing import Any

import onnx
import torch

from parserfree.encoder import BiasConfig, EncoderConfig
from parserfree.export.graph_inputs import graph_inputs
from parserfree.export.onnx_graph import export_onnx, graph_module
from parserfree.export.runtime import SPINNING, ParserFreeModel
from parserfree.export.session import make_session
from parserfree.export.timing import batches, machine
from parserfree.predictor.config import PredictorConfig
from parserfree.predictor.syntax_model import SyntaxModel

from bench.lib.common import DEFAULT_RUN, benchmark_texts, finish, format_table, parse, script_arguments
from bench.lib.graph_levers import time_sessions

GRAPHS = ("parser_free", "parser_free, no labels", "parser_free, one pass", "no_syntax")


def model_of(
    width: int, vocab_size: int, buckets: int, dep_labels: tuple[str, ...], labelled: bool, one_pass: bool = False
) -> SyntaxModel:
    """A fresh model of the main job's shape at encoder width ``width`` (eval mode, no gradients); ``one_pass``:
    layers 2..N biased instead of all N after a first pass over layer 1."""
    encoder = EncoderConfig(
        vocab_size=vocab_size,
        n_feature_buckets=buckets,
        d_model=width,
        n_heads=4,
        n_layers=3,
        d_ff=4 * width,
        max_len=256,
        predictor_layer=1,
        bias_all_layers=not one_pass,
        bias=BiasConfig(),
    )
    predictor = PredictorConfig(arc_dim=64, label_dim=32 if labelled else 0)
    model = SyntaxModel(encoder, predictor, "binary", 2, seed=0, dep_labels=dep_labels if labelled else ())
    return model.eval().requires_grad_(False)


def arguments():
    parser = script_arguments(__file__, __doc__, threads=2, quick="300 texts")
    parser.add_argument("--bundle", default=str(DEFAULT_RUN / "bundle"), help="tokenizer, vocabulary and labels")
    parser.add_argument("--widths", type=int, nargs="*", default=[64, 128, 256])
    parser.add_argument("--n", type=int, help="texts (default 1000, --quick 300)")
    parser.add_argument("--repeats", type=int, default=3)
    return parser


def tables(result: dict[str, Any]) -> str:
    return f"{result['threads']} threads, {result['n_texts']} texts\n\n" + format_table(
        result["rows"],
        [
            ("d_model", "d_model", "d"),
            ("batch", "batch", "d"),
            ("parser_free sentences/s", "parser-free", ",.0f"),
            ("parser_free, no labels sentences/s", "parser-free, no labels", ",.0f"),
            ("no_syntax sentences/s", "no_syntax", ",.0f"),
            ("vs_no_syntax", "parser-free × no_syntax", ".2f"),
            ("no_labels_vs_no_syntax", "no labels × no_syntax", ".2f"),
            ("one_pass_vs_no_syntax", "one pass × no_syntax", ".2f"),
        ],
    )


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)

    bundle = ParserFreeModel.load(args.bundle, threads=args.threads)
    labels = bundle.dependency_labels or tuple(f"label_{k}" for k in range(45))
    words = sorted(
        (
            w
            for w in bundle.tokenize(benchmark_texts("vader-movies", args.n or (300 if args.quick else 1000), None))
            if w
        ),
        key=len,
    )
    sets = {32: words, 1: words[:: max(1, len(words) // 100)]}
    feeds = {
        size: [graph_inputs(bundle.vocab, g, bundle.max_len) for g in batches(chosen, size)]
        for size, chosen in sets.items()
    }
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for width in args.widths:
            paths = {}
            for name in GRAPHS:
                model = model_of(
                    width,
                    len(bundle.vocab),
                    bundle.vocab.n_feature_buckets,
                    labels,
                    labelled="no labels" not in name,
                    one_pass="one pass" in name,
                )
                path = Path(tmp) / f"{width}-{name.replace(', ', '-').replace(' ', '_')}.onnx"
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    export_onnx(graph_module(model, name.split(",")[0]), feeds[32][2], path)
                paths[name] = path
            nodes = {name: len(onnx.load(str(p)).graph.node) for name, p in paths.items()}
            for size, chosen in sets.items():
                sessions = {name: make_session(p, args.threads, spinning=SPINNING) for name, p in paths.items()}
                seconds = time_sessions(sessions, feeds[size], args.repeats)
                rate = {name: len(chosen) / s for name, s in seconds.items()}
                rows.append(
                    {
                        "d_model": width,
                        "batch": size,
                        **{f"{name} sentences/s": rate[name] for name in GRAPHS},
                        "vs_no_syntax": rate["parser_free"] / rate["no_syntax"],
                        "no_labels_vs_no_syntax": rate["parser_free, no labels"] / rate["no_syntax"],
                        "one_pass_vs_no_syntax": rate["parser_free, one pass"] / rate["no_syntax"],
                        "nodes": nodes,
                    }
                )
            print(f"d_model {width}: done ({', '.join(f'{k} {v} nodes' for k, v in nodes.items())})", flush=True)
    result = {"machine": machine(), "threads": args.threads, "n_texts": len(words), "rows": rows}
    return finish(result, args, tables)


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()
