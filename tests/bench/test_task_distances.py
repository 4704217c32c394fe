"""The task-distances bench checks before it times: adjacency powers that changed one clamped distance would be
caught (and not timed), and a bundle, a run folder or a checkpoint names the checkpoint it exports."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import torch

from parserfree.encoder import EncoderConfig
from parserfree.predictor import PredictorConfig
from parserfree.predictor.syntax_model import SyntaxModel

from bench.task_distances import METHODS, checkpoint_of, clamped_distances_check


def _trained() -> SimpleNamespace:
    encoder = EncoderConfig.from_dict(
        {"vocab_size": 30, "d_model": 16, "n_heads": 2, "n_layers": 2, "d_ff": 32, "max_len": 32, "predictor_layer": 1}
    )
    model = SyntaxModel(encoder, PredictorConfig(arc_dim=8, label_dim=0), "binary", 2, seed=0).eval()
    with torch.no_grad():  # chains deeper than the cap
        model.predictor.arc_scorer.relative.weight[model.predictor.arc_scorer.max_relative_position + 1] = 5.0
    return SimpleNamespace(model=model)


def _feeds() -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    mask = np.arange(32)[None, :] < np.array([32, 20, 1])[:, None]
    return [
        {
            "word_ids": np.where(mask, rng.integers(2, 30, mask.shape), 0),
            "feature_ids": rng.integers(0, 4096, (*mask.shape, 3)),
            "mask": mask,
        }
    ]


def test_the_check_passes_equal_distances_and_catches_a_clamp_that_differs(monkeypatch):
    trained = _trained()
    got = clamped_distances_check(trained, _feeds())
    assert got["cap"] == 10 and got["pairs"] == 32 * 32 + 20 * 20 + 1
    assert got["differing_pairs"] == 0 and got["differing_heads"] == 0
    assert trained.model.predictor.distance_cap is None

    import parserfree.predictor.distance_predictor as head

    real = head.clamped_distances_from_heads
    monkeypatch.setattr(head, "clamped_distances_from_heads", lambda h, m, cap: real(h, m, cap - 1))  # off by one
    assert clamped_distances_check(trained, _feeds())["differing_pairs"] > 0


def test_a_bundle_run_folder_or_checkpoint_names_the_checkpoint(tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "manifest.json").write_text(json.dumps({"checkpoint": {"path": "/runs/x/checkpoints/best.ckpt"}}))
    assert str(checkpoint_of(str(bundle))) == "/runs/x/checkpoints/best.ckpt"
    assert checkpoint_of(str(tmp_path)) == tmp_path / "checkpoints" / "best.ckpt"
    assert checkpoint_of("a.ckpt").name == "a.ckpt"
    assert METHODS[0] == "pointer_jumps"  # the baseline of the paired passes
