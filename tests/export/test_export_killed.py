"""A real export process killed with SIGKILL mid-way leaves no bundle at its target, only a hidden partial folder."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from parserfree.export import BundleError, ParserFreeModel

ROOT = Path(__file__).resolve().parents[2]

# Export with --optimize; the process kills itself when the optimised variant is about to be written,
# i.e. after model.onnx, the tokenizer and the parity check are already on disk.
KILLED_EXPORT = """
import os, signal, sys
import parserfree.export.builder as builder
import parserfree.jobs.exporting as exporting

def killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

builder.optimize_model = killed
exporting.export_checkpoint(sys.argv[1], sys.argv[2], optimize=True, threads=1)
"""


def test_killed_export_leaves_nothing_that_loads(smoke_checkpoint, tmp_path):
    out = tmp_path / "bundle"
    done = subprocess.run(
        [sys.executable, "-c", KILLED_EXPORT, str(smoke_checkpoint), str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert not out.exists()
    with pytest.raises(BundleError):
        ParserFreeModel.load(out)
    (partial,) = tmp_path.iterdir()
    assert partial.name.startswith(".bundle.partial-") and (partial / "model.onnx").exists()
    assert not (partial / "manifest.json").exists()  # the manifest is the last file a bundle gets


def test_next_export_clears_a_killed_exports_leftovers(smoke_checkpoint, tmp_path):
    from parserfree.jobs.exporting import export_checkpoint

    leftover = tmp_path / ".bundle.partial-killed"
    leftover.mkdir()
    (leftover / "model.onnx").write_bytes(b"half")
    export_checkpoint(smoke_checkpoint, tmp_path / "bundle", threads=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]
    ParserFreeModel.load(tmp_path / "bundle")
