"""In-graph distances (predictor/tree_ops.py, also the teacher's distances in core/trees.py) against
the per-pair walk and the matrix-product form, and the in-graph cycle finder against a walk."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from parserfree.core.trees import brute_force_distances
from parserfree.encoder.conventions import PAD_DISTANCE
from parserfree.predictor.tree_ops import (
    distances_from_heads,
    distances_from_parents,
    on_cycle,
    parents_from_heads,
    steps_for_length,
)

STEPS_64 = steps_for_length(64)


def _padded(batch: list[np.ndarray], t: int) -> tuple[torch.Tensor, torch.Tensor]:
    heads = torch.full((len(batch), t), -1, dtype=torch.long)
    for b, h in enumerate(batch):
        heads[b, : h.size] = torch.from_numpy(h)
    return heads, heads >= 0


@pytest.mark.parametrize(("max_len", "steps"), [(1, 1), (2, 1), (3, 2), (64, 6), (65, 7), (256, 8)])
def test_steps_cover_max_len(max_len, steps):
    assert steps_for_length(max_len) == steps


def test_single_trees_and_forests_equal_the_walk(make_forest, make_chain):
    rng = np.random.default_rng(0)
    cases = [make_chain(60), make_chain(64), np.array([0])]
    cases += [make_forest(rng, int(rng.integers(2, 61)), int(rng.integers(1, 4))) for _ in range(40)]
    for heads in cases:
        h = torch.from_numpy(heads).unsqueeze(0)
        got = distances_from_heads(h, h >= 0, STEPS_64)[0]
        np.testing.assert_array_equal(got.numpy(), brute_force_distances(heads).astype(np.float32))


def test_padded_batch_equals_the_walk(make_forest, make_chain):
    rng = np.random.default_rng(1)
    batch = [make_chain(50), make_forest(rng, 7, 2), np.array([0]), make_forest(rng, 33), make_forest(rng, 12, 3)]
    heads, mask = _padded(batch, 52)  # two columns of pure padding
    got = distances_from_heads(heads, mask, STEPS_64)
    expected = np.full((len(batch), 52, 52), PAD_DISTANCE)
    for b, h in enumerate(batch):
        expected[b, : h.size, : h.size] = brute_force_distances(h)
    np.testing.assert_array_equal(got.numpy(), expected.astype(np.float32))


@st.composite
def padded_forests(draw) -> tuple[list[list[int]], int]:
    """A batch of 1–4 random forests (1–3 roots, up to 40 words) and a padded length ≥ the longest."""
    batch = []
    for _ in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 40))
        order = draw(st.permutations(range(n)))
        n_roots = draw(st.integers(1, min(3, n)))
        heads = [0] * n
        for k, word in enumerate(order):
            heads[word] = word if k < n_roots else order[draw(st.integers(0, k - 1))]
        batch.append(heads if draw(st.booleans()) else [min(i + 1, n - 1) for i in range(n)])  # or the deepest tree
    return batch, max(len(h) for h in batch) + draw(st.integers(0, 3))


@settings(max_examples=60, deadline=None)
@given(padded_forests())
def test_pointer_jumping_equals_brute_force_and_the_matrix_product_form(case):
    """On valid forests the O(T² log T) gathers give exactly the per-pair walk and the old T³ products."""
    batch, t = case
    heads, mask = _padded([np.array(h) for h in batch], t)
    steps = steps_for_length(t)  # the fewest steps that cover the padded length
    got = distances_from_heads(heads, mask, steps)
    products = distances_from_parents(parents_from_heads(heads), mask, steps)
    torch.testing.assert_close(got, products, atol=0, rtol=0)
    for b, h in enumerate(batch):
        n = len(h)
        np.testing.assert_array_equal(got[b, :n, :n].numpy(), brute_force_distances(h).astype(np.float32))
        assert (got[b, n:] == PAD_DISTANCE).all() and (got[b, :, n:] == PAD_DISTANCE).all()


@settings(max_examples=40, deadline=None)
@given(padded_forests(), st.data())
def test_pads_anywhere_get_pad_distance_and_leave_the_words_distances_alone(case, data):
    """Pad positions in the middle of an example (not only at its end), even one that a word names as its
    head: its pairs are PAD_DISTANCE, and the words keep the distances of the forest where it is a root."""
    batch, t = case
    heads, _ = _padded([np.array(h) for h in batch], t)
    heads = torch.where(heads >= 0, heads, torch.arange(t))  # words past a forest's end are roots
    rows = st.lists(st.booleans(), min_size=t, max_size=t)
    mask = torch.tensor(data.draw(st.lists(rows, min_size=len(batch), max_size=len(batch))))
    got = distances_from_heads(torch.where(mask, heads, -1), mask, steps_for_length(t))
    for b in range(len(batch)):
        roots_at_pads = [h if m else i for i, (h, m) in enumerate(zip(heads[b].tolist(), mask[b].tolist()))]
        expected = brute_force_distances(roots_at_pads).astype(np.float32)
        expected[~mask[b].numpy()] = PAD_DISTANCE
        expected[:, ~mask[b].numpy()] = PAD_DISTANCE
        np.testing.assert_array_equal(got[b].numpy(), expected)


@pytest.mark.parametrize("max_len", [2048, 2049, 2**20])
def test_distances_stay_exact_in_a_graph_built_for_very_long_sentences(make_forest, max_len):
    """The pre-order positions are scaled by about 2^n_steps: past 2^11 words that leaves float32's exact
    integers, so such graphs must compute in float64 (a float32 graph here is off by one or two)."""
    rng = np.random.default_rng(5)
    batch = [make_forest(rng, 90, 3), make_forest(rng, 64), np.array([0])]
    heads, mask = _padded(batch, 90)
    got = distances_from_heads(heads, mask, steps_for_length(max_len))
    expected = np.full((len(batch), 90, 90), PAD_DISTANCE)
    for b, h in enumerate(batch):
        expected[b, : h.size, : h.size] = brute_force_distances(h)
    np.testing.assert_array_equal(got.numpy(), expected.astype(np.float32))


def _cycle_words(heads: list[int]) -> set[int]:
    """Words on a cycle of the head function (self-loops of roots excluded), by walking from every word."""
    on = set()
    for i in range(len(heads)):
        seen, k = [], i
        while k not in seen:
            seen.append(k)
            k = heads[k]
        if heads[k] != k:
            on.update(seen[seen.index(k) :])
    return on


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 29), min_size=1, max_size=30))
def test_on_cycle_finds_exactly_the_words_on_cycles_of_any_head_function(raw):
    n = len(raw)
    heads = [h % n for h in raw]
    h = torch.tensor([heads + [-1, -1]])
    got = on_cycle(h, h >= 0, steps_for_length(n + 2))[0]
    assert set(np.nonzero(got.numpy())[0].tolist()) == _cycle_words(heads)


def test_on_cycle_after_a_tail_as_long_as_the_sentence():
    # 0 → 1 → … → 12 → 13 → 14 → 12: a 12-word tail into a 3-cycle (16 words: 4 doubling steps, 16 ≥ 12
    # walk steps, where 8 would not do); 15 is a proper root.
    heads = list(range(1, 15)) + [12, 15]
    h = torch.tensor([heads])
    got = on_cycle(h, h >= 0, steps_for_length(len(heads)))[0]
    assert np.nonzero(got.numpy())[0].tolist() == [12, 13, 14]


def test_sharp_probabilities_approach_exact_distances(make_forest):
    rng = np.random.default_rng(3)
    heads = torch.from_numpy(make_forest(rng, 20, 2)).unsqueeze(0)
    mask = heads >= 0
    logits = 30.0 * parents_from_heads(heads)  # nearly one-hot rows
    soft = distances_from_parents(torch.softmax(logits, dim=-1), mask, STEPS_64)
    exact = distances_from_heads(heads, mask, STEPS_64)
    torch.testing.assert_close(soft, exact, atol=1e-3, rtol=0)


def test_soft_parents_pass_gradient_to_every_logit(make_forest):
    rng = np.random.default_rng(4)
    heads = torch.from_numpy(make_forest(rng, 9)).unsqueeze(0)
    mask = heads >= 0
    logits = (2.0 * parents_from_heads(heads) + 0.1 * torch.randn(1, 9, 9)).requires_grad_()
    distances = distances_from_parents(torch.softmax(logits, dim=-1), mask, steps_for_length(9))
    assert (distances >= 0).all() and (distances < 2 * 9).all()
    distances.sum().backward()
    assert torch.isfinite(logits.grad).all()
    assert (logits.grad.abs().sum(dim=-1) > 0).all()  # every word's head choice is reached
