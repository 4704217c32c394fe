"""The goals of bench.inference (bench/lib/inference_goals.py) read the right rows: int8 counts only within
0.3 test points, the graph's ratio to the no_syntax graph and its share of the attainable rate come from the
graph-alone half, and the parity goal from the bundle's own export check."""

from __future__ import annotations

from bench.lib.inference_goals import GOAL_VS_NO_SYNTAX, goals, parity_goal, summary, variant_accuracy


def _rows(int8_rate: float) -> list[dict]:
    rows = []
    for size, fed, fp32 in ((32, 400.0, 2000.0), (1, 100.0, 900.0)):
        rows += [
            {"model": "parser-fed end-to-end (ORT)", "batch": size, "sentences_per_s": fed},
            {"model": "parser-free ORT fp32", "batch": size, "sentences_per_s": fp32},
            {"model": "parser-free ORT int8", "batch": size, "sentences_per_s": int8_rate},
        ]
    for r in rows:
        fed = next(x for x in rows if x["batch"] == r["batch"] and "fed" in x["model"])
        r["vs_parser_fed"] = r["sentences_per_s"] / fed["sentences_per_s"]
    return rows


LEVERS = {
    "batches": {
        32: {"variants": {"default": {"peak_share": 0.3, "useful_gflops": 30.0, "vs_no_syntax": 0.5}}},
        1: {"variants": {"default": {"peak_share": 0.1, "useful_gflops": 10.0, "vs_no_syntax": 0.9}}},
    }
}


def _manifest(int8_metric: float) -> dict:
    return {
        "evaluation": {
            "source": "test split",
            "n_examples": 1000,
            "variants": {"default": {"metric": 76.8}, "int8": {"metric": int8_metric}},
        },
        "parity": {"default": {"source": "dev split", "task_output_max_diff": 3e-7}},
    }


def test_int8_that_loses_more_than_the_limit_does_not_count_for_the_end_to_end_goal():
    lossy = goals(_rows(int8_rate=5000.0), LEVERS, variant_accuracy(_manifest(76.0)))
    assert lossy["batch_32"]["fastest_ort"] == "parser-free ORT fp32" and lossy["batch_32"]["end_to_end_speedup"] == 5.0
    held = goals(_rows(int8_rate=5000.0), LEVERS, variant_accuracy(_manifest(76.5)))
    assert held["batch_32"]["fastest_ort"] == "parser-free ORT int8"  # −0.3 points: within the limit
    for fp32, int8 in ((40.1, 39.8), (40.2, 39.9), (50.3, 50.0)):  # −0.3 whatever the floating-point rounding
        manifest = _manifest(int8)
        manifest["evaluation"]["variants"]["default"]["metric"] = fp32
        assert variant_accuracy(manifest)["int8_allowed"], (fp32, int8)


def test_the_no_syntax_ratio_and_the_peak_share_are_read_per_batch_size():
    got = goals(_rows(int8_rate=100.0), LEVERS, variant_accuracy(_manifest(76.8)))
    assert got["batch_32"]["vs_no_syntax"] == {"default": 0.5} and got["batch_1"]["vs_no_syntax"] == {"default": 0.9}
    assert got["batch_32"]["peak_share"] == 0.3
    lines = "\n".join(summary(got))
    assert f"fp32 0.50× (goal ≥{GOAL_VS_NO_SYNTAX}×: NOT reached)" in lines
    assert f"fp32 0.90× (goal ≥{GOAL_VS_NO_SYNTAX}×: reached)" in lines


def test_parity_goal_comes_from_the_export_check():
    p = parity_goal(_manifest(76.5))
    assert p["fp32_within"] and p["fp32_max_diff"] == 3e-7 and abs(p["int8_delta_points"] + 0.3) < 1e-9
    assert not parity_goal({"parity": {"default": {"task_output_max_diff": 2e-4}}})["fp32_within"]
    assert not parity_goal({})["fp32_within"]
