"""Damaged and tampered files for the tests of one-line errors: the ways a file the CLI reads gets damaged,
and a bundle manifest edited by someone who knows the format."""

from __future__ import annotations

import json
import random
from pathlib import Path

import torch

from parserfree.encoder.files import sha256_file

DAMAGE = ("truncated", "zero_bytes", "random_bytes", "another_model")


def damage_file(path, kind: str, other=None) -> None:
    """Damage ``path`` in place: cut to half its bytes, emptied, overwritten with random bytes, or replaced by
    another model's file (``other``; by default a PyTorch checkpoint of an unrelated model)."""
    path = Path(path)
    if kind == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif kind == "zero_bytes":
        path.write_bytes(b"")
    elif kind == "random_bytes":
        path.write_bytes(b"\x07" + random.Random(0).randbytes(4095))
    elif kind == "another_model":
        if other is not None:
            path.write_bytes(Path(other).read_bytes())
        else:
            torch.save(torch.nn.Linear(4, 2).state_dict(), path)
    else:
        raise ValueError(f"unknown damage {kind!r}")


def rewrite_manifest(bundle, change) -> None:
    """Edit the manifest with ``change(manifest)`` and re-seal it, as someone who knows the format would."""
    path = bundle / "manifest.json"
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest))
    (bundle / "manifest.sha256").write_text(f"{sha256_file(path)}  manifest.json\n")
