"""Language-model pre-training: co-training whose task is naming hidden words (``data.task: masked_lm``).

The same recipes, distance sources, predictor loss and optimiser as any task (``distill.co_training``);
only the task differs: each training step hides about 15 % of the known words (``encoder.masked_words``:
drawn from (seed, step), so a resumed run hides the same) and the loss is the cross-entropy of the hidden
words over the vocabulary. Evaluation hides a fixed set of words per sentence (a function of its text), so
every row is scored on the same hidden words and a sentence's scores pair across rows: its summed negative
log-likelihood, its number of hidden words and how many of them are the model's first choice
(``masked_word_scores``). The best checkpoint is chosen on dev masked-word accuracy (``val/metric``);
``val/perplexity`` is exp(mean NLL per hidden word).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from ..encoder.masked_words import NO_TARGET, hide, targets, training_choice
from ..predictor.sources import DistanceSource
from ..predictor.syntax_model import Outputs, SyntaxModel
from .co_training import CoTrainingModule
from .evaluate import in_dataset_order

WORD_SCORES = "word_scores.json"  # a run's test sentences' masked-word scores, in the dataset's order


class MaskedLMModule(CoTrainingModule):
    """``CoTrainingModule`` with the masked-word objective as its task."""

    def on_validation_epoch_start(self) -> None:
        self._lm = WordScores.empty()

    def training_inputs(self, batch: dict) -> dict:
        generator = torch.Generator().manual_seed(1_000_003 * self.config.seed + self.global_step)
        chosen, hidden = training_choice(batch["word_ids"], generator)
        return with_hidden(batch, chosen, hidden)

    def evaluation_inputs(self, batch: dict) -> dict:
        return with_hidden(batch, batch["lm_chosen"], batch["lm_chosen"])

    def task_loss(self, output: torch.Tensor, batch: dict) -> torch.Tensor:
        wanted = batch["lm_targets"] != NO_TARGET
        if not wanted.any():  # a batch without a known word: nothing to predict
            return output.sum() * 0.0
        return F.cross_entropy(self.model.word_logits(output[wanted]), batch["lm_targets"][wanted])

    def collect_validation(self, output: torch.Tensor, batch: dict) -> None:
        nll, n, correct = sentence_scores(self.model, output, batch["lm_targets"])
        self._lm = self._lm.extend(nll, n, correct)

    def log_task_scores(self) -> None:
        scores = getattr(self, "_lm", WordScores.empty())
        if scores.n.sum():
            self.log("val/metric", scores.accuracy, prog_bar=True)
            self.log("val/perplexity", scores.perplexity)


def with_hidden(batch: dict, chosen: torch.Tensor, hidden: torch.Tensor) -> dict:
    """The batch with the ``hidden`` words masked and ``lm_targets`` (the ``chosen`` known words' ids)."""
    word_ids, feature_ids = hide(batch["word_ids"], batch["feature_ids"], hidden)
    return {**batch, "word_ids": word_ids, "feature_ids": feature_ids, "lm_targets": targets(batch["word_ids"], chosen)}


def text_tree_distances(model: SyntaxModel, batch: dict) -> torch.Tensor:
    """The predictor's D̂ of the batch's text with no word hidden (the text a parser reads), in the form the
    biased layers read (``SyntaxModel.bias_distances``)."""
    predicted = model.predict(batch["word_ids"], batch["feature_ids"], batch["mask"])
    return model.bias_distances(DistanceSource.PREDICTED, None, predicted, batch["mask"])


def read_hidden(
    model: SyntaxModel, batch: dict, hidden: torch.Tensor, source: str, tree_of_text: bool = False
) -> tuple[torch.Tensor, dict]:
    """The model's states (B×T×d) with the ``hidden`` words masked, and the batch it was fed (``lm_targets``:
    the hidden known words). The biased layers read the ``source``'s distances; with ``tree_of_text`` they
    read the predictor's D̂ of the unmasked text in place of the parser's tree of it (``text_tree_distances``),
    while the encoder still sees the hidden words masked."""
    fed = with_hidden(batch, hidden, hidden)
    distances = text_tree_distances(model, batch) if tree_of_text else fed["distances"]
    read = DistanceSource.PARSER if tree_of_text else source
    out = model(fed["word_ids"], fed["feature_ids"], fed["mask"], distances, source=read, outputs=Outputs.TASK)
    return out.task, fed


def sentence_scores(model: SyntaxModel, states: torch.Tensor, lm_targets: torch.Tensor) -> tuple[np.ndarray, ...]:
    """Per sentence of a batch: (summed NLL of its targets, number of targets, targets ranked first)."""
    wanted = lm_targets != NO_TARGET
    b = states.shape[0]
    nll, n, correct = np.zeros(b), np.zeros(b, dtype=np.int64), np.zeros(b, dtype=np.int64)
    if wanted.any():
        logits = model.word_logits(states[wanted]).float()
        gold = lm_targets[wanted]
        losses = F.cross_entropy(logits, gold, reduction="none")
        rows = wanted.nonzero()[:, 0]
        np.add.at(nll, rows.numpy(), losses.detach().numpy())
        np.add.at(n, rows.numpy(), 1)
        np.add.at(correct, rows.numpy(), (logits.argmax(-1) == gold).numpy().astype(np.int64))
    return nll, n, correct


@dataclass(frozen=True)
class WordScores:
    """Masked-word scores per sentence, in one order: summed NLL, hidden words, first choices right."""

    nll: np.ndarray
    n: np.ndarray
    correct: np.ndarray

    @classmethod
    def empty(cls) -> WordScores:
        return cls(np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))

    def extend(self, nll: np.ndarray, n: np.ndarray, correct: np.ndarray) -> WordScores:
        return WordScores(
            np.concatenate([self.nll, nll]), np.concatenate([self.n, n]), np.concatenate([self.correct, correct])
        )

    @property
    def perplexity(self) -> float:
        """exp(Σ NLL / Σ hidden words)."""
        return math.exp(float(self.nll.sum()) / max(1, int(self.n.sum())))

    @property
    def accuracy(self) -> float:
        """Percent of hidden words ranked first."""
        return 100.0 * float(self.correct.sum()) / max(1, int(self.n.sum()))

    def summary(self) -> dict:
        """The split's scores: perplexity, accuracy (percent) and the number of hidden words."""
        return {"perplexity": self.perplexity, "accuracy": self.accuracy, "hidden_words": int(self.n.sum())}

    def to_dict(self) -> dict:
        return {"nll": self.nll.tolist(), "n": self.n.tolist(), "correct": self.correct.tolist()}


@torch.no_grad()
def masked_word_scores(model: SyntaxModel, loader: DataLoader, source: str, tree_of_text: bool = False) -> WordScores:
    """Every sentence's masked-word scores over a loader (its fixed hidden words), in the dataset's order
    (``tree_of_text``: the biased layers read the predictor's D̂ of the unmasked text, ``read_hidden``)."""
    model.eval()
    parts = WordScores.empty()
    for batch in loader:
        states, fed = read_hidden(model, batch, batch["lm_chosen"], source, tree_of_text)
        parts = parts.extend(*sentence_scores(model, states, fed["lm_targets"]))
    return WordScores(*(in_dataset_order(loader, values) for values in (parts.nll, parts.n, parts.correct)))
