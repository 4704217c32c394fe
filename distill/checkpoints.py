"""Trained checkpoints → plain PyTorch models, without Lightning.

The hand-off from training to export and comparison: a Lightning checkpoint of ``CoTrainingModule``
carries, besides the weights, the resolved experiment, the encoder and predictor configs, the
vocabulary and the label names (``checkpoint["parserfree"]``). ``load_trained`` rebuilds the
``SyntaxModel`` from those alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from parserfree.encoder import EncoderConfig, Vocabulary
from parserfree.predictor import PredictorConfig
from parserfree.predictor.syntax_model import SyntaxModel

CHECKPOINT_FORMAT = 1


@dataclass
class TrainedModel:
    """A trained model and everything needed to feed it and read its output."""

    model: SyntaxModel
    vocab: Vocabulary
    experiment: dict
    encoder_config: EncoderConfig
    predictor_config: PredictorConfig | None
    label_names: list[str]
    task: str
    recipe: str
    path: Path


def load_trained(path: str | Path) -> TrainedModel:
    """Rebuild the model of a run's checkpoint (``best.ckpt``/``last.ckpt``) in eval mode on the CPU."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such checkpoint")
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    meta = ckpt.get("parserfree") if isinstance(ckpt, dict) else None
    if meta is None:
        raise ValueError(f"{path}: not a parserfree checkpoint (no 'parserfree' section)")
    if meta.get("format", 0) > CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: checkpoint format {meta['format']} is newer than this parserfree ({CHECKPOINT_FORMAT})")
    enc = EncoderConfig.from_dict(meta["encoder"])
    pred = PredictorConfig.from_dict(meta["predictor"]) if meta["predictor"] else None
    n_classes = max(2, len(meta["label_names"]))
    model = SyntaxModel(enc, pred, meta["task"], n_classes, meta["experiment"]["training"]["task_grad_to_predictor"])
    state = {k.removeprefix("model."): v for k, v in ckpt["state_dict"].items() if k.startswith("model.")}
    model.load_state_dict(state)
    model.eval()
    return TrainedModel(model, Vocabulary.from_dict(meta["vocab"]), meta["experiment"], enc, pred, meta["label_names"], meta["task"], meta["recipe"], path)
