"""A pre-trained Hugging Face encoder (BERT, RoBERTa, DistilBERT) with the syntax bias in its own attention.

The ``Encoder`` interface of ``encoder/model.py`` over the model's positions — its subwords and special
tokens (``encoder/subwords.py``) — instead of words. Nothing of the model is written again: its embeddings
run as they are, then its layers one by one, each with a 4-D additive attention mask (B×C×S×S) that its
own attention adds to the scores. Layers 1..k get the padding mask only; the predictor reads their output
pooled to words (``word_states``: the mean of a word's subwords). The biased layers add the syntax bias:
word distances (B×W×W) become subword distances (``position_distances``: every subword takes its word's
distances, special tokens and padding −1, which the bias reads as no bias). The layers are post-norm: no
final LayerNorm. The architecture is the model's ``config.json`` (``encoder.architecture``); the weights
come from the model's folder at the start of training (``load_pretrained``), from the checkpoint after.
``build_encoder`` is the one place that picks between this encoder and the project's.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from .architecture import PretrainedModelError, model_type, positions_of
from .config import EncoderConfig
from .distance_bias import SyntaxBias
from .model import Encoder, SyntaxEncoder
from .subwords import NO_WORD


class PretrainedEncoder(Encoder):
    """h_0 = E(subwords); h_k = layers 1..k(h_0, padding); h_N = layers k+1..N(h_k, padding + bias(D↑))
    where D↑ is the word distances spread over the subwords; ``bias`` is the one ``SyntaxBias``."""

    reads_subwords = True
    embedding_keys = ("model.embeddings.",)  # the model's word, position and type tables and their norm

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        architecture: dict[str, Any] | None = config.architecture
        if architecture is None:
            raise PretrainedModelError(
                f"encoder.pretrained={config.pretrained}: the model needs its architecture (encoder.architecture)"
            )
        from transformers import AutoConfig, AutoModel

        self.kind = model_type(architecture)
        self.config = config
        self.architecture = dict(architecture)
        hf_config = AutoConfig.for_model(self.kind, **{k: v for k, v in architecture.items() if k != "model_type"})
        hf_config._attn_implementation = "eager"  # adds the 4-D mask to the scores as given; exports to ONNX
        self.model = AutoModel.from_config(hf_config)
        self.pad_id = int(architecture.get("pad_token_id") or 0)
        self.bias = SyntaxBias(config.bias, config.n_heads, len(self.layers) - self.first_biased_layer)

    @property
    def layers(self) -> nn.ModuleList:  # type: ignore[override]  # they live in the model (its own state-dict keys)
        """The encoder's own layers, in order."""
        return self.model.transformer.layer if self.kind == "distilbert" else self.model.encoder.layer

    def load_pretrained(self, folder: str) -> None:
        """The pre-trained weights of ``folder`` (read by transformers itself); PretrainedModelError when they do
        not load or do not fit this architecture."""
        from transformers import AutoModel
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # quiet logs: no bar for a load of a few seconds
        try:
            trained = AutoModel.from_pretrained(folder, attn_implementation="eager")
            missing, unexpected = self.model.load_state_dict(trained.state_dict(), strict=False)
        except Exception as e:  # noqa: BLE001 — transformers and safetensors raise many kinds for a bad file
            raise PretrainedModelError(f"{folder}: its weights do not load ({str(e).splitlines()[0][:160]})") from None
        if missing:
            raise PretrainedModelError(f"{folder}: its weights lack {len(missing)} of the model's ({missing[0]}, …)")

    def check_length(self, word_ids: Tensor) -> None:
        """PretrainedModelError when a batch is longer than the encoder's positions (the vocabulary cuts)."""
        limit = positions_of(self.architecture)
        if not torch.jit.is_tracing() and word_ids.shape[1] > limit:
            raise PretrainedModelError(
                f"a batch of {word_ids.shape[1]} subwords is longer than the encoder's {limit} positions"
            )

    def embed(self, word_ids: Tensor, feature_ids: Tensor) -> Tensor:
        """Subword ids B×S → the encoder's embeddings h_0 B×S×d (its positions and token types included)."""
        self.check_length(word_ids)
        return self.model.embeddings(input_ids=word_ids)

    def position_mask(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor) -> Tensor:
        """The positions attention may read: every subword and special token, not the padding (B×S)."""
        return word_ids != self.pad_id

    def position_distances(self, distances: Tensor | None, feature_ids: Tensor) -> Tensor | None:
        """Word distances B×W×W → subword distances B×S×S: subwords i, j take d(word(i), word(j)); a special
        token or a padding position takes −1 (no bias, distance_bias.py). None stays None."""
        if distances is None:
            return None
        index = feature_ids[..., 0]  # B×S word of each subword
        real = index != NO_WORD
        at = index.clamp(min=0)
        b, s, w = index.shape[0], index.shape[1], distances.shape[1]
        rows = torch.gather(distances, 1, at[:, :, None].expand(b, s, w))  # B×S×W
        spread = torch.gather(rows, 2, at[:, None, :].expand(b, s, s))  # B×S×S
        pair = real[:, :, None] & real[:, None, :]
        return torch.where(pair, spread, torch.full_like(spread, -1))

    def word_states(self, h: Tensor, feature_ids: Tensor, mask: Tensor) -> Tensor:
        """Subword states B×S×d → word states B×W×d, each the mean of its word's subwords (0 on padding)."""
        words = torch.arange(mask.shape[1], device=h.device)
        share = (feature_ids[..., 0][:, :, None] == words[None, None, :]).to(h.dtype)  # B×S×W
        total = share.sum(1).clamp(min=1.0)  # B×W
        return torch.einsum("bsw,bsd->bwd", share, h) / total[..., None]

    def run_layers(self, layers: nn.ModuleList, h: Tensor, biases: list[Tensor]) -> Tensor:
        """The model's own layers in order, each adding its bias (B×C×S×S, padding mask included) to its scores."""
        for layer, bias in zip(layers, biases, strict=True):
            out = layer(h, attention_mask=bias)
            h = out[0] if isinstance(out, tuple) else out
        return h


def build_encoder(config: EncoderConfig) -> Encoder:
    """The encoder a config describes: a pre-trained one (``config.pretrained``, built from
    ``config.architecture``) or the project's own."""
    return PretrainedEncoder(config) if config.pretrained else SyntaxEncoder(config)
