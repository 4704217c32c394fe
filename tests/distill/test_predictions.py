"""Per-item test predictions of a training run: one line per test item in the dataset's order (the loader
serves them sorted by length), each the best checkpoint's output for that very item."""

from __future__ import annotations

import json

import numpy as np
import pytest

from parserfree.comparison.pipelines import torch_outputs
from parserfree.core.checkpoints import load_trained
from parserfree.distill.config import load_config
from parserfree.distill.data.datasets import load_dataset
from parserfree.distill.data.readers import DataError
from parserfree.distill.data_module import SyntaxDataModule
from parserfree.distill.predictions import read_predictions


def test_a_run_keeps_the_prediction_of_every_test_item_in_dataset_order(smoke_run):
    run_dir, metrics = smoke_run
    records = read_predictions(run_dir / "predictions.jsonl")
    config = load_config(run_dir / "config.yaml")
    test = load_dataset(config.data).splits["test"]
    assert [r["index"] for r in records] == list(range(len(test))) and [r["text"] for r in records] == [
        e.text for e in test
    ]
    assert [r["gold"] for r in records] == [e.label for e in test]
    correct = np.mean([r["prediction"] == r["gold"] for r in records])
    assert 100 * correct == pytest.approx(metrics["test"]["accuracy"])

    trained = load_trained(run_dir / "checkpoints" / "best.ckpt")
    data = SyntaxDataModule(config, vocab=trained.vocab, progress=False)
    data.setup()
    lengths = [len(e.words) for e in data.splits["test"]]
    assert len(set(lengths)) > 1  # the loader reorders these items: the file must not
    for i in (int(np.argmax(lengths)), int(np.argmin(lengths)), 0):
        logits = torch_outputs(trained, [list(data.splits["test"][i].words)], None, "predicted")[0]
        probabilities = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
        assert records[i]["probabilities"] == pytest.approx(probabilities.tolist(), abs=1e-5)
        assert records[i]["prediction"] == int(np.argmax(logits))


def test_a_damaged_predictions_file_is_a_one_line_error_naming_the_line(tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_text(json.dumps({"index": 0, "gold": 1, "prediction": 1}) + '\n{"index": 1}\n')
    with pytest.raises(DataError, match=r"predictions.jsonl:2: a prediction needs"):
        read_predictions(path)
