"""int8 honesty: the export measures every variant on the test split — metric, agreement with fp32, speed —
and the numbers in the manifest and the export's output are what the variants really do."""

from __future__ import annotations

import math

import numpy as np
import pytest

from parserfree.commands import format_evaluation
from parserfree.distill.datasets import DataConfig, load_dataset
from parserfree.export import ParserFreeModel


def test_manifest_reports_int8_metric_agreement_and_speed(smoke_bundle):
    _, manifest = smoke_bundle
    evaluation = manifest["evaluation"]
    assert evaluation["source"].startswith("test split of ") and evaluation["n_examples"] > 10
    assert set(evaluation["variants"]) == {"default", "optimized", "int8"}  # the numbers: next test
    for v in evaluation["variants"].values():
        assert {"metric", "agreement_with_fp32", "sentences_per_s"} <= set(v)
    assert evaluation["variants"]["default"]["agreement_with_fp32"] == 1.0


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
    same = [np.allclose(a, b, atol=1e-4, rtol=0)  # word by word: its row of D̂
            for text_a, text_b in zip(distances["int8"], distances["default"]) for a, b in zip(text_a, text_b)]
    assert reported["int8"]["distance_rows_as_fp32"] == pytest.approx(float(np.mean(same)))


def _experiment(folder) -> dict:
    import yaml

    return yaml.safe_load((folder / "config.yaml").read_text())


def test_export_output_shows_int8_next_to_fp32(smoke_bundle):
    lines = format_evaluation(smoke_bundle[1]["evaluation"])
    int8 = next(line for line in lines if line.strip().startswith("int8"))
    assert "accuracy" in int8 and "agreement with fp32" in int8 and "sentences/s" in int8
    assert "sentences" in lines[0] and "test split" in lines[0]


def test_without_data_the_evaluation_says_why(smoke_checkpoint, tmp_path):
    import torch

    from parserfree.export import export_bundle

    ckpt = torch.load(smoke_checkpoint, map_location="cpu", weights_only=True)
    ckpt["parserfree"]["experiment"]["data"]["dataset"] = str(tmp_path / "gone.jsonl")
    torch.save(ckpt, tmp_path / "model.ckpt")
    manifest = export_bundle(tmp_path / "model.ckpt", tmp_path / "bundle", quantize="int8", threads=1)
    assert "gone.jsonl is not available locally" in manifest["evaluation"]["skipped"]
    assert "no test-split evaluation" in format_evaluation(manifest["evaluation"])[0]
