"""The checkpoint format: a trained run's file → a plain PyTorch model, without Lightning; a damaged or foreign file → one clear error.

The hand-off from training to export and comparison: a Lightning checkpoint of ``CoTrainingModule``
carries, besides the weights, the resolved experiment, the encoder and predictor configs, the
vocabulary, the label names and the dependency label inventory (``checkpoint["parserfree"]``; an older
checkpoint without the inventory has no label scorer). ``load_trained`` rebuilds the
``SyntaxModel`` from those alone; training writes the section (``distill/co_training.py``), export and the
comparison read it. Every file is read with ``torch.load(weights_only=True)`` (tensors and
plain data only, never arbitrary pickled code) after a look at its first bytes, so an empty, truncated,
random or foreign file stops with a ``CheckpointError`` naming the file and what is wrong with it.
Starting a run from a checkpoint, or resuming one, is ``distill/starts.py``.
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import torch

from ..encoder import EncoderConfig, Vocabulary
from ..encoder.errors import ParserfreeError
from ..encoder.subwords import SubwordVocabulary
from ..encoder.vocabulary import vocabulary_from_dict
from ..predictor import PredictorConfig
from ..predictor.syntax_model import SyntaxModel

CHECKPOINT_FORMAT = 1
META_KEYS = ("experiment", "encoder", "predictor", "vocab", "label_names", "task", "recipe")


class CheckpointError(ParserfreeError, ValueError):
    """A checkpoint that cannot be used: missing, damaged, foreign, or not the model the config asks for."""


@dataclass
class TrainedModel:
    """A trained model and everything needed to feed it and read its output."""

    model: SyntaxModel
    vocab: Vocabulary | SubwordVocabulary
    experiment: dict
    encoder_config: EncoderConfig
    predictor_config: PredictorConfig | None
    label_names: list[str]
    task: str
    recipe: str
    path: Path
    dep_labels: tuple[str, ...] = ()  # the dependency label inventory (empty: no label scorer)


def _looks_like(head: bytes) -> str:
    """A guess at what a file that is not a PyTorch checkpoint is, from its first bytes."""
    if head.startswith(b"\x1f\x8b"):
        return "a gzip file"
    if head.lstrip()[:1] in (b"{", b"["):
        return "JSON text"
    if head.startswith(b"\x08") and b"onnx" in head.lower():
        return "an ONNX model"
    try:
        head.decode("utf-8")
        return "a text file"
    except UnicodeDecodeError:
        return "unrecognised binary data"


def _first_line(error: BaseException) -> str:
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return text if len(text) <= 120 else text[:117] + "…"


def read_checkpoint(path: str | Path) -> dict:
    """The contents of a parserfree checkpoint file, or CheckpointError saying what the file is instead."""
    p = Path(path)
    if not p.exists():
        raise CheckpointError(f"{p}: no such checkpoint")
    if p.is_dir():
        raise CheckpointError(f"{p}: is a folder; expected a checkpoint file such as <run>/checkpoints/best.ckpt")
    size = p.stat().st_size
    if size == 0:
        raise CheckpointError(f"{p}: empty file (0 bytes), not a parserfree checkpoint")
    with open(p, "rb") as f:
        head = f.read(256)
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(p) as archive:
                names = archive.namelist()
        except (zipfile.BadZipFile, OSError):
            raise CheckpointError(
                f"{p}: truncated or damaged checkpoint ({size:,} bytes; its zip archive is incomplete)"
            ) from None
        if not any(n.endswith("data.pkl") for n in names):
            raise CheckpointError(f"{p}: a zip archive but not a PyTorch checkpoint")
    elif not head.startswith(b"\x80"):  # neither torch's zip format nor its legacy pickle format
        raise CheckpointError(f"{p}: not a parserfree checkpoint (looks like {_looks_like(head)})")
    try:
        ckpt = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 — every way torch fails to read the file means: damaged
        raise CheckpointError(
            f"{p}: damaged or foreign checkpoint, unreadable by torch.load ({_first_line(e)})"
        ) from None
    meta = ckpt.get("parserfree") if isinstance(ckpt, dict) else None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{p}: not a parserfree checkpoint (a PyTorch file without the 'parserfree' section)")
    if not isinstance(meta.get("format"), int) or meta["format"] > CHECKPOINT_FORMAT:
        raise CheckpointError(
            f"{p}: checkpoint format {meta.get('format')!r} is not one this parserfree reads "
            f"(≤ {CHECKPOINT_FORMAT}); upgrade parserfree"
        )
    missing = [k for k in META_KEYS if k not in meta] + (
        [] if isinstance(ckpt.get("state_dict"), dict) else ["state_dict"]
    )
    if missing:
        raise CheckpointError(f"{p}: damaged parserfree checkpoint (no {', '.join(missing)})")
    return ckpt


def encoder_record(meta: dict) -> dict:
    """The encoder section of a checkpoint's metadata; a checkpoint written before the section held
    ``architecture`` (a pre-trained encoder's config.json) kept it beside the section, and is read so."""
    encoder = dict(meta["encoder"])
    if meta.get("architecture") is not None and encoder.get("architecture") is None:
        encoder["architecture"] = meta["architecture"]
    return encoder


def checkpoint_configs(meta: dict) -> tuple[EncoderConfig, PredictorConfig | None]:
    """The encoder and predictor settings a checkpoint's metadata records (the predictor's None: no predictor)."""
    encoder = EncoderConfig.from_dict(encoder_record(meta))
    predictor = PredictorConfig.from_dict(meta["predictor"]) if meta["predictor"] else None
    return encoder, predictor


def load_trained(path: str | os.PathLike) -> TrainedModel:
    """Rebuild the model of a run's checkpoint (``best.ckpt``/``last.ckpt``) in eval mode on the CPU."""
    path = Path(path)
    ckpt = read_checkpoint(path)
    meta = ckpt["parserfree"]
    try:
        enc, pred = checkpoint_configs(meta)
        vocab = vocabulary_from_dict(meta["vocab"], source=f"{path} (vocabulary)")
        n_classes = max(2, len(meta["label_names"]))
        grad = bool(meta["experiment"].get("training", {}).get("task_grad_to_predictor", True))
        dep_labels = tuple(str(label) for label in meta.get("dep_labels") or ())
        model = SyntaxModel(enc, pred, meta["task"], n_classes, grad, dep_labels=dep_labels)
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise CheckpointError(
            f"{path}: damaged parserfree checkpoint (its settings do not build a model: {_first_line(e)})"
        ) from None
    state = {k.removeprefix("model."): v for k, v in ckpt["state_dict"].items() if k.startswith("model.")}
    try:
        model.load_state_dict(state)
    except RuntimeError as e:
        raise CheckpointError(
            f"{path}: damaged parserfree checkpoint (its weights do not fit the model its "
            f"settings describe: {_first_line(e)})"
        ) from None
    model.eval()
    return TrainedModel(
        model,
        vocab,
        meta["experiment"],
        enc,
        pred,
        meta["label_names"],
        meta["task"],
        meta["recipe"],
        path,
        dep_labels,
    )
