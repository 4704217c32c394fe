"""Exporting a checkpoint with its own held-out data: what ``parserfree export`` and the main job run.

``export.export_bundle`` reads no dataset (serving stays apart from training), so this joins the two
sides: the checkpoint is loaded once (``core.checkpoints``), its data's held-out sentences are read by the
training side (``distill.held_out``), and both go to the export.
"""

from __future__ import annotations

import os

from ..core.checkpoints import load_trained
from ..distill.held_out import held_out_of
from ..export.builder import export_bundle


def export_checkpoint(checkpoint: str | os.PathLike, out_dir: str | os.PathLike, **options) -> dict:
    """``export_bundle(checkpoint, out_dir, **options)`` checked on the checkpoint's own held-out sentences
    (parity texts, test split, a treebank's words); returns the bundle's manifest."""
    trained = load_trained(checkpoint)
    return export_bundle(trained, out_dir, held_out=held_out_of(trained.experiment), **options)
