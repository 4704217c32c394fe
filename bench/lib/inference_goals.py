"""The inference benchmark's goals and tables: its rows against the fastest parser-fed pipeline, the goals of
docs/design.md §8, each reached or not, and the text a run prints (``python -m bench.inference``).
"""

from __future__ import annotations

from typing import Any

from bench.lib.common import format_table

REFERENCE = "parser-fed end-to-end"
GOAL_END_TO_END, GOAL_ORT_OVER_TORCH, GOAL_PEAK_SHARE, GOAL_VS_NO_SYNTAX = 10.0, 1.5, 0.35, 0.85
PARITY_TOLERANCE = 1e-4  # fp32 task outputs, graph against PyTorch (the export's parity check)
MAX_INT8_LOSS = 0.3  # test-split points an int8 graph may lose and still be the default


def add_reference(rows: list[dict], tuned: dict | None) -> dict[int, str]:
    """Set every row's ``vs_parser_fed``: the speed ratio to the fastest parser-fed pipeline of its batch
    size (the per-call rows, PyTorch or onnxruntime, and at batch 32 the tuned spaCy stream when faster);
    returns which reference each batch size used."""
    used = {}
    for size in sorted({r["batch"] for r in rows}):
        at = [r for r in rows if r["batch"] == size]
        fed = max((r for r in at if r["model"].startswith(REFERENCE)), key=lambda r: r["sentences_per_s"])
        rate, used[size] = fed["sentences_per_s"], fed["model"]
        if size > 1 and tuned and tuned["best_texts_per_s"] > rate:
            rate, used[size] = tuned["best_texts_per_s"], f"parser-fed stream, tuned spaCy ({tuned['best']})"
        for r in at:
            r["vs_parser_fed"] = r["sentences_per_s"] / rate
    return used


def variant_accuracy(manifest: dict) -> dict:
    """Test-split metric per variant from the bundle's evaluation, and int8's difference to fp32 in points;
    ``int8_allowed``: int8 loses at most MAX_INT8_LOSS points (else it may not be the default)."""
    variants = manifest.get("evaluation", {}).get("variants", {})
    out = {
        "source": manifest.get("evaluation", {}).get("source"),
        "n_examples": manifest.get("evaluation", {}).get("n_examples"),
        "metric": {k: v["metric"] for k, v in variants.items()},
    }
    if "int8" in variants and "default" in variants:
        out["int8_delta_points"] = variants["int8"]["metric"] - variants["default"]["metric"]
        # the metrics are rounded percentages: compare their difference rounded too (39.8 − 40.1 is
        # −0.30000000000000426 in floating point, and loses 0.3 points, not more)
        out["int8_allowed"] = round(out["int8_delta_points"], 9) >= -MAX_INT8_LOSS
    return out


def goals(rows: list[dict], levers: dict | None = None, accuracy: dict | None = None) -> dict:
    """The speed goals of docs/design.md §8, per batch size, from the measured rows; with ``levers`` also
    the graph's share of the attainable matmul rate (fp32 model.onnx against fp32 GEMM; int8 against int8).
    The end-to-end goal takes the fastest ORT variant that may be the default (int8 only when
    ``accuracy`` says it loses at most MAX_INT8_LOSS points on the test split)."""
    out = {}
    for size in sorted({r["batch"] for r in rows}):
        at = {r["model"]: r for r in rows if r["batch"] == size}
        ort = {
            k: v
            for k, v in at.items()
            if k.startswith("parser-free ORT")
            and (k != "parser-free ORT int8" or (accuracy or {}).get("int8_allowed", False))
        }
        if not ort:
            continue
        fastest = max(ort, key=lambda k: ort[k]["sentences_per_s"])
        entry = {
            "fastest_ort": fastest,
            "end_to_end_speedup": ort[fastest]["vs_parser_fed"],
            "fp32_end_to_end_speedup": at.get("parser-free ORT fp32", {}).get("vs_parser_fed"),
        }
        torch_row = at.get("parser-free PyTorch")
        if torch_row:
            entry["ort_over_pytorch"] = {
                k.removeprefix("parser-free ORT "): v["sentences_per_s"] / torch_row["sentences_per_s"]
                for k, v in ort.items()
            }
        graph = (levers or {}).get("batches", {}).get(size, {}).get("variants", {})
        if "default" in graph:
            entry["peak_share"] = graph["default"]["peak_share"]
            entry["achieved_gflops"] = graph["default"]["useful_gflops"]
            if "vs_no_syntax" in graph["default"]:
                entry["vs_no_syntax"] = {k: v["vs_no_syntax"] for k, v in graph.items() if "vs_no_syntax" in v}
        if "int8" in graph:
            entry["int8_peak_share"] = graph["int8"]["peak_share"]
        out[f"batch_{size}"] = entry
    return out


def summary(goal: dict) -> list[str]:
    """Human-readable lines: each goal, reached or not."""
    lines = []
    for key, g in goal.items():
        mark = "reached" if g["end_to_end_speedup"] >= GOAL_END_TO_END else "NOT reached"
        lines.append(
            f"{key.replace('_', ' ')}: parser-free ORT ({g['fastest_ort'].removeprefix('parser-free ORT ')}) is "
            f"{g['end_to_end_speedup']:.1f}× parser-fed end-to-end (goal ≥{GOAL_END_TO_END:.0f}×: {mark})"
        )
        if "ort_over_pytorch" in g:
            parts = ", ".join(f"{k} {v:.2f}×" for k, v in g["ort_over_pytorch"].items())
            fp32 = g["ort_over_pytorch"].get("fp32", 0.0)
            lines.append(
                f"  ORT over PyTorch on the same model: {parts} (goal fp32 ≥{GOAL_ORT_OVER_TORCH}×: "
                f"{'reached' if fp32 >= GOAL_ORT_OVER_TORCH else 'NOT reached'})"
            )
        if "vs_no_syntax" in g:
            fp32 = g["vs_no_syntax"]["default"]
            lines.append(
                f"  parser-free graph vs the no_syntax graph of the same size: fp32 {fp32:.2f}×"
                + (f", int8 {g['vs_no_syntax']['int8']:.2f}×" if "int8" in g["vs_no_syntax"] else "")
                + f" (goal ≥{GOAL_VS_NO_SYNTAX}×: {'reached' if fp32 >= GOAL_VS_NO_SYNTAX else 'NOT reached'})"
            )
        if "peak_share" in g:
            lines.append(
                f"  fp32 graph: {g['achieved_gflops']:.1f} GFLOP/s = {100 * g['peak_share']:.1f}% of the attainable "
                f"fp32 matmul rate (goal ≥{100 * GOAL_PEAK_SHARE:.0f}%: "
                f"{'reached' if g['peak_share'] >= GOAL_PEAK_SHARE else 'NOT reached'})"
                + (f"; int8 graph {100 * g['int8_peak_share']:.1f}% of int8" if "int8_peak_share" in g else "")
            )
    return lines


def parity_goal(manifest: dict) -> dict:
    """The outputs-unchanged goal from the bundle's own checks: fp32 graph vs PyTorch (the export's parity
    run) and int8's test-split difference in points (its evaluation)."""
    parity = manifest.get("parity", {}).get("default", {})
    diff = parity.get("task_output_max_diff")
    return {
        "source": parity.get("source"),
        "fp32_max_diff": diff,
        "fp32_within": diff is not None and diff <= PARITY_TOLERANCE,
        "int8_delta_points": variant_accuracy(manifest).get("int8_delta_points"),
    }


def tables(result: dict[str, Any]) -> str:
    """What a run says: every row against the fastest parser-fed pipeline, the graph alone against the
    machine's limit and the no_syntax graph, and the goals, each reached or not."""
    rows = format_table(
        result["rows"],
        [
            ("model", "model", ""),
            ("runtime", "runtime", ""),
            ("batch", "batch", "d"),
            ("sentences_per_s", "sentences/s", ",.0f"),
            ("words_per_s", "words/s", ",.0f"),
            ("latency_ms_p50", "p50 ms", ".2f"),
            ("latency_ms_p95", "p95 ms", ".2f"),
            ("vs_parser_fed", "× parser-fed", ".2f"),
        ],
    )
    reference = "reference (fastest parser-fed): " + "; ".join(
        f"batch {k}: {v}" for k, v in result["reference"].items()
    )
    lines = [
        f"{result['n_texts']} {result['dataset']} texts ({result['n_words']:,} words; batch 1 on "
        f"{result['n_texts_batch_1']} of them), {result['threads']} threads, "
        f"{'spinning' if result['session']['spinning'] else 'sleeping'} idle threads",
        "",
        rows,
        "",
        reference,
        "",
        describe_graph(result),
        "",
    ]
    accuracy = result["accuracy"]
    if "int8_delta_points" in accuracy:
        lines.append(
            f"- int8 on the {accuracy['source']} ({accuracy['n_examples']} sentences): {accuracy['metric']['int8']:.1f} "
            f"vs fp32 {accuracy['metric']['default']:.1f} ({accuracy['int8_delta_points']:+.1f} points; may be the "
            f"default: {'yes' if accuracy['int8_allowed'] else 'no, loses more than ' + str(MAX_INT8_LOSS)})"
        )
    lines += [f"- {line.strip()}" for line in summary(result["goals"])]
    p = result["parity"]
    lines.append(
        f"- parity (the export's check, {p['source']}): fp32 task outputs within {p['fp32_max_diff']:.1e} "
        f"(goal ≤ {PARITY_TOLERANCE:.0e}: {'reached' if p['fp32_within'] else 'NOT reached'}); int8 "
        + (f"{p['int8_delta_points']:+.1f} test points" if p.get("int8_delta_points") is not None else "not exported")
    )
    return "\n".join(lines)


def describe_graph(result: dict) -> str:
    """The graph alone: the attainable rates, FLOPs per word and each variant's rate, share of the attainable
    rate and ratio to the no_syntax graph, per batch size."""
    a, f = result["attainable"], result["flops_per_word"]
    lines = [
        f"attainable (large GEMM, {result['threads']} threads): fp32 {a['fp32']['best']:.1f} GFLOP/s "
        f"(torch.mm {max(a['fp32']['torch.mm'].values()):.1f}, onnxruntime MatMul "
        f"{max(a['fp32']['onnxruntime MatMul'].values()):.1f}); int8 onnxruntime MatMulInteger {a['int8']['best']:.1f} GOP/s; "
        f"FLOPs per word at the mean length {f['mean_length']:.1f}: {f['total'] / 1e6:.3f} M (dense {f['dense'] / 1e6:.3f}, "
        f"attention {f['attention'] / 1e6:.3f}, predictor {f['predictor'] / 1e6:.3f}, labels {f.get('labels', 0.0) / 1e6:.3f})",
    ]
    for size, b in result["graph"]["batches"].items():
        rows = [{"variant": k, **v} for k, v in b["variants"].items()]
        no_syntax = b.get("no_syntax_sentences_per_s")
        lines += [
            "",
            f"graph alone, batch {size}"
            + (f" (the no_syntax graph of the same size: {no_syntax:,.0f} sentences/s)" if no_syntax else "")
            + ":",
            "",
            format_table(
                rows,
                [
                    ("variant", "variant", ""),
                    ("sentences_per_s", "sentences/s", ",.0f"),
                    ("useful_gflops", "GFLOP/s", ".1f"),
                    ("executed_gflops", "executed GFLOP/s", ".1f"),
                    ("padding_overhead", "padding", ".1%"),
                    ("peak_share", "share of attainable", ".1%"),
                    ("attainable", "of", ""),
                    ("vs_no_syntax", "× no_syntax", ".2f"),
                ],
            ),
        ]
    return "\n".join(lines)


def describe_levers(result: dict) -> str:
    """The levers' details as the run printed them: session settings, fused, slimmed and attention-fused
    variants, the dense products alone."""
    lines = [
        f"session settings at batch {size} (fp32, sentences/s): "
        + "; ".join(f"{k} {v:,.0f}" for k, v in b["session_settings"].items())
        for size, b in result["graph"]["batches"].items()
    ]
    lines.append(f"transformer optimiser (fused): {result['graph'].get('fused', {})}")
    lines.append(f"onnxslim (slimmed): {result['graph'].get('slimmed', {})}")
    lines.append(f"attention fusion (attention_fused): {result['graph'].get('attention_fused', {})}")
    lines.append(
        "dense products alone (GFLOP/s): "
        + ", ".join(f"{k} {v:.1f}" for k, v in result["graph"].get("products_alone_gflops", {}).items())
    )
    return "\n".join(lines)
