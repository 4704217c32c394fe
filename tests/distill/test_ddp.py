"""Distributed training (Lightning DDP, 2 CPU processes, gloo): predictor pre-training runs under DDP, and a
DDP run killed mid-epoch resumes to exactly what the uninterrupted DDP run gives. Slow (each DDP run starts
two processes), so kept to three short runs of the pre-training recipe (dropout in every trained layer: a
resumed process that draws another process's random numbers ends elsewhere)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
DDP = ["--devices", "2", "--strategy", "ddp", "--quiet"]

# A DDP training script whose two processes kill themselves (SIGKILL: no clean-up) after one training step.
# It is a file, not `python -c`: Lightning starts the second process by running the same script again.
KILLED = """
import os, signal, sys
import lightning as L
from parserfree.distill.config import load_config
from parserfree.distill.train import train

class KillAt(L.Callback):
    def on_train_batch_end(self, trainer, *args):
        if trainer.global_step == int(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)

config = load_config("configs/smoke.yaml", [*sys.argv[3:], "training.devices=2", "training.strategy=ddp"])
train(config, sys.argv[1], progress=False, callbacks=[KillAt()])
"""


def _train(out: Path, overrides: list[str], *extra: str) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "parserfree.commands.cli",
        "train",
        "--config",
        "configs/smoke.yaml",
        "--out",
        str(out),
        *DDP,
        *extra,
    ]
    for o in overrides:
        cmd += ["--set", o]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def pretraining(smoke_overrides):
    return [*smoke_overrides, "training.max_epochs=1", "recipe=pretrain_predictor", "data.task=none"]


@pytest.fixture(scope="module")
def straight(pretraining, tmp_path_factory):
    """An uninterrupted DDP pre-training run: (folder, metrics)."""
    out = tmp_path_factory.mktemp("ddp") / "straight"
    done = _train(out, pretraining)
    assert done.returncode == 0, done.stderr[-2000:]
    return out, json.loads((out / "metrics.json").read_text())


def test_predictor_pretraining_under_ddp_reports_the_best_checkpoint_on_the_whole_dev_split(straight):
    """metrics.json of the DDP run equals the best checkpoint evaluated here in one process on all of dev
    (not one rank's share of it, not another checkpoint)."""
    from parserfree.core.checkpoints import load_trained
    from parserfree.distill.config import load_config
    from parserfree.distill.data_module import SyntaxDataModule
    from parserfree.distill.evaluate import evaluate

    out, metrics = straight
    assert metrics["steps"] > 0
    config = load_config(out / "config.yaml")
    trained = load_trained(metrics["best_checkpoint"])
    data = SyntaxDataModule(config, None, trained.vocab, progress=False)
    data.setup()
    again = evaluate(trained.model, data.loader("dev"), trained.task, 2, config.recipe_row.eval_source)
    assert again["n_examples"] == metrics["dev"]["n_examples"] == len(data.splits["dev"])
    assert again["uuas"] == pytest.approx(metrics["dev"]["uuas"]) and again["dspr"] == pytest.approx(
        metrics["dev"]["dspr"]
    )


def test_ddp_run_killed_mid_epoch_resumes_to_the_same_weights(straight, pretraining, tmp_path):
    straight_dir, reference = straight
    kill_at = reference["steps"] // 2 + 1  # mid-epoch: after a mid-epoch save, before the end

    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    killed = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "resumed"), str(kill_at), *pretraining],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    saved = torch.load(tmp_path / "resumed" / "checkpoints" / "last.ckpt", weights_only=True)
    assert 0 < saved["global_step"] < kill_at and len(saved["rng_states"]) == 2  # one stream per process

    resumed = _train(tmp_path / "resumed", pretraining, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    result = json.loads((tmp_path / "resumed" / "metrics.json").read_text())
    assert result["steps"] == reference["steps"]
    assert result["dev"] == reference["dev"] and result["test"] == reference["test"]
    final = torch.load(tmp_path / "resumed" / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]
    straight_weights = torch.load(straight_dir / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]
    assert all(torch.equal(final[k], straight_weights[k]) for k in straight_weights)
