"""Every command that reads a file stops on a damaged one — truncated, emptied, random bytes, another model's
file — with one line naming the file and exit status 2, never a traceback."""

from __future__ import annotations

import shutil

import pytest

from parserfree.commands.cli import main
from parserfree.distill.config import load_config, save_config

from damage import DAMAGE, damage_file


def _one_line_naming(capsys, code: int, path) -> str:
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("parserfree: error: ") and "\n" not in err, err
    assert str(path) in err, err
    return err


@pytest.fixture
def damaged_checkpoint(smoke_checkpoint, tmp_path, request):
    path = tmp_path / "best.ckpt"
    shutil.copy(smoke_checkpoint, path)
    damage_file(path, request.param)
    return path


@pytest.mark.parametrize("damaged_checkpoint", DAMAGE, indirect=True)
def test_export(damaged_checkpoint, tmp_path, capsys):
    code = main(["export", "--checkpoint", str(damaged_checkpoint), "--out", str(tmp_path / "bundle")])
    _one_line_naming(capsys, code, damaged_checkpoint)
    assert not (tmp_path / "bundle").exists()


@pytest.mark.parametrize("damaged_checkpoint", DAMAGE, indirect=True)
def test_compare(damaged_checkpoint, smoke_bundle, sentiment_file, tmp_path, capsys):
    code = main(
        [
            "compare",
            "--parser-free",
            str(smoke_bundle[0]),
            "--parser-fed",
            str(damaged_checkpoint),
            "--dataset",
            str(sentiment_file),
            "--out",
            str(tmp_path / "report"),
            "--quiet",
        ]
    )
    _one_line_naming(capsys, code, damaged_checkpoint)


@pytest.mark.parametrize("damaged_checkpoint", DAMAGE, indirect=True)
def test_train_with_init_from(damaged_checkpoint, smoke_overrides, tmp_path, capsys):
    overrides = [*smoke_overrides, f"training.init_from={damaged_checkpoint}"]
    code = main(
        [
            "train",
            "--config",
            "configs/smoke.yaml",
            "--out",
            str(tmp_path / "run"),
            "--quiet",
            *[a for o in overrides for a in ("--set", o)],
        ]
    )
    _one_line_naming(capsys, code, damaged_checkpoint)


@pytest.mark.parametrize("kind", DAMAGE)
def test_predict(bundle_copy, tmp_path, capsys, kind):
    if kind == "another_model":  # the int8 model in place of the default one
        damaged = bundle_copy / "model.onnx"
        damage_file(damaged, kind, other=bundle_copy / "model.int8.onnx")
    else:
        damaged = bundle_copy / "manifest.json"
        damage_file(damaged, kind)
    (tmp_path / "in.txt").write_text("A fine film.\n")
    code = main(["predict", "--model", str(bundle_copy), "--input", str(tmp_path / "in.txt"), "--quiet"])
    _one_line_naming(capsys, code, damaged)


# A config cut short may still be valid YAML — another, smaller config that nothing can tell apart — so
# `run` is fed a truncated resume checkpoint instead (tests/app/test_stage_records.py).
@pytest.mark.parametrize("kind", [k for k in DAMAGE if k != "truncated"])
def test_run_with_a_damaged_config(smoke_overrides, smoke_checkpoint, tmp_path, capsys, kind):
    config = tmp_path / "job.yaml"
    save_config(load_config("configs/smoke.yaml", smoke_overrides), config)
    damage_file(config, kind, other=smoke_checkpoint)
    code = main(["run", "--config", str(config), "--out", str(tmp_path / "out"), "--quiet"])
    _one_line_naming(capsys, code, config)
    assert not (tmp_path / "out").exists()
