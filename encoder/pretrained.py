"""A pre-trained Hugging Face encoder (BERT, RoBERTa, DistilBERT) with the syntax bias in its own attention.

The same interface as ``SyntaxEncoder`` (``embed``, ``lower_from``, ``upper``, ``lower``), over the encoder's
positions — its subwords and special tokens (``encoder/subwords.py``) — instead of words. Nothing of the
model is written again: its embeddings run as they are, then its layers one by one, each with a 4-D additive
attention mask (B×C×S×S) that its own attention adds to the scores. Layers 1..k get the padding mask only;
the predictor reads their output pooled to words (``word_states``: the mean of a word's subwords). The
biased layers (k+1..N, or all with ``bias_all_layers``) add the syntax bias: the word-level distances
(B×W×W, the parser's D or the predictor's D̂) become subword-level (``position_distances``: every subword
of a word takes its word's distances, special tokens and padding take −1, which the bias turns into no
bias) and go through the project's one ``SyntaxBias`` (its table, scale and padding mask).
``word_states`` of the last layer feed the task head. The layers are post-norm: no final LayerNorm.

The architecture comes from the model's ``config.json`` (``architecture``, kept in every checkpoint), the
weights from the folder at the start of training (``load_weights``) or from the checkpoint after.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from .architecture import PretrainedModelError, model_type, positions_of
from .config import EncoderConfig
from .distance_bias import SyntaxBias, key_padding_bias
from .subwords import NO_WORD


class PretrainedEncoder(nn.Module):
    """h_0 = E(subwords); h_k = layers 1..k(h_0, padding); h_N = layers k+1..N(h_k, padding + bias(D↑))
    where D↑ is the word distances spread over the subwords; ``bias`` is the one ``SyntaxBias``."""

    def __init__(self, config: EncoderConfig, architecture: dict[str, Any] | None) -> None:
        super().__init__()
        if architecture is None:
            raise PretrainedModelError(
                f"encoder.pretrained={config.pretrained}: the model needs its architecture (config.json)"
            )
        from transformers import AutoConfig, AutoModel

        self.kind = model_type(architecture)
        self.config = config
        self.architecture = dict(architecture)
        hf_config = AutoConfig.for_model(self.kind, **{k: v for k, v in architecture.items() if k != "model_type"})
        hf_config._attn_implementation = "eager"  # adds the 4-D mask to the scores as given; exports to ONNX
        self.model = AutoModel.from_config(hf_config)
        self.pad_id = int(architecture.get("pad_token_id") or 0)
        self.bias = SyntaxBias(config.bias, config.n_heads)

    @property
    def layers(self) -> nn.ModuleList:
        """The encoder's own layers, in order."""
        return self.model.transformer.layer if self.kind == "distilbert" else self.model.encoder.layer

    def load_weights(self, folder: str) -> None:
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

    def run_layers(self, layers, h: Tensor, bias: Tensor) -> Tensor:
        """The model's own layers in order, each adding ``bias`` (B×C×S×S, padding mask included) to its scores."""
        for layer in layers:
            out = layer(h, attention_mask=bias)
            h = out[0] if isinstance(out, tuple) else out
        return h

    def lower_from(self, h_0: Tensor, mask: Tensor) -> Tensor:
        """Layers 1..k with the padding mask only (mask B×S) → h_k B×S×d."""
        return self.run_layers(self.layers[: self.config.predictor_layer], h_0, key_padding_bias(mask, h_0.dtype))

    @property
    def first_biased_layer(self) -> int:
        """Index of the first layer that receives the bias: 0 with ``bias_all_layers``, else k."""
        return 0 if self.config.bias_all_layers else self.config.predictor_layer

    def upper(self, h_0: Tensor, h_k: Tensor, mask: Tensor, distances: Tensor | None) -> Tensor:
        """The biased layers on subword distances B×S×S (None: padding mask only) → h_N B×S×d."""
        h = h_0 if self.config.bias_all_layers else h_k
        bias = key_padding_bias(mask, h.dtype) if distances is None else self.bias(distances, mask)
        return self.run_layers(self.layers[self.first_biased_layer :], h, bias)

    def lower(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor) -> Tensor:
        """Word states of layer k (what the predictor reads), B×W×d."""
        positions = self.position_mask(word_ids, feature_ids, mask)
        return self.word_states(self.lower_from(self.embed(word_ids, feature_ids), positions), feature_ids, mask)
