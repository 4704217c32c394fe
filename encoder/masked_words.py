"""Masked words: the language-model objective of the encoder, and the head that predicts a hidden word.

Pre-training (``data.task: masked_lm``, docs/language_model.md) hides whole words and asks the encoder
to name them. The vocabulary is word-level, so a token is a word and masking one hides the whole word. A
hidden word is the unknown word with no sub-word features (word id ``UNK_ID``, every feature id 0): a
real unknown word always has features, so the mask is an input no text produces, and nothing of the
hidden word (its suffix, its shape) shows through. Targets are the vocabulary's words (the encoder's own
ids, the 30,000 most frequent of the training text by default): the softmax runs over them, and a word
outside the vocabulary is never a target (it would be ``<unk>``, which says nothing).

``MaskedWordHead`` maps h_N to a state per word (dense → GELU → LayerNorm, as BERT's head) whose scores
over the vocabulary are read against the word embedding table itself (tied weights) plus a bias per word;
the scores are computed only at the hidden positions (``word_logits``), never as a B×T×V tensor.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor, nn

from .vocabulary import PAD_ID, UNK_ID

MASKED_LM = "masked_lm"  # the task (``data.task``) of language-model pre-training
MASK_SHARE = 0.15  # words hidden per sentence (at least one where a sentence has a known word)
KEEP_SHARE = (
    0.2  # of the words chosen in training, the share left as they are (the model must not trust the mask alone)
)
NO_TARGET = -100  # torch's ignore_index: positions that are not predicted


class MaskedWordHead(nn.Module):
    """h_N B×T×d → B×T×d states; ``word_logits`` scores them against the (tied) word embedding table."""

    def __init__(self, d_model: int, vocab_size: int) -> None:
        super().__init__()
        self.dense = nn.Linear(d_model, d_model)
        self.activation = nn.GELU()
        self.norm = nn.LayerNorm(d_model)
        self.word_bias = nn.Parameter(torch.zeros(vocab_size))

    def forward(self, h: Tensor, mask: Tensor) -> Tensor:
        """h B×T×d (mask unused: every position gets a state; only hidden ones are scored) → B×T×d."""
        return self.norm(self.activation(self.dense(h)))

    def word_logits(self, states: Tensor, word_embedding: Tensor) -> Tensor:
        """states N×d (the hidden positions), word_embedding V×d → scores N×V."""
        return states @ word_embedding.t() + self.word_bias


def known_words(word_ids: Tensor) -> Tensor:
    """B×T bool: the positions that can be targets (a word of the vocabulary, not padding nor ``<unk>``)."""
    return (word_ids != PAD_ID) & (word_ids != UNK_ID)


def hide(word_ids: Tensor, feature_ids: Tensor, hidden: Tensor) -> tuple[Tensor, Tensor]:
    """The input with the ``hidden`` B×T positions masked: word id ``UNK_ID``, feature ids 0."""
    return (
        torch.where(hidden, torch.full_like(word_ids, UNK_ID), word_ids),
        feature_ids.masked_fill(hidden.unsqueeze(-1), 0),
    )


def targets(word_ids: Tensor, chosen: Tensor) -> Tensor:
    """B×T targets: the word id where ``chosen`` (and known), ``NO_TARGET`` elsewhere."""
    return torch.where(chosen & known_words(word_ids), word_ids, torch.full_like(word_ids, NO_TARGET))


def training_choice(word_ids: Tensor, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """(chosen, hidden), both B×T bool, for one training batch: each known word is chosen with probability
    ``MASK_SHARE``; a chosen word is hidden, or with probability ``KEEP_SHARE`` left as it is (still a
    target). ``generator`` makes the draw depend on the step only (a resumed run draws the same)."""
    known = known_words(word_ids)
    draw = torch.rand(word_ids.shape, generator=generator)
    keep = torch.rand(word_ids.shape, generator=generator) < KEEP_SHARE
    chosen = known & (draw < MASK_SHARE)
    return chosen, chosen & ~keep


def fixed_choice(sentences: Sequence[Sequence[str]], known: np.ndarray) -> np.ndarray:
    """B×T bool: the words evaluation hides, a function of each sentence's text only (so every model, run
    and batch size hides the same ones): round(15 %) of its known words, at least one, drawn with a
    generator seeded by the CRC32 of the sentence. ``known`` B×T bool (``known_words``)."""
    chosen = np.zeros_like(known)
    for b, words in enumerate(sentences):
        positions = np.flatnonzero(known[b])
        if not len(positions):
            continue
        k = max(1, round(MASK_SHARE * len(positions)))
        rng = np.random.default_rng(zlib.crc32(" ".join(words).encode("utf-8")))
        chosen[b, rng.choice(positions, size=k, replace=False)] = True
    return chosen
