"""Shipped weights (``builtin:<name>``): a float16 copy that loads as the same model, a record whose sha256
is checked on every use, never replaced by a worse one, and reachable wherever a checkpoint path is."""

from __future__ import annotations

import pytest
import torch

from parserfree.distill import shipped
from parserfree.distill.checkpoints import CheckpointError, load_trained
from parserfree.distill.shipped import read_record, resolve_weights, ship, shipped_checkpoint, shipped_names


def scores(uas: float) -> dict:
    return {"dev": {"uas": uas}, "test": {"uuas": uas + 2, "uas": uas, "las": uas - 3}}


@pytest.fixture
def pretrained(recipe_checkpoint):
    return recipe_checkpoint("pretrain_predictor")


def test_shipped_copy_is_float16_and_loads_as_the_same_model(pretrained, tmp_path):
    record = ship(pretrained, "p", "parserfree ship --config c --name p", scores(80.0), {"d": 1}, root=tmp_path)
    path = shipped_checkpoint("p", tmp_path)
    raw = torch.load(path, map_location="cpu", weights_only=True)["state_dict"]
    assert {v.dtype for v in raw.values() if v.is_floating_point()} == {torch.float16}
    assert record["bytes"] == path.stat().st_size < pretrained.stat().st_size
    original, copy = load_trained(pretrained).model.state_dict(), load_trained(path).model.state_dict()
    for key, value in original.items():
        assert copy[key].dtype == value.dtype  # read back as float32
        torch.testing.assert_close(copy[key], value, atol=2e-3, rtol=1e-3)
    assert shipped_names(tmp_path) == ["p"] and read_record("p", tmp_path)["command"].startswith("parserfree ship")


def test_a_damaged_shipped_file_is_refused_naming_the_sha256(pretrained, tmp_path):
    ship(pretrained, "p", "cmd", scores(80.0), {}, root=tmp_path)
    path = tmp_path / "p" / shipped.WEIGHTS
    data = bytearray(path.read_bytes())
    data[-100] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="sha256 .* is not the recorded"):
        shipped_checkpoint("p", tmp_path)


def test_a_worse_parser_does_not_replace_the_shipped_one(pretrained, tmp_path):
    ship(pretrained, "p", "first", scores(80.0), {}, root=tmp_path)
    with pytest.raises(CheckpointError, match="not better, not replaced"):
        ship(pretrained, "p", "worse", scores(79.0), {}, root=tmp_path)
    assert read_record("p", tmp_path)["command"] == "first"
    ship(pretrained, "p", "better", scores(81.0), {}, root=tmp_path)
    assert read_record("p", tmp_path)["command"] == "better"
    ship(pretrained, "p", "forced", scores(70.0), {}, root=tmp_path, force=True)
    assert read_record("p", tmp_path)["command"] == "forced"


def test_an_unknown_builtin_name_lists_the_shipped_ones(pretrained, tmp_path, monkeypatch):
    ship(pretrained, "p", "cmd", scores(80.0), {}, root=tmp_path)
    monkeypatch.setattr(shipped, "models_dir", lambda: tmp_path)
    with pytest.raises(CheckpointError, match=r"builtin:nope: no such shipped model \(shipped: p\)"):
        resolve_weights("builtin:nope")
    assert resolve_weights("builtin:p") == str(tmp_path / "p" / shipped.WEIGHTS)
    assert resolve_weights("runs/x/best.ckpt") == "runs/x/best.ckpt" and resolve_weights(None) is None


def test_a_builtin_start_is_fingerprinted_by_its_file_and_pretrains_nothing(pretrained, tmp_path, monkeypatch):
    from parserfree.distill.config import load_config
    from parserfree.encoder.files import sha256_file
    from parserfree.main_job import pretrain_stage
    from parserfree.stages import training_fingerprint

    ship(pretrained, "p", "cmd", scores(80.0), {}, root=tmp_path)
    monkeypatch.setattr(shipped, "models_dir", lambda: tmp_path)
    config = load_config("configs/smoke.yaml", ["training.init_from=builtin:p", "run.pretrained=builtin:p"])
    assert training_fingerprint(config)["inputs"]["init_from"] == sha256_file(tmp_path / "p" / shipped.WEIGHTS)
    chosen = pretrain_stage(config, str(tmp_path / "cache"), progress=False)
    assert chosen["checkpoint"] == str(tmp_path / "p" / shipped.WEIGHTS) and chosen["chosen"] == "shipped (builtin:p)"
    assert not (tmp_path / "cache").exists()  # nothing trained


def test_the_shipped_models_match_their_records():
    """Every model in the repository's models/ loads after its sha256 check (a stale record fails here)."""
    for name in shipped_names():
        trained = load_trained(shipped_checkpoint(name))
        assert trained.recipe == "pretrain_predictor" and trained.dep_labels
        assert read_record(name)["bytes"] <= shipped.MAX_FILE_BYTES
