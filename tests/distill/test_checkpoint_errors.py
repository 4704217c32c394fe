"""A damaged, foreign or mismatched checkpoint stops with one CheckpointError naming the file and what is wrong."""

from __future__ import annotations

import shutil

import pytest
import torch
from checkpoint_edits import edited_meta, model_of, save_checkpoint

from parserfree.core.checkpoints import CheckpointError, load_trained
from parserfree.distill.config import load_config
from parserfree.distill.train import train

from damage import damage_file


@pytest.mark.parametrize(
    "kind, message",
    [
        ("truncated", "truncated or damaged checkpoint"),
        ("zero_bytes", r"empty file \(0 bytes\)"),
        ("random_bytes", r"not a parserfree checkpoint \(looks like unrecognised binary data\)"),
        ("another_model", "not a parserfree checkpoint"),
    ],
)
def test_damaged_checkpoint_is_one_line_naming_the_file(smoke_checkpoint, tmp_path, kind, message):
    path = tmp_path / "best.ckpt"
    shutil.copy(smoke_checkpoint, path)
    damage_file(path, kind)
    with pytest.raises(CheckpointError, match=message) as error:
        load_trained(path)
    assert str(error.value).startswith(f"{path}: ") and "\n" not in str(error.value)


def test_another_file_type_is_named(tmp_path):
    path = tmp_path / "model.ckpt"
    path.write_text('{"weights": []}')
    with pytest.raises(CheckpointError, match="looks like JSON text"):
        load_trained(path)


def test_weights_that_do_not_fit_their_settings_are_a_damaged_checkpoint(smoke_checkpoint, tmp_path):
    ckpt = torch.load(smoke_checkpoint, map_location="cpu", weights_only=True)
    ckpt["parserfree"]["encoder"]["d_ff"] *= 2
    torch.save(ckpt, tmp_path / "odd.ckpt")
    with pytest.raises(CheckpointError, match="weights do not fit the model its settings describe"):
        load_trained(tmp_path / "odd.ckpt")


def _pretrained_checkpoint(smoke_checkpoint, path, **encoder) -> None:
    """The smoke checkpoint (it has a predictor) rebuilt with other encoder settings and fresh weights."""
    _, meta = edited_meta(smoke_checkpoint, **encoder)
    save_checkpoint(model_of(meta), meta, path)


@pytest.mark.parametrize(
    "encoder, message",
    [
        ({"d_model": 16, "d_ff": 32}, "checkpoint of a d_model 16 model, config says 32"),
        ({"n_heads": 1}, "checkpoint of a n_heads 1 model, config says 2"),  # same shapes: would load silently
    ],
)
def test_init_from_a_checkpoint_of_other_settings_names_the_setting(
    smoke_checkpoint, smoke_overrides, tmp_path, encoder, message
):
    _pretrained_checkpoint(smoke_checkpoint, tmp_path / "pre.ckpt", **encoder)
    config = load_config(
        "configs/smoke.yaml", [*smoke_overrides, f"training.init_from={tmp_path / 'pre.ckpt'}", "training.max_steps=1"]
    )
    with pytest.raises(CheckpointError, match=message) as error:
        train(config, tmp_path / "run", progress=False)
    assert str(error.value).startswith(f"{tmp_path / 'pre.ckpt'}: ")


def test_resume_refuses_a_last_checkpoint_of_other_settings(smoke_run, smoke_overrides, tmp_path):
    run_dir, _ = smoke_run
    (tmp_path / "checkpoints").mkdir()
    shutil.copy(run_dir / "checkpoints" / "last.ckpt", tmp_path / "checkpoints" / "last.ckpt")
    config = load_config("configs/smoke.yaml", [*smoke_overrides, "training.lr=0.0005"])
    with pytest.raises(CheckpointError, match=r"written under other settings \(training.lr 0.001 → 0.0005\)"):
        train(config, tmp_path, resume=True, progress=False)
    assert not (tmp_path / "config.yaml").exists()  # nothing was rewritten to describe a run that did not happen


def test_a_run_saved_before_a_setting_existed_resumes_at_its_old_value_only(tmp_path, settings_checkpoint):
    from parserfree.core.checkpoints import CheckpointError
    from parserfree.distill.config import ExperimentConfig
    from parserfree.distill.starts import check_resumable

    now = ExperimentConfig().to_dict()
    before = {**now, "encoder": {k: v for k, v in now["encoder"].items() if k != "static_vectors"}}
    path = tmp_path / "run" / "checkpoints" / "last.ckpt"
    path.parent.mkdir(parents=True)
    settings_checkpoint(path, before, "binary", "no_syntax")
    check_resumable(path, now)  # the new setting at the value that computes what ran: the same run
    changed = {**now, "encoder": {**now["encoder"], "static_vectors": "en_core_web_md"}}
    with pytest.raises(CheckpointError, match="static_vectors"):
        check_resumable(path, changed)


def test_a_run_resumes_when_only_the_main_jobs_run_section_changed(tmp_path, settings_checkpoint):
    """The masked-LM configs extend the main task's, so naming the shipped encoders in configs/main's
    run.encoder_starts once refused to resume every language-model run; a training setting still does."""
    from parserfree.core.checkpoints import CheckpointError
    from parserfree.distill.config import ExperimentConfig
    from parserfree.distill.starts import check_resumable

    before = ExperimentConfig().to_dict()
    path = tmp_path / "run" / "checkpoints" / "last.ckpt"
    path.parent.mkdir(parents=True)
    settings_checkpoint(path, before, "binary", "no_syntax")
    run = {**before["run"], "encoder_starts": {"no_syntax": "builtin:encoder-en-no_syntax"}}
    check_resumable(path, {**before, "run": run})
    with pytest.raises(CheckpointError, match="training.lr"):
        check_resumable(path, {**before, "run": run, "training": {**before["training"], "lr": 0.5}})


def test_a_checkpoint_that_kept_the_architecture_beside_the_encoder_section_still_reads():
    """Before the encoder config held ``architecture``, a checkpoint kept the config.json beside it."""
    from parserfree.core.checkpoints import encoder_record

    old = {"encoder": {"pretrained": "builtin:minilm-l6"}, "architecture": {"model_type": "bert"}}
    assert encoder_record(old)["architecture"] == {"model_type": "bert"}
    new = {"encoder": {"pretrained": "x", "architecture": {"model_type": "roberta"}}}
    assert encoder_record(new)["architecture"] == {"model_type": "roberta"}
    assert "architecture" not in encoder_record({"encoder": {}})
