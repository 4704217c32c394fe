"""int8 honesty: the export measures every variant on the test split — metric, agreement with fp32, speed —
and the numbers in the manifest and the export's output are what the variants really do."""

from __future__ import annotations

import math

import numpy as np
import pytest

from parserfree.commands.export import format_evaluation
from parserfree.distill.data.datasets import DataConfig, load_dataset
from parserfree.export import ParserFreeModel
from parserfree.reports.parts import Variants, from_json


def test_manifest_evaluates_every_variant_on_the_test_split_it_names(smoke_bundle):
    """The evaluation names its sentences (source, count) and holds one entry per model of the bundle; the
    optimised variant's metric and agreement are recomputed here (default and int8: the next test)."""
    folder, manifest = smoke_bundle
    evaluation = manifest["evaluation"]
    dataset = load_dataset(DataConfig(**_experiment(folder)["data"]))
    test = dataset.splits["test"]
    assert evaluation["source"] == f"test split of {dataset.name}" and evaluation["n_examples"] == len(test) > 10
    assert set(evaluation["variants"]) == set(manifest["models"]) == {"default", "optimized", "int8"}
    texts, gold = [e.text for e in test], np.array([e.label for e in test])
    labels = {}
    for variant in ("default", "optimized"):
        model = ParserFreeModel.load(folder, variant=variant)
        labels[variant] = np.array([model.label_names.index(r["label"]) for r in model.predict(texts)])
    optimized = evaluation["variants"]["optimized"]
    assert optimized["metric"] == pytest.approx(100 * float(np.mean(labels["optimized"] == gold)))
    assert optimized["agreement_with_fp32"] == pytest.approx(float(np.mean(labels["optimized"] == labels["default"])))
    assert all(v["sentences_per_s"] > 0 for v in evaluation["variants"].values())


def test_reported_numbers_are_what_the_variants_predict(smoke_bundle, smoke_checkpoint):
    folder, manifest = smoke_bundle
    data = DataConfig(**_experiment(folder)["data"])
    test = load_dataset(data).splits["test"]
    texts, gold = [e.text for e in test], np.array([e.label for e in test])
    labels, distances = {}, {}
    for variant in ("default", "int8"):
        model = ParserFreeModel.load(folder, variant=variant)
        results = model.predict(texts, with_distances=True)
        labels[variant] = np.array([model.label_names.index(r["label"]) for r in results])
        distances[variant] = [np.array(r["distances"]) for r in results]
    reported = manifest["evaluation"]["variants"]
    assert math.isclose(reported["default"]["metric"], 100 * float(np.mean(labels["default"] == gold)))
    assert math.isclose(reported["int8"]["metric"], 100 * float(np.mean(labels["int8"] == gold)))
    assert math.isclose(reported["int8"]["agreement_with_fp32"], float(np.mean(labels["int8"] == labels["default"])))
    assert reported["default"]["distance_rows_as_fp32"] == 1.0
    same = [
        np.allclose(a, b, atol=1e-4, rtol=0)  # word by word: its row of D̂
        for text_a, text_b in zip(distances["int8"], distances["default"])
        for a, b in zip(text_a, text_b)
    ]
    assert reported["int8"]["distance_rows_as_fp32"] == pytest.approx(float(np.mean(same)))


def _experiment(folder) -> dict:
    import yaml

    return yaml.safe_load((folder / "config.yaml").read_text())


def test_export_output_shows_each_variants_own_numbers(smoke_bundle):
    evaluation = smoke_bundle[1]["evaluation"]
    lines = format_evaluation(from_json(Variants, evaluation))
    assert lines[0].strip().startswith(f"{evaluation['source']}, {evaluation['n_examples']} sentences")
    for variant, v in evaluation["variants"].items():
        line = next(line for line in lines[1:] if line.split()[0] == variant)
        assert f"{v['metric_name']} {v['metric']:.2f}, agreement with fp32 {v['agreement_with_fp32']:.1%}" in line, line
        assert line.endswith(f"{v['sentences_per_s']:,.0f} sentences/s"), line


def test_without_data_the_evaluation_says_why(smoke_checkpoint, tmp_path):
    import torch

    from parserfree.jobs.exporting import export_checkpoint

    ckpt = torch.load(smoke_checkpoint, map_location="cpu", weights_only=True)
    ckpt["parserfree"]["experiment"]["data"]["dataset"] = str(tmp_path / "gone.jsonl")
    torch.save(ckpt, tmp_path / "model.ckpt")
    manifest = export_checkpoint(tmp_path / "model.ckpt", tmp_path / "bundle", quantize="int8", threads=1)
    assert "gone.jsonl is not available locally" in manifest["evaluation"]["skipped"]
    assert "no test-split evaluation" in format_evaluation(from_json(Variants, manifest["evaluation"]))[0]
