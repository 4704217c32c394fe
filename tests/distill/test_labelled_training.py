"""Training with labels and a parser tower: validation scores UAS and LAS, and a pre-trained tower predictor
(embeddings, tower, arc and label scorers, label inventory) initialises a task model through init_from."""

from __future__ import annotations

import csv

import pytest
import torch

from parserfree.core.checkpoints import CheckpointError, load_trained
from parserfree.distill.config import load_config
from parserfree.distill.train import train

TOWER = [
    "encoder.predictor_layer=0",
    "predictor.tower_layers=1",
    "predictor.tower_d_model=24",
    "predictor.tower_heads=2",
]


def test_validation_scores_directed_and_labelled_attachment(smoke_run):
    run_dir, metrics = smoke_run
    for split in ("dev", "test"):
        scores = metrics[split]
        assert 0 <= scores["las"] <= scores["uas"] <= 100
    with open(run_dir / "logs" / "metrics.csv") as f:
        rows = [r for r in csv.DictReader(f) if r.get("val/las")]
    assert rows and all(float(r["val/las"]) <= float(r["val/uas"]) for r in rows)
    assert any(r.get("train/label_loss") for r in csv.DictReader(open(run_dir / "logs" / "metrics.csv")))


@pytest.fixture(scope="module")
def tower_pretrained(smoke_overrides, tmp_path_factory):
    out = tmp_path_factory.mktemp("tower") / "pretrain"
    config = load_config(
        "configs/smoke.yaml",
        [
            *smoke_overrides,
            "recipe=pretrain_predictor",
            "data.task=none",
            *TOWER,
            "training.max_epochs=1",
            "training.limit_train_batches=0.3",
        ],
    )
    train(config, out, progress=False)
    return out / "checkpoints" / "best.ckpt"


def test_init_from_a_tower_predictor_loads_embeddings_tower_and_scorers(tower_pretrained, smoke_overrides, tmp_path):
    """Also with another encoder feed-forward width: with a tower only the embeddings are shared."""
    config = load_config(
        "configs/smoke.yaml",
        [
            *smoke_overrides,
            *TOWER,
            "encoder.d_ff=48",
            f"training.init_from={tower_pretrained}",
            "training.max_steps=1",
            "training.lr=1e-9",
            "training.warmup_steps=0",
        ],
    )
    train(config, tmp_path / "run", progress=False)
    pre, task = load_trained(tower_pretrained), load_trained(tmp_path / "run" / "checkpoints" / "last.ckpt")
    assert task.dep_labels == pre.dep_labels and "nsubj" in task.dep_labels
    assert task.vocab.to_dict() == pre.vocab.to_dict()
    ours, theirs = task.model.state_dict(), pre.model.state_dict()
    shared = [k for k in theirs if k.startswith(("predictor.", "encoder.word_embedding", "encoder.feature_embedding"))]
    assert any(k.startswith("predictor.tower.") for k in shared) and any(
        k.startswith("predictor.label_scorer.") for k in shared
    )
    for key in shared:
        torch.testing.assert_close(ours[key], theirs[key], atol=1e-6, rtol=0, msg=key)  # one step at lr 1e-9
    assert ours["encoder.layers.0.feed_forward.0.weight"].shape[0] == 48  # the task's own encoder layers


def test_init_from_a_tower_of_other_sizes_names_them(tower_pretrained, smoke_overrides, tmp_path):
    config = load_config(
        "configs/smoke.yaml",
        [
            *smoke_overrides,
            *TOWER,
            "predictor.tower_d_model=16",
            f"training.init_from={tower_pretrained}",
            "training.max_steps=1",
        ],
    )
    with pytest.raises(
        CheckpointError,
        match=r"checkpoint of a predictor tower 1 × 24 \(heads 2, ff 96\) model, "
        r"config says 1 × 16 \(heads 2, ff 64\)",
    ):
        train(config, tmp_path / "run", progress=False)
