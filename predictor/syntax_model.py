"""The whole model, read top to bottom: encoder + distance predictor + task head, with its distance sources.

The piece that training (distill/) and export (export/) share. Layers 1..k give h_k; the predictor reads
h_k (or, with a parser tower and k = 0, the embeddings h_0 through layers of its own) and gives D̂ (and
the predicted heads and labels); the biased layers read the parser's D (``source="parser"``), D̂
(``source="predicted"``, what the parser-free graph does), the sequential distance |i − j|
(``source="sequential"``, a relative-position bias: the locality control) or nothing (``source="none"``).
A recipe without a predictor has ``predictor = None``. The task head pools the word states of h_N into one
prediction per text.

The encoder is either of the two behind the ``Encoder`` interface (``encoder/model.py``); it says how its
positions map to words, so the predictor, the distances and the task head stay word-level for either.

Initialisation: with ``seed`` given, the encoder, the predictor and the task head are each initialised
from their own seed, so models of different recipes built from one seed start from the same weights
wherever they share parts (the like-for-like comparison of recipes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import torch
from torch import Tensor, nn

from ..encoder.config import EncoderConfig
from ..encoder.conventions import PAD_DISTANCE
from ..encoder.masked_words import MASKED_LM, MaskedWordHead
from ..encoder.model import Encoder
from ..encoder.pretrained import build_encoder
from .config import PredictorConfig
from .distance_predictor import DistancePredictor, PredictorOutput
from .sources import MODEL_SOURCES, DistanceSource

# --- the task head ------------------------------------------------------------------------------

TASKS = ("classification", "regression")
PAIR_MULTIPLIER = 1_000_003  # a prime above any vocabulary size: (a, b) and (b, a) hash apart


def masked_mean(h: Tensor, mask: Tensor) -> Tensor:
    """h B×T×d, mask B×T bool → mean over real positions B×d (zeros for a row without real positions)."""
    weights = mask.to(h.dtype).unsqueeze(-1)  # B×T×1
    count = weights.sum(dim=1).clamp(min=1.0)  # B×1
    return (h * weights).sum(dim=1) / count


def pair_ids(word_ids: Tensor, vocab_size: int, buckets: int) -> Tensor:
    """Row of each pair of neighbouring words (w_t, w_t+1) in `NgramTerm`'s table, B×(T−1): its hash bucket
    (w_t · PAIR_MULTIPLIER + w_t+1) mod ``buckets``, after the ``vocab_size`` rows of the single words."""
    pairs = word_ids[:, :-1] * PAIR_MULTIPLIER + word_ids[:, 1:]
    return torch.remainder(pairs, buckets) + vocab_size


class NgramTerm(nn.Module):
    """Σ_t W[w_t] + Σ_t W[vocab_size + hash(w_t, w_t+1)] over the real words (B×C): a linear bag of words and
    hashed word pairs, zero-initialised; padding and pairs that reach into it add nothing."""

    def __init__(self, vocab_size: int, buckets: int, n_out: int) -> None:
        super().__init__()
        self.vocab_size, self.buckets = vocab_size, buckets
        self.table = nn.Embedding(vocab_size + buckets, n_out)
        nn.init.zeros_(self.table.weight)  # draws no random numbers: the seed's other weights are unchanged

    def forward(self, word_ids: Tensor, mask: Tensor) -> Tensor:
        """word_ids B×T, mask B×T bool → B×C."""
        words = self.table(word_ids) * mask.unsqueeze(-1).to(self.table.weight.dtype)
        pairs = self.table(pair_ids(word_ids, self.vocab_size, self.buckets))
        both = (mask[:, :-1] & mask[:, 1:]).unsqueeze(-1).to(pairs.dtype)
        return words.sum(dim=1) + (pairs * both).sum(dim=1)


class TaskHead(nn.Module):
    """logits = W · Dropout(masked_mean(h)) + b (+ the n-gram term): B×C for classification, B for regression.

    A masked mean over the real words uses every word (this encoder trains no first-token summary) and does
    not depend on the padded length. With ``encoder.ngram_buckets`` the ``NgramTerm`` is trained beside the
    encoder ("wide and deep"); it starts at zero, so the model starts as the same seed's model without."""

    def __init__(
        self,
        d_model: int,
        task: str,
        n_classes: int = 2,
        dropout: float = 0.0,
        vocab_size: int = 0,
        ngram_buckets: int = 0,
    ) -> None:
        super().__init__()
        if task not in TASKS:
            raise ValueError(f"task={task!r} must be one of {', '.join(TASKS)}")
        if task == "classification" and n_classes < 2:
            raise ValueError(f"n_classes={n_classes} must be ≥ 2 for classification")
        self.task = task
        self.dropout = nn.Dropout(dropout)
        n_out = n_classes if task == "classification" else 1
        self.proj = nn.Linear(d_model, n_out)
        self.ngrams = NgramTerm(vocab_size, ngram_buckets, n_out) if ngram_buckets else None

    def forward(self, h: Tensor, mask: Tensor, word_ids: Tensor | None = None) -> Tensor:
        """h B×T×d, mask B×T (word_ids B×T for the n-gram term) → logits B×C (classification) or scores B
        (regression)."""
        out = self.proj(self.dropout(masked_mean(h, mask)))
        if self.ngrams is not None:
            if word_ids is None:
                raise ValueError("a task head with an n-gram term needs the word ids")
            out = out + self.ngrams(word_ids, mask)
        return out if self.task == "classification" else out.squeeze(-1)


# --- the whole model -----------------------------------------------------------------------------


@dataclass
class ModelOutput:
    """Task output (B×C logits, B scores, or B×T word states for ``masked_lm``), when the model has a
    predictor, its output, and h_k, the unbiased layers' states every pass computes (what an auxiliary parser
    on layer k reads in training, without running layers 1..k again)."""

    task: Tensor | None
    predicted: PredictorOutput | None
    h_k: Tensor


class Outputs(StrEnum):
    """What a forward pass computes (``SyntaxModel.forward(outputs=…)``)."""

    BOTH = "both"  # the task output and the predictor's (training, evaluation with tree metrics, tree graphs)
    TASK = "task"  # the task output; the predictor runs only if the source reads D̂ (task graphs, scoring)
    TREE = "tree"  # the predictor's output only (pre-training the predictor)


class SyntaxModel(nn.Module):
    """encoder.lower → predictor (D̂) → encoder.upper(bias(D or D̂)) → task head."""

    def __init__(
        self,
        encoder_config: EncoderConfig,
        predictor_config: PredictorConfig | None,
        task: str,
        n_classes: int = 2,
        task_grad_to_predictor: bool = True,
        seed: int | None = None,
        dep_labels: Sequence[str] = (),
        distance_grad_to_encoder: bool = True,
    ) -> None:
        super().__init__()
        with _part_seed(seed, 0):
            self.encoder: Encoder = build_encoder(encoder_config)
        with _part_seed(seed, 1):
            self.predictor = (
                DistancePredictor(
                    encoder_config.d_model,
                    predictor_config,
                    encoder_config.max_len,
                    encoder_config.bias.max_distance,
                    dep_labels=dep_labels,
                    encoder=encoder_config,
                )
                if predictor_config is not None
                else None
            )
        head_task = "regression" if task == "regression" else "classification"  # binary is 2-class classification
        with _part_seed(seed, 2):
            self.head: TaskHead | MaskedWordHead | None = None
            if task == MASKED_LM:  # pre-training: a state per word, scored against the word table
                self.head = MaskedWordHead(encoder_config.d_model, encoder_config.vocab_size)
            elif task != "none":
                self.head = TaskHead(
                    encoder_config.d_model,
                    head_task,
                    n_classes,
                    encoder_config.dropout,
                    encoder_config.vocab_size,
                    encoder_config.ngram_buckets,
                )
        self.task_grad_to_predictor = task_grad_to_predictor
        self.distance_grad_to_encoder = distance_grad_to_encoder  # False: the predictor reads h_k detached

    def forward(
        self,
        word_ids: Tensor,  # B×T
        feature_ids: Tensor,  # B×T×F
        mask: Tensor,  # B×T bool
        distances: Tensor | None = None,  # B×T×T parser distances (long), needed for source="parser"
        source: DistanceSource = DistanceSource.PREDICTED,  # where the biased layers' distances come from
        outputs: Outputs = Outputs.BOTH,
    ) -> ModelOutput:
        """embed → layers 1..k (h_k) → predictor (D̂, when asked for or read) → biased layers reading the
        ``source``'s distances → task head. ``outputs`` says which of the task and the tree are computed.

        With ``task_grad_to_predictor`` the task loss reaches the predictor through D̂ (for the `heads`
        form straight through the predicted tree, built only in a training step that uses D̂); without,
        D̂ is detached and only the shared lower layers carry the task's gradient.
        """
        outputs = Outputs(outputs)
        task = outputs != Outputs.TREE and self.head is not None
        encoder = self.encoder
        h_0 = encoder.embed(word_ids, feature_ids)
        positions = encoder.position_mask(word_ids, feature_ids, mask)
        h_k = encoder.lower_from(h_0, positions)
        words_k = encoder.word_states(h_k, feature_ids, mask)  # B×T×d: what the predictor reads
        reads_prediction = task and source == DistanceSource.PREDICTED
        differentiable = reads_prediction and self.task_grad_to_predictor and self.training and torch.is_grad_enabled()
        wanted = outputs != Outputs.TASK or source == DistanceSource.PREDICTED
        predicted = (
            self.predict(word_ids, feature_ids, mask, words_k, differentiable)
            if self.predictor is not None and wanted
            else None
        )
        if not task:
            return ModelOutput(None, predicted, words_k)
        distances = encoder.position_distances(self.bias_distances(source, distances, predicted, mask), feature_ids)
        h = encoder.word_states(encoder.upper(h_0, h_k, positions, distances), feature_ids, mask)
        if isinstance(self.head, TaskHead):
            out = self.head(h, mask, word_ids if encoder.config.ngram_buckets else None)
        else:
            out = self.head(h, mask)
        return ModelOutput(out, predicted, words_k)

    def bias_distances(
        self, source: DistanceSource, distances: Tensor | None, predicted: PredictorOutput | None, mask: Tensor
    ) -> Tensor | None:
        """The distances the biased layers read for ``source``: the parser's D, D̂ (whole path lengths as
        int64 for a predicted tree: one table lookup each, distance_bias.py), |i − j|, or None (no bias)."""
        if source == DistanceSource.PARSER:
            return distances
        if source == DistanceSource.PREDICTED:
            if predicted is None:
                raise ValueError("source='predicted' needs a model with a distance predictor")
            d = predicted.distances if self.task_grad_to_predictor else predicted.distances.detach()
            return d.long() if predicted.whole else d
        if source == DistanceSource.SEQUENTIAL:
            return sequential_distances(mask)
        if source == DistanceSource.NONE:
            return None
        raise ValueError(f"source={source!r} must be one of {', '.join(MODEL_SOURCES)}")

    def word_logits(self, states: Tensor) -> Tensor:
        """``masked_lm``: the states N×d of hidden positions → scores N×V over the vocabulary (tied table)."""
        table = self.encoder.word_table
        if not isinstance(self.head, MaskedWordHead) or table is None:
            raise ValueError("word_logits needs a model of the project's encoder built for task 'masked_lm'")
        return self.head.word_logits(states, table)

    def predict(
        self,
        word_ids: Tensor,
        feature_ids: Tensor,
        mask: Tensor,
        h_k: Tensor | None = None,
        differentiable: bool = False,
    ) -> PredictorOutput:
        """The predictor alone: it reads its tower's states (its own embeddings of the ids) or h_k (computed
        here by the unbiased layers 1..k when not given; detached without ``distance_grad_to_encoder``)."""
        if self.predictor.tower is not None:
            h = self.predictor.tower(word_ids, feature_ids, mask)
        else:
            h = h_k if h_k is not None else self.encoder.lower(word_ids, feature_ids, mask)
            if not self.distance_grad_to_encoder:  # the shared layers learn from the task alone
                h = h.detach()
        return self.predictor(h, mask, differentiable)


def sequential_distances(mask: Tensor) -> Tensor:
    """mask B×T → |i − j| as B×T×T int64, PAD_DISTANCE on pairs touching padding (the locality control)."""
    positions = torch.cumsum(torch.ones_like(mask, dtype=torch.long), dim=1) - 1  # B×T: 0..T−1, traced with T
    d = (positions[:, :, None] - positions[:, None, :]).abs()
    pair = mask[:, :, None] & mask[:, None, :]
    return torch.where(pair, d, torch.full_like(d, PAD_DISTANCE))


class _part_seed:
    """Context: seed the global generator with (seed, part) inside, restore its state after; no-op for None."""

    def __init__(self, seed: int | None, part: int) -> None:
        self.seed, self.part = seed, part

    def __enter__(self) -> None:
        if self.seed is not None:
            self.state = torch.get_rng_state()
            torch.manual_seed(1_000_003 * self.seed + self.part)

    def __exit__(self, *exc) -> None:
        if self.seed is not None:
            torch.set_rng_state(self.state)
