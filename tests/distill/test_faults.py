"""Faults: a training run or a parse killed with SIGKILL resumes to exactly what an uninterrupted one gives;
two runs with the same seed agree exactly."""

from __future__ import annotations

import csv
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from parserfree.distill import parse_cache
from parserfree.distill.config import load_config
from parserfree.distill.parse_cache import parse_cached
from parserfree.distill.train import train

ROOT = Path(__file__).resolve().parents[2]

# A real training process that kills itself (SIGKILL: no clean-up runs) at the end of one training step.
KILLED_TRAINING = """
import os, signal, sys
import lightning as L
from parserfree.distill.config import load_config
from parserfree.distill.train import train

class KillAt(L.Callback):
    def on_train_batch_end(self, trainer, *args):
        if trainer.global_step == int(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)

train(load_config("configs/smoke.yaml", sys.argv[3:]), sys.argv[1], progress=False, callbacks=[KillAt()])
"""


def test_training_killed_mid_epoch_resumes_to_the_same_metrics(smoke_run, smoke_overrides, tmp_path):
    reference_dir, reference = smoke_run  # the same config and seed, never interrupted
    per_epoch = reference["steps"] // reference["epochs"]
    kill_at = per_epoch + per_epoch // 2 + 1  # half-way through the second epoch
    done = subprocess.run(
        [sys.executable, "-c", KILLED_TRAINING, str(tmp_path), str(kill_at), *smoke_overrides],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert not (tmp_path / "metrics.json").exists()

    saved = torch.load(tmp_path / "checkpoints" / "last.ckpt", weights_only=False)
    step = saved["global_step"]
    assert per_epoch < step < kill_at  # the resume point lies inside the second epoch
    assert saved["loops"]["fit_loop"]["state_dict"]["combined_loader"] == [{"epoch": 1, "batches": step - per_epoch}]

    resumed = train(load_config("configs/smoke.yaml", smoke_overrides), tmp_path, resume=True, progress=False)
    assert (resumed["steps"], resumed["epochs"]) == (reference["steps"], reference["epochs"])
    assert resumed["dev"] == reference["dev"] and resumed["test"] == reference["test"]
    final = torch.load(tmp_path / "checkpoints" / "last.ckpt", weights_only=False)["state_dict"]
    straight = torch.load(reference_dir / "checkpoints" / "last.ckpt", weights_only=False)["state_dict"]
    assert all(torch.equal(final[k], straight[k]) for k in straight)
    # the training curve survives the kill: every row the uninterrupted run logged, once, with its values
    # (Lightning deleted the file on resume, and rows past its last 100-step flush died with the process)
    assert _curve(tmp_path) == _curve(reference_dir)


def _curve(run_dir: Path) -> list[tuple]:
    """A run's logs/metrics.csv as (epoch, step, loss, dev metric) rows in step order."""
    with open(run_dir / "logs" / "metrics.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return sorted((int(r["epoch"]), int(r["step"]), r["train/loss"], r["val/metric"]) for r in rows)


@pytest.mark.slow
def test_two_runs_with_the_same_seed_give_identical_metrics(smoke_overrides, tmp_path):
    short = [*smoke_overrides, "training.max_epochs=1", "training.limit_train_batches=0.3"]
    first = train(load_config("configs/smoke.yaml", short), tmp_path / "a", progress=False)
    second = train(load_config("configs/smoke.yaml", short), tmp_path / "b", progress=False)
    assert first["steps"] == second["steps"] > 0
    assert first["dev"] == second["dev"] and first["test"] == second["test"]


# A real parse process, chunks of 4 texts, that dies with SIGKILL half-way through writing chunk 2.
KILLED_PARSE = """
import importlib.util, os, signal, sys
import numpy as np
import pytest
from parserfree.distill import parse_cache

spec = importlib.util.spec_from_file_location("fixtures", sys.argv[2])
fixtures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fixtures)
parse_cache.CHUNK_SIZE = 4
real_savez = np.savez

def half_written_chunk_2(path, **arrays):
    real_savez(path, **arrays)
    if int(arrays["index"]) == 2:
        data = open(path, "rb").read()
        open(path, "wb").write(data[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)

parse_cache.np.savez = half_written_chunk_2
texts = [f"word{i} and more words ." for i in range(18)]
parse_cache.parse_cached(texts, fixtures.ChainTeacher(), sys.argv[1], progress=False)
"""


def test_parse_killed_while_writing_resumes_and_cleans_up(tmp_path, chain_teacher, monkeypatch):
    monkeypatch.setattr(parse_cache, "CHUNK_SIZE", 4)
    texts = [f"word{i} and more words ." for i in range(18)]  # 5 chunks
    done = subprocess.run(
        [sys.executable, "-c", KILLED_PARSE, str(tmp_path), str(ROOT / "tests" / "conftest.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    (folder,) = (tmp_path / "parses").iterdir()
    assert sorted(p.name for p in folder.glob("chunk-*")) == ["chunk-00000.npz", "chunk-00001.npz"]
    assert len(list(folder.glob(".chunk-00002.*.tmp.npz"))) == 1  # the killed writer's half file

    parses, stats = parse_cached(texts, chain_teacher, tmp_path, progress=False)
    assert (stats["reused"], stats["parsed"]) == (2, 3) and chain_teacher.parsed == 10
    assert not list(folder.glob(".*tmp*"))
    again, _ = parse_cached(texts, type(chain_teacher)(), tmp_path / "fresh", progress=False)
    assert [p.words for p in parses] == [p.words for p in again]
    assert all(np.array_equal(a.heads, b.heads) for a, b in zip(parses, again))


def test_a_resumed_curve_drops_the_rows_its_run_logs_again(tmp_path):
    """Rows flushed after the resume point (a killed run's last steps) are logged again by the resumed run:
    kept, they would appear twice with two values; the rows before it are kept once, under the new header, and
    a line cut short by the kill does not stop the resume."""
    from parserfree.distill.train import RunCurve

    logs = tmp_path / "logs"
    logs.mkdir()
    # the last line was cut short when the killed run was writing it
    (logs / "metrics.csv").write_text("epoch,step,train/loss\n0,9,0.9\n0,19,0.8\n1,29,0.7\n1,")
    curve = RunCurve(tmp_path, resume_step=20)
    curve.log_metrics({"epoch": 1, "train/loss": 0.6, "val/metric": 55.0}, step=29)
    curve.save()
    rows = list(csv.DictReader(open(logs / "metrics.csv", newline="")))
    assert [(r["step"], r["train/loss"], r["val/metric"]) for r in rows] == [
        ("9", "0.9", ""),
        ("19", "0.8", ""),
        ("29", "0.6", "55.0"),
    ]
    started_over = RunCurve(tmp_path)  # not resuming: another run's curve is not this one's
    started_over.log_metrics({"epoch": 0, "train/loss": 1.5}, step=9)
    started_over.save()
    assert [r["train/loss"] for r in csv.DictReader(open(logs / "metrics.csv", newline=""))] == ["1.5"]
