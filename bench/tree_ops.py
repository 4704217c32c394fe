"""Benchmark: the predictor's in-graph tree operations against the encoder they serve, at T = 32, 128, 512.

For one sentence of T words (batch 1, as a single request), on one and two threads: the default-size
encoder (d 128, 4 layers, 4 heads, ff 512; all layers, the syntax bias included) and the tree
operations of the `heads` predictor — cycle breaking of the argmax heads plus the all-pairs distances by
pointer jumping (``predictor.tree_ops.break_cycles`` and ``distances_from_heads``) — next to
the path-doubling matrix products they replace (``distances_from_parents`` on one-hot parents, still
used for the soft variant and the straight-through gradient). The graph always runs the steps of its
``max_len`` (512 here: 9 doubling steps), whatever T is. PyTorch eager, and onnxruntime on the same
modules exported as the bundle's graph is (opset 17, TorchScript exporter). Each time is the fastest of
three repeats (the machine may be shared).

    python -m bench.tree_ops [--quick]
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import torch
from torch import nn

from parserfree.encoder import EncoderConfig, SyntaxEncoder
from parserfree.export.timing import machine, seconds_per_call
from parserfree.predictor.tree_ops import (
    break_cycles,
    distances_from_heads,
    distances_from_parents,
    parents_from_heads,
    steps_for_length,
)

from bench.lib.common import finish, format_table, parse, script_arguments
from bench.lib.random_trees import random_tree

MAX_LEN = 512
LENGTHS = (32, 128, 512)


class Encoder(nn.Module):
    """The whole encoder on given distances: lower layers, then the biased upper layers."""

    def __init__(self) -> None:
        super().__init__()
        config = EncoderConfig(vocab_size=30000, dropout=0.0, max_len=MAX_LEN)  # the default size, 4 × 128
        self.encoder = SyntaxEncoder(config)

    def forward(self, word_ids, feature_ids, mask, distances):
        h_0 = self.encoder.embed(word_ids, feature_ids)
        return self.encoder.upper(h_0, self.encoder.lower_from(h_0, mask), mask, distances)


class TreeOps(nn.Module):
    """Arc scores → argmax heads → cycle breaking → distances by pointer jumping (what the graph runs)."""

    def forward(self, scores, mask):
        steps = steps_for_length(MAX_LEN)
        heads = torch.where(mask, scores.argmax(dim=-1), torch.full_like(mask, -1, dtype=torch.long))
        return distances_from_heads(break_cycles(scores, heads, mask, steps), mask, steps)


class MatrixProducts(nn.Module):
    """The previous in-graph distances: one-hot parents of the argmax heads → path-doubling products."""

    def forward(self, scores, mask):
        heads = torch.where(mask, scores.argmax(dim=-1), torch.full_like(mask, -1, dtype=torch.long))
        return distances_from_parents(parents_from_heads(heads), mask, steps_for_length(MAX_LEN))


def inputs(t: int, rng: np.random.Generator) -> dict[str, torch.Tensor]:
    """One sentence of t words: ids, features, a parse-like tree's distances and arc scores whose argmax
    is mostly that tree, with some noise (so cycles occur, as in a predictor's output)."""
    heads = random_tree(t, rng)
    mask = torch.ones(1, t, dtype=torch.bool)
    scores = torch.from_numpy(rng.normal(size=(1, t, t)).astype(np.float32))
    scores[0, torch.arange(t), torch.from_numpy(heads)] += 2.5
    return {
        "word_ids": torch.from_numpy(rng.integers(2, 30000, (1, t))),
        "feature_ids": torch.from_numpy(rng.integers(1, 4096, (1, t, 3))),
        "mask": mask,
        "distances": distances_from_heads(torch.from_numpy(heads).unsqueeze(0), mask, steps_for_length(MAX_LEN)),
        "scores": scores,
    }


ARGS = {
    "encoder": ("word_ids", "feature_ids", "mask", "distances"),
    "tree_ops": ("scores", "mask"),
    "matrix_products": ("scores", "mask"),
}
AXES = {
    "word_ids": {0: "b", 1: "t"},
    "feature_ids": {0: "b", 1: "t"},
    "mask": {0: "b", 1: "t"},
    "distances": {0: "b", 1: "t", 2: "t"},
    "scores": {0: "b", 1: "t", 2: "t"},
    "out": {0: "b", 1: "t"},
}


def onnx_sessions(modules: dict[str, nn.Module], example: dict[str, torch.Tensor], folder: Path, threads: int) -> dict:
    """Each module exported (trace at a small shape, dynamic axes) and loaded in onnxruntime."""
    sessions = {}
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    for name, module in modules.items():
        path = folder / f"{name}.onnx"
        if not path.exists():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(
                    module,
                    tuple(example[a] for a in ARGS[name]),
                    str(path),
                    dynamo=False,
                    opset_version=17,
                    input_names=list(ARGS[name]),
                    output_names=["out"],
                    dynamic_axes={a: AXES[a] for a in (*ARGS[name], "out")},
                )
        sessions[name] = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return sessions


def fastest(fn, min_time: float, repeats: int = 3) -> float:
    """Fastest mean milliseconds per call of ``fn()`` over ``repeats`` timed runs."""
    return 1e3 * min(seconds_per_call(lambda _: fn(), [None], min_time) for _ in range(repeats))


def arguments():
    return script_arguments(__file__, __doc__, quick="shorter timing")


def tables(result: dict[str, Any]) -> str:
    """One table per runtime: the encoder, the tree ops and the old products by threads and T."""
    out = []
    for runtime, label in (("", "PyTorch"), ("_ort", "onnxruntime")):
        out.append(f"**{label}**")
        out.append(
            format_table(
                result["rows"],
                [
                    ("threads", "threads", "d"),
                    ("T", "T", "d"),
                    (f"encoder{runtime}_ms", "encoder ms", ".2f"),
                    (f"tree_ops{runtime}_ms", "tree ops ms", ".2f"),
                    (f"tree_ops{runtime}_pct", "% of encoder", ".1f"),
                    (f"matrix_products{runtime}_ms", "old products ms", ".2f"),
                    (f"matrix_products{runtime}_pct", "% of encoder", ".1f"),
                ],
            )
        )
    return "\n\n".join(out)


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    min_time = 0.2 if args.quick else 1.0
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    modules = {"encoder": Encoder().eval(), "tree_ops": TreeOps(), "matrix_products": MatrixProducts()}
    cases = {t: inputs(t, rng) for t in LENGTHS}
    rows = []
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
        for threads in (1, 2):
            torch.set_num_threads(threads)
            sessions = onnx_sessions(modules, inputs(8, rng), Path(tmp), threads)
            for t, case in cases.items():
                row = {"threads": threads, "T": t}
                for name, module in modules.items():
                    args_ = tuple(case[a] for a in ARGS[name])
                    feeds = {a: case[a].numpy() for a in ARGS[name]}
                    row[f"{name}_ms"] = fastest(lambda: module(*args_), min_time)  # noqa: B023 (called within the iteration)
                    row[f"{name}_ort_ms"] = fastest(lambda: sessions[name].run(None, feeds), min_time)  # noqa: B023 (called within the iteration)
                for runtime in ("", "_ort"):
                    row[f"tree_ops{runtime}_pct"] = 100 * row[f"tree_ops{runtime}_ms"] / row[f"encoder{runtime}_ms"]
                    row[f"matrix_products{runtime}_pct"] = (
                        100 * row[f"matrix_products{runtime}_ms"] / row[f"encoder{runtime}_ms"]
                    )
                rows.append(row)
    result = {"machine": machine(), "max_len": MAX_LEN, "batch": 1, "rows": rows}
    return finish(result, args, tables)


if __name__ == "__main__":
    main()
