"""The parser-free graph alone, against the machine's limit, and the levers tried on it (bench.inference's second half).

Everything here times ``session.run`` on prepared inputs (tokenising and featurising excluded), in
length-sorted batches, each configuration keeping its fastest of ``repeats`` interleaved passes:

- ``flop_rates``: achieved GFLOP/s of a graph — useful FLOPs (every sentence at its own length,
  bench/lib/flops.py) and executed FLOPs (at its batch's padded length) over the measured time — and the
  share of the attainable rate of the same number type;
- length-sorted batching (what ``ParserFreeModel.predict`` does) against batches in a shuffled order, fp32;
- ``session_sweep``: intra-op threads (1 and the benchmark's), spinning of idle threads on/off and the
  parallel execution mode, on the fp32 graph;
- ``fused_variant``: onnxruntime's transformer optimiser (``onnxruntime.transformers.optimizer``: layer
  norm, skip layer norm, bias GELU and attention fusion where the pattern allows) applied to ``model.onnx``,
  with its parity to the unfused graph; what it fused is reported;
- the attention-fused graph (bench/lib/attention_fusion.py: every biased attention block as one
  MultiHeadAttention node with the syntax bias as its attention_bias), with its parity;
- ``product_shapes``: the model's own dense products (B·T × d × 3d, d × d, d × f, f × d at the benchmark's
  mean batch) timed alone — what a perfect graph of this size could reach;
- with ``no_syntax`` (the ``no_syntax`` bundle of the same size and run), that graph on the same texts
  (its own vocabulary's inputs) in the same interleaved passes: every variant's ``vs_no_syntax`` is what
  the predictor and the syntax bias cost;
- with ``compared`` (another bundle of the same checkpoint, e.g. exported by an older commit), its graph on
  the same texts in the same passes, as the variant ``compared``: a change to the export measured against
  the graph it replaces;
- ``slimmed``: ``onnxslim`` applied to ``model.onnx`` (constant folding, shape and dead-node elimination,
  fewer nodes), with its parity — only where onnxslim is installed (``pip install onnxslim``; it is not a
  dependency of the project).
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from parserfree.export.graph_inputs import graph_inputs
from parserfree.export.runtime import SPINNING
from parserfree.export.session import make_session
from parserfree.export.timing import batches

from bench.lib.attainable import shape_rate
from bench.lib.attention_fusion import fuse_attention
from bench.lib.flops import ModelShape, executed_flops, useful_flops


def prepared(
    model, words: Sequence[Sequence[str]], size: int, by_length: bool = True
) -> tuple[list[dict], list[list[int]]]:
    """Graph inputs of ``words`` in batches of ``size``, sorted by word count as ``ParserFreeModel.predict``
    batches them (``by_length``; else in a fixed shuffled order), and the sentence lengths per batch."""
    kept = [list(w[: model.max_len]) for w in words if w]
    groups = batches(sorted(kept, key=len) if by_length else random.Random(0).sample(kept, len(kept)), size)
    return [graph_inputs(model.vocab, g, model.max_len, None) for g in groups], [[len(w) for w in g] for g in groups]


def paired_passes(
    sessions: dict[str, object],
    feeds: list[dict],
    passes: int,
    own_feeds: dict[str, list[dict]] | None = None,
    shuffle: bool = False,
    seed: int = 0,
) -> dict[str, list[float]]:
    """Seconds of every pass per session: after one warm-up run each, ``passes`` passes in which every session
    runs all its feeds once (``feeds``, or its entry of ``own_feeds``: another model's inputs for the same
    texts), in the sessions' order or, with ``shuffle``, a fresh random order per pass."""
    feeds_of = {name: (own_feeds or {}).get(name, feeds) for name in sessions}
    for name, session in sessions.items():
        session.run(None, feeds_of[name][0])
    rng = random.Random(seed)
    times: dict[str, list[float]] = {name: [] for name in sessions}
    for _ in range(passes):
        order = list(sessions)
        if shuffle:
            rng.shuffle(order)
        for name in order:
            start = time.perf_counter()
            for f in feeds_of[name]:
                sessions[name].run(None, f)
            times[name].append(time.perf_counter() - start)
    return times


def time_sessions(
    sessions: dict[str, object], feeds: list[dict], repeats: int, own_feeds: dict[str, list[dict]] | None = None
) -> dict[str, float]:
    """Fastest seconds per session over ``repeats`` interleaved passes (``paired_passes``)."""
    return {name: min(t) for name, t in paired_passes(sessions, feeds, repeats, own_feeds).items()}


def flop_rates(seconds: float, shape: ModelShape, lengths: list[list[int]], attainable: float) -> dict:
    """Achieved GFLOP/s (useful and executed) for ``seconds`` over these batches, and the useful share of
    ``attainable`` GFLOP/s."""
    useful = useful_flops(shape, [n for b in lengths for n in b])
    executed = executed_flops(shape, lengths)
    return {
        "seconds": seconds,
        "useful_gflops": useful / seconds / 1e9,
        "executed_gflops": executed / seconds / 1e9,
        "padding_overhead": executed / useful - 1.0,
        "peak_share": useful / seconds / 1e9 / attainable,
    }


def session_sweep(path: Path, feeds: list[dict], threads: int, repeats: int) -> dict[str, float]:
    """Seconds of the graph at ``path`` under each session setting."""
    settings = {
        f"{t} thread{'s' if t > 1 else ''}, spinning {'on' if s else 'off'}": dict(threads=t, spinning=s)
        for t in sorted({1, threads})
        for s in (True, False)
    }
    if threads > 1:
        settings[f"{threads} threads, parallel mode (2 inter-op)"] = dict(threads=threads, inter_op_threads=2)
    sessions = {name: make_session(path, **kw) for name, kw in settings.items()}
    return time_sessions(sessions, feeds, repeats)


def fused_variant(source: Path, target: Path, shape: ModelShape, n_heads: int) -> dict[str, int]:
    """Write onnxruntime's transformer-optimised copy of ``source`` to ``target``; returns what it fused."""
    import logging

    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    optimised = optimize_model(
        str(source), model_type="bert", num_heads=n_heads, hidden_size=shape.d_model, opt_level=0
    )
    optimised.save_model_to_file(str(target))
    return {k: v for k, v in optimised.get_fused_operator_statistics().items() if v}


def slimmed_variant(source: Path, target: Path) -> dict[str, int]:
    """Write ``onnxslim``'s copy of ``source`` to ``target``; returns the node counts before and after."""
    import onnx
    import onnxslim

    model = onnx.load(str(source))
    slim = onnxslim.slim(model)
    onnx.save(slim, str(target))
    return {"nodes_before": len(model.graph.node), "nodes_after": len(slim.graph.node)}


def max_difference(a, b, feeds: list[dict]) -> float:
    """Largest absolute difference of the task outputs of two sessions on ``feeds``."""
    return max(float(np.abs(a.run(None, f)[0] - b.run(None, f)[0]).max()) for f in feeds)


def product_shapes(shape: ModelShape, lengths: list[list[int]], threads: int) -> dict[str, float]:
    """GFLOP/s of the model's dense products alone at the benchmark's mean padded batch (M = B·T rows)."""
    m = int(np.mean([len(b) * max(b) for b in lengths]))
    d, f = shape.d_model, shape.d_ff
    return {f"{m}×{k}·{k}×{n}": shape_rate(m, k, n, threads) for k, n in ((d, 3 * d), (d, d), (d, f), (f, d))}


def graph_levers(
    model,
    words: list[list[str]],
    shape: ModelShape,
    attainable: dict,
    threads: int,
    repeats: int,
    single_every: int,
    no_syntax=None,
    spinning: bool = SPINNING,
    compared=None,
) -> dict:
    """The graph-alone half of the benchmark: rates and peak share per variant at batch 32 and 1, the
    session sweep, the fused and slimmed variants, the products alone and, with ``no_syntax`` (a
    ParserFreeModel of the no_syntax bundle), each variant's rate against that graph's."""
    folder = model.folder
    variants = {name: folder / file for name, file in model.manifest["models"].items()}
    out: dict = {"batches": {}}
    with tempfile.TemporaryDirectory() as tmp:
        slimmed = Path(tmp) / "model.slim.onnx"
        try:
            out["slimmed"] = slimmed_variant(variants["default"], slimmed)
            variants["slimmed"] = slimmed
        except ImportError:
            out["slimmed"] = {"error": "onnxslim is not installed (pip install onnxslim)"}
        fused = Path(tmp) / "model.fused.onnx"
        try:
            out["fused"] = {"fused_operators": fused_variant(variants["default"], fused, shape, n_heads=_heads(model))}
            variants["fused"] = fused
        except Exception as e:  # noqa: BLE001 — the optimiser is optional; say why it is missing
            out["fused"] = {"error": str(e).splitlines()[0][:200]}
        attention = Path(tmp) / "model.attention.onnx"
        out["attention_fused"] = {"blocks": fuse_attention(variants["default"], attention, _heads(model))}
        variants["attention_fused"] = attention
        for size in (32, 1):
            chosen = words if size > 1 else words[::single_every]
            feeds, lengths = prepared(model, chosen, size)
            sessions = {name: make_session(path, threads, spinning=spinning) for name, path in variants.items()}
            own = {}  # other bundles' graphs, each on its own vocabulary's inputs for the same texts
            for name, other in (("no_syntax", no_syntax), ("compared", compared)):
                if other is not None:
                    path = other.folder / other.manifest["models"]["default"]
                    sessions[name] = make_session(path, threads, spinning=spinning)
                    own[name] = prepared(other, chosen, size)[0]
            seconds = time_sessions(sessions, feeds, repeats, own)
            baseline = seconds.pop("no_syntax", None)
            rows = {}
            for name, s in seconds.items():
                kind = "int8" if name == "int8" else "fp32"  # "compared": the same model, so the same FLOPs
                rows[name] = {
                    **flop_rates(s, shape, lengths, attainable[kind]["best"]),
                    "sentences_per_s": len(chosen) / s,
                    "attainable": kind,
                }
                if baseline is not None:
                    rows[name]["vs_no_syntax"] = baseline / s
            for name in ("fused", "attention_fused", "slimmed"):
                if name in sessions:
                    out[name][f"max_diff_batch_{size}"] = max_difference(sessions["default"], sessions[name], feeds[:8])
            out["batches"][size] = {
                "variants": rows,
                "no_syntax_sentences_per_s": len(chosen) / baseline if baseline is not None else None,
                "session_settings": {
                    k: len(chosen) / v for k, v in session_sweep(variants["default"], feeds, threads, repeats).items()
                },
            }
            if size == 32:
                out["products_alone_gflops"] = product_shapes(shape, lengths, threads)
                shuffled, shuffled_lengths = prepared(model, chosen, size, by_length=False)
                s = time_sessions({"default": sessions["default"]}, shuffled, repeats)["default"]
                rows["default, unsorted"] = {
                    **flop_rates(s, shape, shuffled_lengths, attainable["fp32"]["best"]),
                    "sentences_per_s": len(chosen) / s,
                    "attainable": "fp32",
                }
    return out


def _heads(model) -> int:
    import yaml

    return int(yaml.safe_load((model.folder / model.manifest["config"]).read_text())["encoder"]["n_heads"])
