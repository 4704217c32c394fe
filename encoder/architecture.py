"""A pre-trained encoder's ``config.json`` read as the project's sizes (no PyTorch: configs read it too).

The syntax bias enters the attention of BERT, RoBERTa and DistilBERT encoders (``encoder/pretrained.py``);
their config files name the same sizes differently, and RoBERTa keeps two positions for its padding offset.
"""

from __future__ import annotations

from typing import Any

from .errors import ParserfreeError

MODEL_TYPES = ("bert", "roberta", "distilbert")  # encoders whose layers take a 4-D additive mask
SIZE_FIELDS = {  # EncoderConfig field → config.json key, per model type
    "bert": {
        "d_model": "hidden_size",
        "n_heads": "num_attention_heads",
        "n_layers": "num_hidden_layers",
        "d_ff": "intermediate_size",
    },
    "distilbert": {"d_model": "dim", "n_heads": "n_heads", "n_layers": "n_layers", "d_ff": "hidden_dim"},
}
SIZE_FIELDS["roberta"] = SIZE_FIELDS["bert"]


class PretrainedModelError(ParserfreeError, ValueError):
    """A model folder or architecture this encoder cannot use (missing, damaged, another model type)."""


def model_type(architecture: dict[str, Any], source: str = "config.json") -> str:
    """The model type of a ``config.json``; PretrainedModelError unless it is one of MODEL_TYPES."""
    kind = architecture.get("model_type")
    if kind not in MODEL_TYPES:
        raise PretrainedModelError(
            f"{source}: model_type {kind!r} is not supported (the syntax bias enters the attention of "
            f"{', '.join(MODEL_TYPES)})"
        )
    return kind


def sizes_of(architecture: dict[str, Any]) -> dict[str, int]:
    """The encoder's sizes as EncoderConfig fields: d_model, n_heads, n_layers, d_ff, vocab_size."""
    fields = SIZE_FIELDS[model_type(architecture)]
    return {name: int(architecture[key]) for name, key in fields.items()} | {
        "vocab_size": int(architecture["vocab_size"])
    }


def positions_of(architecture: dict[str, Any]) -> int:
    """Positions a sentence may fill (RoBERTa keeps two for its padding offset)."""
    offset = 2 if model_type(architecture) == "roberta" else 0
    return int(architecture["max_position_embeddings"]) - offset
