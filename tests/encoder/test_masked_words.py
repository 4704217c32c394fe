"""Masked words: what a hidden word shows, which words are hidden, and the tied word scores."""

from __future__ import annotations

import numpy as np
import torch

from parserfree.encoder import PAD_ID, UNK_ID, Vocabulary
from parserfree.encoder.masked_words import (
    NO_TARGET,
    MaskedWordHead,
    fixed_choice,
    hide,
    known_words,
    targets,
    training_choice,
)

SENTENCES = [
    "the keys to the cabinet are on the table".split(),
    "a dog barks".split(),
    "the old man who lives next door to the school walks his two dogs every single morning".split(),
]


def _vocab() -> Vocabulary:
    return Vocabulary.build(SENTENCES[:2], min_freq=1)


def test_a_hidden_word_shows_neither_its_id_nor_its_suffix():
    vocab = _vocab()
    word_ids, feature_ids, mask = (torch.from_numpy(a) for a in vocab.encode_batch(SENTENCES[:2], 16))
    hidden = torch.zeros_like(mask)
    hidden[0, 5] = True  # "are": its suffix feature would give its number away
    ids, feats = hide(word_ids, feature_ids, hidden)
    assert ids[0, 5] == UNK_ID and feats[0, 5].eq(0).all()
    assert torch.equal(ids[~hidden], word_ids[~hidden]) and torch.equal(feats[~hidden], feature_ids[~hidden])
    unknown = vocab.encode_batch([["zyzzyva"]], 4)[1][0, 0]
    assert (unknown != 0).all()  # a real unknown word keeps its features: the mask is an input no text gives


def test_evaluation_hides_the_same_words_in_any_batch():
    vocab = Vocabulary.build(SENTENCES, min_freq=1)
    alone = [
        fixed_choice([s], known_words(torch.from_numpy(vocab.encode_batch([s], 32)[0])).numpy())[0] for s in SENTENCES
    ]
    word_ids = torch.from_numpy(vocab.encode_batch(SENTENCES[::-1], 32)[0])
    together = fixed_choice(SENTENCES[::-1], known_words(word_ids).numpy())
    for b, s in enumerate(SENTENCES[::-1]):
        n = len(s)
        assert np.array_equal(together[b, :n], alone[len(SENTENCES) - 1 - b][:n])
        assert together[b].sum() == max(1, round(0.15 * n)) and not together[b, n:].any()


def test_targets_leave_out_unknown_words_and_padding():
    word_ids = torch.tensor([[5, UNK_ID, 7, PAD_ID]])
    chosen = torch.tensor([[True, True, False, True]])
    assert targets(word_ids, chosen).tolist() == [[5, NO_TARGET, NO_TARGET, NO_TARGET]]


def test_training_draws_repeat_for_a_step_and_differ_between_steps():
    word_ids = torch.randint(2, 50, (8, 30))
    a = training_choice(word_ids, torch.Generator().manual_seed(3))
    b = training_choice(word_ids, torch.Generator().manual_seed(3))
    c = training_choice(word_ids, torch.Generator().manual_seed(4))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) and not torch.equal(a[0], c[0])
    chosen, hidden = a
    assert (hidden <= chosen).all() and 0.08 < chosen.float().mean() < 0.22
    assert hidden.sum() < chosen.sum()  # some chosen words are left as they are


def test_word_scores_read_the_word_embedding_table():
    head = MaskedWordHead(8, 20)
    table = torch.randn(20, 8)
    states = torch.randn(3, 8)
    scores = head.word_logits(states, table)
    table[4] += 1.0
    assert scores.shape == (3, 20)
    changed = head.word_logits(states, table) - scores
    assert torch.allclose(changed[:, 4], states.sum(-1)) and changed[:, :4].abs().max() == 0
    assert not any(p.shape == (20, 8) for p in head.parameters())  # no table of its own: the weights are tied
