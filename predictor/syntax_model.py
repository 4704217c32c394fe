"""The whole model: syntax encoder + distance predictor + task head, with two distance sources.

The piece that training (distill/) and export (export/) share. Layers 1..k give h_k; the predictor reads
h_k and gives D̂; layers k+1..N are biased either by the parser's D (``source="parser"``, teacher
forcing and the parser-fed recipe) or by D̂ (``source="predicted"``, what the exported graph does). A
recipe without a predictor (``no_syntax``, ``parser_fed``) simply has ``predictor = None``.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from parserfree.encoder import EncoderConfig, SyntaxEncoder, TaskHead
from parserfree.predictor.config import PredictorConfig
from parserfree.predictor.head import DistancePredictor, PredictorOutput


@dataclass
class ModelOutput:
    """Task output (B×C logits or B scores) and, when the model has a predictor, its output."""

    task: Tensor | None
    predicted: PredictorOutput | None


class SyntaxModel(nn.Module):
    """encoder.lower → predictor (D̂) → encoder.upper(bias(D or D̂)) → task head."""

    def __init__(
        self,
        encoder_config: EncoderConfig,
        predictor_config: PredictorConfig | None,
        task: str,
        n_classes: int = 2,
        task_grad_to_predictor: bool = True,
    ) -> None:
        super().__init__()
        self.encoder = SyntaxEncoder(encoder_config)
        self.predictor = (
            DistancePredictor(encoder_config.d_model, predictor_config, encoder_config.max_len)
            if predictor_config is not None
            else None
        )
        head_task = "regression" if task == "regression" else "classification"  # binary is 2-class classification
        self.head = TaskHead(encoder_config.d_model, head_task, n_classes, encoder_config.dropout) if task != "none" else None
        self.task_grad_to_predictor = task_grad_to_predictor

    def forward(
        self,
        word_ids: Tensor,  # B×T
        feature_ids: Tensor,  # B×T×F
        mask: Tensor,  # B×T bool
        distances: Tensor | None = None,  # B×T×T parser distances (long), needed for source="parser"
        source: str = "predicted",  # "predicted" | "parser" | "none"
        task: bool = True,  # False: stop after the predictor (pre-training)
    ) -> ModelOutput:
        """Run the model with the chosen distance source for the biased layers."""
        h_k = self.encoder.lower(word_ids, feature_ids, mask)
        predicted = self.predictor(h_k, mask) if self.predictor is not None else None
        if not task or self.head is None:
            return ModelOutput(None, predicted)
        if source == "parser":
            bias_distances = distances
        elif source == "predicted":
            if predicted is None:
                raise ValueError("source='predicted' needs a model with a distance predictor")
            bias_distances = predicted.distances if self.task_grad_to_predictor else predicted.distances.detach()
        elif source == "none":
            bias_distances = None
        else:
            raise ValueError(f"source={source!r} must be 'predicted', 'parser' or 'none'")
        h = self.encoder.upper(h_k, mask, bias_distances)
        return ModelOutput(self.head(h, mask), predicted)
