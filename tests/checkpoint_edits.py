"""Checkpoints edited for tests: a parserfree checkpoint's settings changed, its model rebuilt from them and
written back, so a test can make a model of other settings from the smoke run's without training one."""

from __future__ import annotations

import copy
from pathlib import Path

import torch

from parserfree.encoder import EncoderConfig
from parserfree.predictor import PredictorConfig
from parserfree.predictor.syntax_model import SyntaxModel


def edited_meta(checkpoint: str | Path, **encoder: object) -> tuple[dict, dict]:
    """(state dict without the ``model.`` prefix, a copy of the checkpoint's settings with ``encoder`` changed
    in both the model's and the experiment's encoder section)."""
    ckpt = torch.load(checkpoint, map_location="cpu", weights_only=False)
    meta = copy.deepcopy(ckpt["parserfree"])
    meta["encoder"].update(encoder)
    meta["experiment"]["encoder"].update(encoder)
    state = {k.removeprefix("model."): v for k, v in ckpt["state_dict"].items()}
    return state, meta


def model_of(meta: dict) -> SyntaxModel:
    """The model a checkpoint's settings describe, with fresh weights."""
    return SyntaxModel(
        EncoderConfig.from_dict(meta["encoder"]),
        PredictorConfig.from_dict(meta["predictor"]),
        meta["task"],
        max(2, len(meta["label_names"])),
        dep_labels=meta["dep_labels"],
    )


def save_checkpoint(model: SyntaxModel, meta: dict, path: str | Path) -> None:
    """Write ``model``'s weights with ``meta`` as a parserfree checkpoint."""
    torch.save({"state_dict": {f"model.{k}": v for k, v in model.state_dict().items()}, "parserfree": meta}, path)
