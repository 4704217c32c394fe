"""Co-training end to end on the tiny fixture data: recipes, resume, pre-training, DDP."""

import csv
import subprocess
import sys

import pytest
import torch

from parserfree.distill.checkpoints import load_trained
from parserfree.distill.config import load_config
from parserfree.distill.train import train


def _train(overrides, out, extra=()):
    return train(load_config("configs/smoke.yaml", [*overrides, *extra]), out, progress=False)


@pytest.mark.parametrize("recipe", ["no_syntax", "parser_fed", "parser_free"])
def test_each_recipe_trains_a_few_steps(recipe, smoke_overrides, tmp_path):
    result = _train(smoke_overrides, tmp_path, [f"recipe={recipe}", "training.max_steps=4", "training.max_epochs=1"])
    assert result["steps"] == 4
    dev = result["dev"]
    assert 0 <= dev["metric"] <= 100
    assert ("uuas" in dev) == (recipe == "parser_free")
    trained = load_trained(tmp_path / "checkpoints" / "last.ckpt")
    assert trained.recipe == recipe and (trained.model.predictor is not None) == (recipe == "parser_free")
    assert (tmp_path / "config.yaml").exists() and (tmp_path / "metrics.json").exists()


def test_smoke_run_learns_and_logs_the_schedule(smoke_run):
    out, metrics = smoke_run
    assert metrics["dev"]["metric"] > 60  # the fixture sentences are easy: well above chance
    rows = list(csv.DictReader(open(out / "logs" / "metrics.csv")))
    p = [float(r["train/p"]) for r in rows if r.get("train/p")]
    assert p[0] > 0.5 and p[-1] == 0.0 and p == sorted(p, reverse=True)
    assert any(r.get("val/uuas") for r in rows) and any(r.get("train/distance_loss") for r in rows)


def test_resume_continues_from_the_same_step(smoke_overrides, tmp_path):
    first = _train(smoke_overrides, tmp_path / "a", ["training.max_epochs=1"])
    steps = first["steps"]
    ckpt = torch.load(tmp_path / "a" / "checkpoints" / "last.ckpt", weights_only=False)
    assert ckpt["global_step"] == steps
    config = load_config("configs/smoke.yaml", [*smoke_overrides, "training.max_epochs=2"])
    resumed = train(config, tmp_path / "a", resume=True, progress=False)
    assert resumed["steps"] == 2 * steps and resumed["epochs"] == 2
    straight = _train(smoke_overrides, tmp_path / "b", ["training.max_epochs=2"])
    assert resumed["dev"]["metric"] == straight["dev"]["metric"]
    assert resumed["dev"]["uuas"] == straight["dev"]["uuas"]


def test_pretrained_predictor_initialises_a_parser_free_run(smoke_overrides, tmp_path):
    pre = _train(smoke_overrides, tmp_path / "pre", ["recipe=pretrain_predictor", "data.task=none", "training.max_epochs=1"])
    assert "uuas" in pre["dev"] and "metric_name" not in pre["dev"]
    ckpt = tmp_path / "pre" / "checkpoints" / "best.ckpt"
    free = _train(smoke_overrides, tmp_path / "free", ["training.max_steps=2", f"training.init_from={ckpt}"])
    assert free["steps"] == 2
    before = load_trained(ckpt).model.predictor.state_dict()
    assert set(before) == set(load_trained(tmp_path / "free" / "checkpoints" / "last.ckpt").model.predictor.state_dict())


def test_two_process_ddp_run_completes(smoke_overrides, tmp_path):
    cmd = [sys.executable, "-m", "parserfree.cli", "train", "--config", "configs/smoke.yaml", "--out", str(tmp_path),
           "--devices", "2", "--strategy", "ddp", "--quiet", "--set", "training.max_epochs=1"]
    for o in smoke_overrides:
        cmd += ["--set", o]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "checkpoints" / "last.ckpt").exists() and (tmp_path / "metrics.json").exists()
