"""The serving install: ``pip install .`` without the ``train`` extra, in a fresh venv, serves both sizes'
bundles over HTTP with no PyTorch, Lightning or transformers, and a training command says what is missing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from parserfree.commands.cli import TRAINING_MODULES
from parserfree.export import ParserFreeModel

from bench.lib.served import free_port

REPO = Path(__file__).resolve().parents[2]
TEXTS = ["the keys to the cabinet are here", "Honestly, the ending felt awful and boring!"]


@pytest.fixture(scope="module")
def serving_venv(tmp_path_factory):
    """A venv with ``pip install <the working tree>`` only (from a copy of its files, so no build output lands
    in the checkout)."""
    root = tmp_path_factory.mktemp("serving")
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout
    source = root / "source"
    for name in filter(None, listed.decode().split("\0")):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", str(source)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return venv


def post(port: int, payload: dict) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/predict", json.dumps(payload).encode(), {"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.loads(reply.read())


def served(venv: Path, bundle: Path, cwd: Path, payload: dict) -> dict:
    """The reply of ``venv``'s ``parserfree serve`` of ``bundle`` to one /predict."""
    port = free_port()
    server = subprocess.Popen(
        [str(venv / "bin" / "parserfree"), "serve", "--model", str(bundle), "--port", str(port), "--threads", "1"],
        cwd=cwd,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, server.stderr.read()[-2000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the server did not answer /health in 120 s"
                time.sleep(0.1)
        return post(port, payload)
    finally:
        server.terminate()
        server.wait(10)


def test_the_serving_install_has_no_training_stack_and_serves_both_sizes(
    serving_venv, smoke_bundle, bert_bundle, tmp_path
):
    """Catches a serving dependency left in the train extra (the server or `parserfree predict` fails to start
    or to predict), a training dependency left in the serving install, and a served reply that differs from
    in-process predict."""
    probe = f"import importlib.util as u; print([m for m in {sorted(TRAINING_MODULES)!r} if u.find_spec(m)])"
    found = subprocess.run([str(serving_venv / "bin" / "python"), "-c", probe], capture_output=True, text=True)
    assert found.returncode == 0 and found.stdout.strip() == "[]", found.stdout + found.stderr
    for bundle in (smoke_bundle[0], bert_bundle):
        got = served(serving_venv, bundle, tmp_path, {"texts": TEXTS, "tree": True})["results"]
        want = ParserFreeModel.load(bundle, threads=1).predict(TEXTS, with_tree=True)
        assert [g["label"] for g in got] == [w["label"] for w in want]
        assert [g["heads"] for g in got] == [w["heads"] for w in want]
        names = want[0]["probabilities"]
        assert max(abs(g["probabilities"][n] - w["probabilities"][n]) for g, w in zip(got, want) for n in names) < 1e-4
    (tmp_path / "texts.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    predicted = subprocess.run(
        [str(serving_venv / "bin" / "parserfree"), "predict", "--model", str(smoke_bundle[0]), "--input", "texts.txt"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert predicted.returncode == 0, predicted.stderr[-2000:]
    want = ParserFreeModel.load(smoke_bundle[0], threads=1).predict(TEXTS)
    assert [json.loads(line)["label"] for line in predicted.stdout.splitlines()] == [w["label"] for w in want]


def test_a_training_command_in_the_serving_install_names_the_train_extra(serving_venv, tmp_path):
    """Catches a raw ModuleNotFoundError traceback where the serving install lacks the training stack."""
    done = subprocess.run(
        [str(serving_venv / "bin" / "parserfree"), "train", "--config", str(REPO / "configs" / "smoke.yaml")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert len(done.stderr.strip().splitlines()) == 1 and "parserfree[train]" in done.stderr
