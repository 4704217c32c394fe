"""Task heads: the encoder's token states → one prediction per text.

The last step of the data flow: h_N (B×T×d) from `SyntaxEncoder` is pooled into one vector per text and
mapped to class logits (classification) or one score (regression, e.g. a sentiment mean). Pooling is a
masked mean over the real words: it uses every word (unlike a first-token summary, which this encoder
does not train specially) and does not depend on the padded length; an all-pad row pools to zeros
instead of dividing by zero.

With ``encoder.ngram_buckets`` > 0 the head adds a linear term over the text's words and word pairs
(`NgramTerm`): one learned logit per class for every vocabulary word and for every hashed pair of
neighbouring words, summed over the text — a bag of 1- and 2-grams trained with the encoder, beside it
("wide and deep"). It starts at zero, so a model with it starts as the same seed's model without.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

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
    """logits = W · Dropout(masked_mean(h)) + b (+ the n-gram term): B×C for classification, B (squeezed) for
    regression."""

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
