"""In-graph distances (predictor/tree_ops.py) against the teacher's numpy distances (distill/trees.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from parserfree.distill.trees import batch_tree_distances, tree_distances
from parserfree.encoder.conventions import CROSS_TREE_DISTANCE
from parserfree.predictor.tree_ops import (
    distances_from_heads,
    distances_from_parents,
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


def test_single_trees_and_forests_equal_teacher(make_forest, make_chain):
    rng = np.random.default_rng(0)
    cases = [make_chain(60), make_chain(64), np.array([0])]
    cases += [make_forest(rng, int(rng.integers(2, 61)), int(rng.integers(1, 4))) for _ in range(40)]
    for heads in cases:
        h = torch.from_numpy(heads).unsqueeze(0)
        got = distances_from_heads(h, h >= 0, STEPS_64)[0]
        np.testing.assert_array_equal(got.numpy(), tree_distances(heads).astype(np.float32))


def test_padded_batch_equals_teacher(make_forest, make_chain):
    rng = np.random.default_rng(1)
    batch = [make_chain(50), make_forest(rng, 7, 2), np.array([0]), make_forest(rng, 33), make_forest(rng, 12, 3)]
    heads, mask = _padded(batch, 52)  # two columns of pure padding
    got = distances_from_heads(heads, mask, STEPS_64)
    expected = batch_tree_distances([h.tolist() for h in batch], length=52)
    np.testing.assert_array_equal(got.numpy(), expected.astype(np.float32))


def test_a_cycle_gives_finite_bounded_distances():
    # Words 0 ↔ 1 form a cycle, 2 hangs below 1, 3 below 2; word 4 is a separate, proper tree.
    # anc(0) = anc(1) = {0, 1}, anc(2) = {0, 1, 2}, anc(3) = {0, 1, 2, 3}, anc(4) = {4}.
    heads = torch.tensor([[1, 0, 1, 2, 4]])
    got = distances_from_heads(heads, heads >= 0, steps_for_length(5))[0]
    c = CROSS_TREE_DISTANCE
    expected = [[0, 0, 1, 2, c], [0, 0, 1, 2, c], [1, 1, 0, 1, c], [2, 2, 1, 0, c], [c, c, c, c, 0]]
    np.testing.assert_array_equal(got.numpy(), np.array(expected, dtype=np.float32))


def test_random_argmax_heads_with_cycles_match_reachability():
    """Any head function: D̂ = |anc i| + |anc j| − 2|anc i ∩ anc j| with anc = reachable set, ≤ 2T."""
    rng = np.random.default_rng(2)
    for _ in range(20):
        t = int(rng.integers(2, 25))
        heads = rng.integers(0, t, size=t)
        reach = []
        for i in range(t):
            seen, k = {i}, i
            while heads[k] not in seen:
                k = int(heads[k])
                seen.add(k)
            reach.append(seen)
        h = torch.from_numpy(heads).unsqueeze(0)
        got = distances_from_heads(h, h >= 0, steps_for_length(t))[0].numpy()
        assert np.isfinite(got).all()
        for i in range(t):
            for j in range(t):
                common = len(reach[i] & reach[j])
                want = CROSS_TREE_DISTANCE if common == 0 else len(reach[i]) + len(reach[j]) - 2 * common
                if i == j:
                    want = 0
                assert got[i, j] == want
                assert got[i, j] == CROSS_TREE_DISTANCE or 0 <= got[i, j] <= 2 * t


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
