"""A predictor pre-trained on a pre-trained encoder (the base size's): its layers 1..k start the task, its
embeddings may stay the encoder's own, and it ships partial — the weights its training changed — and is
completed from the encoder's own weights when it is used."""

from __future__ import annotations

import pytest
import torch

from parserfree.core.checkpoints import load_trained
from parserfree.distill.config import load_config
from parserfree.distill.shipped import COMPLETED_FROM, WEIGHTS, pretrained_start_weights, ship, shipped_checkpoint
from parserfree.distill.train import train

from tiny_models import StartWeights, tiny_bert_folder

LAYER = "encoder.model.encoder.layer."  # the tiny BERT's layers in the model's state dict
EMBEDDINGS = "encoder.model.embeddings."


def bert_config(smoke_overrides, folder, *extra):
    return load_config(
        "configs/smoke.yaml",
        [*smoke_overrides, f"encoder.pretrained={folder}", "encoder.bias_all_layers=false", *extra],
    )


@pytest.fixture(scope="module")
def bert_pretraining(smoke_overrides, tmp_path_factory):
    """(model folder, best checkpoint) of a predictor pre-training on a tiny BERT, embeddings frozen."""
    root = tmp_path_factory.mktemp("bert-pretraining")
    folder = tiny_bert_folder(root / "tiny-bert")
    extra = ("recipe=pretrain_predictor", "data.task=none", "training.max_epochs=1", "training.freeze_embeddings=true")
    train(bert_config(smoke_overrides, folder, *extra), root / "pre", progress=False)
    return folder, root / "pre" / "checkpoints" / "best.ckpt"


def encoder_start(checkpoint) -> dict:
    """The model folder's own encoder weights, named as in the model (not the Lightning module)."""
    from parserfree.core.checkpoints import read_checkpoint

    return {k.removeprefix("model."): v for k, v in pretrained_start_weights(read_checkpoint(checkpoint)).items()}


@pytest.mark.slow
def test_a_pretrained_encoders_predictor_pretraining_starts_the_task_with_its_layers(
    bert_pretraining, smoke_overrides, tmp_path
):
    folder, checkpoint = bert_pretraining
    pretrained, own = load_trained(checkpoint).model.state_dict(), encoder_start(checkpoint)
    start = StartWeights()
    config = bert_config(smoke_overrides, folder, "training.max_steps=1", f"training.init_from={checkpoint}")
    train(config, tmp_path / "free", progress=False, callbacks=[start])
    k = config.encoder.predictor_layer
    lower = [key for key in pretrained if key.startswith(tuple(f"{LAYER}{i}." for i in range(k)))]
    assert lower and any(not torch.equal(pretrained[key], own[key]) for key in lower)  # pre-training moved them
    for key in lower:  # the task starts from the pre-trained layers, not the model folder's
        assert torch.equal(start.state[key], pretrained[key]), key
    assert all(torch.equal(start.state[key], pretrained[key]) for key in pretrained if key.startswith("predictor."))


@pytest.mark.slow
def test_frozen_embeddings_stay_the_encoders_own_in_a_predictor_pretraining(bert_pretraining):
    _, checkpoint = bert_pretraining
    pretrained, own = load_trained(checkpoint).model.state_dict(), encoder_start(checkpoint)
    embeddings = [key for key in own if key.startswith(EMBEDDINGS)]
    assert embeddings and all(torch.equal(pretrained[key], own[key]) for key in embeddings)


@pytest.mark.slow
def test_a_partial_shipped_predictor_holds_what_it_changed_and_loads_whole(bert_pretraining, tmp_path):
    folder, checkpoint = bert_pretraining
    scores = {"test": {"uuas": 50.0}}
    record = ship(checkpoint, "p", "cmd", scores, {}, root=tmp_path / "models", cache_dir=tmp_path / "cache")
    shipped = torch.load(tmp_path / "models" / "p" / WEIGHTS, map_location="cpu", weights_only=True)["state_dict"]
    k = load_trained(checkpoint).encoder_config.predictor_layer
    assert record[COMPLETED_FROM] == str(folder)
    assert not any(key.startswith(f"model.{EMBEDDINGS}") for key in shipped)  # frozen: the folder's own
    assert not any(key.startswith(f"model.{LAYER}{k}.") for key in shipped)  # the upper layers: unchanged
    assert any(key.startswith(f"model.{LAYER}0.") for key in shipped) and any("predictor." in key for key in shipped)
    whole = shipped_checkpoint("p", tmp_path / "models", cache_dir=tmp_path / "cache")
    assert whole.parent == tmp_path / "cache" / "shipped"
    original, loaded = load_trained(checkpoint).model.state_dict(), load_trained(whole).model.state_dict()
    assert original.keys() == loaded.keys()
    for key, value in original.items():
        torch.testing.assert_close(loaded[key], value, atol=2e-3, rtol=1e-3)


@pytest.mark.slow
def test_a_runs_record_completes_a_partial_start_in_the_runs_cache_not_the_configs(
    bert_pretraining, smoke_overrides, tmp_path, monkeypatch
):
    from parserfree.distill import shipped
    from parserfree.jobs.stage_records import training_fingerprint

    folder, checkpoint = bert_pretraining
    ship(checkpoint, "p", "cmd", {"test": {}}, {}, root=tmp_path / "models", cache_dir=tmp_path / "ship-cache")
    monkeypatch.setattr(shipped, "models_dir", lambda: tmp_path / "models")
    config_cache, run_cache = tmp_path / "config-cache", tmp_path / "run-cache"
    config = bert_config(smoke_overrides, folder, "training.init_from=builtin:p", f"data.cache_dir={config_cache}")
    training_fingerprint(config, str(run_cache))  # train completes it in the command's cache: so must its record
    assert list((run_cache / "shipped").glob("p-*.ckpt"))
    assert not (config_cache / "shipped").exists()
