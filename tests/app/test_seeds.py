"""Several seeds: `parserfree run --seeds 2` trains every recipe twice (seed 0 where a one-seed job keeps it)
and reports mean ± sd with verdicts over seeds × items; `parserfree compare --seeds 2` reads one model per
seed from paths that hold {seed}."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import yaml

from parserfree.commands.cli import main
from parserfree.core.checkpoints import load_trained


def test_run_with_two_seeds_trains_each_recipe_twice_and_compares_over_both(
    smoke_overrides, sentiment_file, tmp_path, capsys
):
    overrides = [
        *smoke_overrides,
        f"run.compare_datasets=[{sentiment_file}]",
        "run.recipes=[parser_fed_twin,parser_free]",
        "training.max_epochs=1",
        "training.limit_train_batches=0.3",
        "run.compare_max_examples=30",
        "run.latency_examples=2",
    ]
    code = main(
        [
            "run",
            "--config",
            "configs/smoke.yaml",
            "--out",
            str(tmp_path),
            "--seeds",
            "2",
            "--quiet",
            *[a for o in overrides for a in ("--set", o)],
        ]
    )
    assert code == 0
    task = tmp_path / "smoke"
    assert load_trained(task / "parser_fed_twin" / "checkpoints" / "best.ckpt").experiment["seed"] == 0
    assert load_trained(task / "seed-1" / "parser_fed_twin" / "checkpoints" / "best.ckpt").experiment["seed"] == 1
    assert (task / "seed-1" / "bundle" / "manifest.json").is_file() and not (
        task / "seed-1" / "bundle" / "model.int8.onnx"
    ).exists()
    report = json.loads((task / "report" / "report.json").read_text())
    assert report["seeds"] == 2
    twin = report["domains"][report["dataset"]]["scores"]["parser_fed_twin"]
    values = [m["metric"] for m in twin["per_seed"]]
    assert (
        len(values) == 2
        and twin["metric"] == pytest.approx(np.mean(values))
        and twin["metric_sd"] == pytest.approx(np.std(values, ddof=1))
    )
    kept = [
        json.loads(line)["prediction"]
        for line in (task / "report" / "predictions" / "sentiment" / "parser_fed_twin-seed1.jsonl")
        .read_text()
        .splitlines()
    ]
    assert 100 * np.mean(
        np.array(kept)
        == np.array(
            [
                json.loads(line)["gold"]
                for line in (task / "report" / "predictions" / "sentiment" / "parser_fed_twin-seed1.jsonl")
                .read_text()
                .splitlines()
            ]
        )
    ) == pytest.approx(values[1])
    pair = next(c for c in report["contrasts"] if c["slice"] == "all" and c["kind"] == "like_for_like")
    assert pair["seeds"] == 2 and pair["p_seeds"] is not None and pair["p"] == max(pair["p_items"], pair["p_seeds"])
    index = json.loads((tmp_path / "index.json").read_text())
    assert "smoke/seed-1/parser_fed_twin" in index["stage_seconds"] and index["tasks"]["smoke"]["seeds"] == 2
    assert "parser_fed_twin vs parser_free:" in capsys.readouterr().out


def test_compare_reads_one_model_per_seed_from_paths_with_seed(
    smoke_bundle, recipe_checkpoint, sentiment_file, tmp_path, capsys
):
    for seed in (0, 1):
        shutil.copytree(smoke_bundle[0], tmp_path / f"free{seed}")
        shutil.copy(recipe_checkpoint("parser_fed_twin"), tmp_path / f"twin{seed}.ckpt")
    args = [
        "compare",
        "--parser-free",
        str(tmp_path / "free{seed}"),
        "--parser-fed",
        str(tmp_path / "twin{seed}.ckpt"),
        "--dataset",
        str(sentiment_file),
        "--max-examples",
        "30",
        "--latency-examples",
        "2",
        "--threads",
        "1",
        "--quiet",
    ]
    assert main([*args, "--seeds", "2", "--out", str(tmp_path / "report")]) == 0
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["seeds"] == 2 and report["models"]["parser_free"]["seeds"] == 2
    free = report["domains"][report["dataset"]]["scores"]["parser_free"]
    assert len(free["per_seed"]) == 2 and free["metric_sd"] == 0.0  # the same model twice
    assert yaml.safe_load((tmp_path / "free1" / "config.yaml").read_text())["recipe"] == "parser_free"
    capsys.readouterr()
    assert (
        main(
            [
                "compare",
                "--parser-free",
                str(smoke_bundle[0]),
                "--parser-fed",
                str(tmp_path / "twin0.ckpt"),
                "--seeds",
                "2",
                "--dataset",
                str(sentiment_file),
                "--out",
                str(tmp_path / "r2"),
                "--quiet",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("parserfree: error: --parser-free ")
        and "give 2 comma-separated paths or one that holds {seed}" in err
    )
    assert "\n" not in err
    free_list = f"{tmp_path / 'free0'},{tmp_path / 'free1'}"  # comma-separated: any layout, e.g. run's seed-<s> folders
    assert (
        main(
            [
                "compare",
                "--parser-free",
                free_list,
                "--parser-fed",
                str(tmp_path / "twin{seed}.ckpt"),
                "--seeds",
                "2",
                "--dataset",
                str(sentiment_file),
                "--max-examples",
                "10",
                "--latency-examples",
                "2",
                "--threads",
                "1",
                "--out",
                str(tmp_path / "r3"),
                "--quiet",
            ]
        )
        == 0
    )
    assert json.loads((tmp_path / "r3" / "report.json").read_text())["models"]["parser_free"]["seeds"] == 2
