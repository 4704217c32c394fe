"""D̂ from powers of the head adjacency, clamped where the bias saturates, against the pointer-jumping D̂:
the same distances up to the cap on every forest (trees deeper than the cap, several roots, padding), the
same heads, and the same bias — so the task graph may compute either (export/onnx_graph.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from parserfree.encoder import EncoderConfig
from parserfree.encoder.config import BiasConfig
from parserfree.encoder.conventions import CROSS_TREE_DISTANCE, PAD_DISTANCE
from parserfree.encoder.distance_bias import SyntaxBias
from parserfree.predictor import PredictorConfig
from parserfree.predictor.syntax_model import SyntaxModel
from parserfree.predictor.tree_ops import clamped_distances_from_heads, distances_from_heads, steps_for_length

STEPS = steps_for_length(256)


def _padded(batch: list[np.ndarray], t: int) -> tuple[torch.Tensor, torch.Tensor]:
    heads = torch.full((len(batch), t), -1, dtype=torch.long)
    for b, h in enumerate(batch):
        heads[b, : h.size] = torch.from_numpy(h)
    return heads, heads >= 0


def _exact_clamped(heads: torch.Tensor, mask: torch.Tensor, cap: int) -> torch.Tensor:
    """The pointer-jumping D̂ clamped at ``cap`` on word pairs, PAD_DISTANCE elsewhere (what the bias reads)."""
    exact = distances_from_heads(heads, mask, STEPS)
    return torch.where(mask[:, :, None] & mask[:, None, :], exact.clamp(max=float(cap)), float(PAD_DISTANCE))


@pytest.mark.parametrize("cap", [1, 2, 3, 10, 11])
def test_clamped_powers_equal_the_pointer_jumps_on_deep_trees_forests_and_padding(make_forest, make_chain, cap):
    rng = np.random.default_rng(cap)
    batch = [make_chain(60), make_chain(12), np.array([0]), make_forest(rng, 40, 3), make_forest(rng, 25)]
    batch += [make_forest(rng, int(rng.integers(2, 58)), int(rng.integers(1, 4))) for _ in range(12)]
    heads, mask = _padded(batch, 64)  # padding on every row, four columns of pure padding
    exact = distances_from_heads(heads, mask, STEPS)
    assert exact[0].max() == 59 and (exact == CROSS_TREE_DISTANCE).any()  # deeper than any cap, and forests
    got = clamped_distances_from_heads(heads, mask, cap)
    torch.testing.assert_close(got, _exact_clamped(heads, mask, cap), rtol=0, atol=0)
    assert got.dtype == torch.float32


@st.composite
def padded_forests(draw) -> tuple[list[np.ndarray], int]:
    """A batch of 1–4 random forests (1–3 roots, chains among them, up to 45 words) and a padded length."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    batch = []
    for _ in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 45))
        if draw(st.booleans()):
            batch.append(np.minimum(np.arange(n) + 1, n - 1))  # a chain: depth n − 1
            continue
        order = rng.permutation(n)
        heads = np.empty(n, dtype=np.int64)
        roots = draw(st.integers(1, min(3, n)))
        for k, word in enumerate(order):
            heads[word] = word if k < roots else order[rng.integers(0, k)]
        batch.append(heads)
    return batch, max(h.size for h in batch) + draw(st.integers(0, 3))


@settings(max_examples=60, deadline=None)
@given(padded_forests(), st.integers(1, 12))
def test_any_padded_forest_gets_the_clamped_pointer_jump_distances(case, cap):
    batch, t = case
    heads, mask = _padded(batch, t)
    got = clamped_distances_from_heads(heads, mask, cap)
    torch.testing.assert_close(got, _exact_clamped(heads, mask, cap), rtol=0, atol=0)


def test_a_cap_below_one_is_refused():
    heads = torch.zeros((1, 1), dtype=torch.long)
    with pytest.raises(ValueError, match="cap"):
        clamped_distances_from_heads(heads, heads >= 0, 0)


@pytest.mark.parametrize(
    "bias",
    [
        {},  # learned, one bucket per distance: one lookup per integer
        {"log_buckets_from": 4, "max_distance": 12},  # learned, log buckets: interpolated
        {"mode": "fixed_decay"},
        {"mode": "hard_mask", "hard_mask_k": 13},  # a mask wider than max_distance: it reads d up to 14
        {"mode": "hard_mask", "hard_mask_k": 0},
        {"mode": "none"},
    ],
)
def test_distances_clamped_at_the_saturation_give_the_same_bias(bias):
    """A clamp below where the bias stops changing would change it (e.g. the hard mask past max_distance)."""
    module = SyntaxBias(BiasConfig.from_dict({"zero_init": False, **bias}), n_heads=2)
    d = torch.tensor([[list(range(30)) + [CROSS_TREE_DISTANCE, PAD_DISTANCE]]]).expand(1, 32, 32)
    mask = torch.ones((1, 32), dtype=torch.bool)
    cap = module.saturation()
    clamped = torch.where(d >= 0, d.clamp(max=cap), d)
    torch.testing.assert_close(module(clamped, mask), module(d, mask), rtol=0, atol=0)
    if cap > 1:  # and one step lower would not do
        assert not torch.equal(module(torch.where(d >= 0, d.clamp(max=cap - 1), d), mask), module(d, mask))


def _model(bias: dict) -> SyntaxModel:
    encoder = EncoderConfig.from_dict(
        {"vocab_size": 40, "d_model": 16, "n_heads": 2, "n_layers": 2, "d_ff": 32, "max_len": 64}
        | {"predictor_layer": 1, "bias": {"zero_init": False, **bias}}
    )
    model = SyntaxModel(encoder, PredictorConfig(arc_dim=8, label_dim=0), "binary", 2, seed=0).eval()
    torch.manual_seed(0)
    for p in model.predictor.parameters():
        torch.nn.init.normal_(p, std=0.5)
    scorer = model.predictor.arc_scorer
    with torch.no_grad():  # a strong preference for the next word as head: long chains, deeper than any cap
        scorer.relative.weight[scorer.max_relative_position + 1] = 8.0
    return model


@pytest.mark.parametrize("bias", [{}, {"mode": "hard_mask", "hard_mask_k": 3}, {"max_distance": 2}])
def test_the_model_with_clamped_distances_predicts_the_same_trees_and_task_outputs(bias):
    model = _model(bias)
    rng = np.random.default_rng(0)
    lengths = [64, 40, 3, 1, 17]
    word_ids = torch.from_numpy(rng.integers(2, 40, (len(lengths), 64)))
    feature_ids = torch.from_numpy(rng.integers(0, 4096, (len(lengths), 64, 3)))
    mask = torch.arange(64)[None, :] < torch.tensor(lengths)[:, None]
    with torch.no_grad():
        exact = model(word_ids, feature_ids, mask)
        model.predictor.distance_cap = model.encoder.bias.saturation()
        clamped = model(word_ids, feature_ids, mask)
    assert exact.predicted.distances[mask[:, :, None] & mask[:, None, :]].max() > model.predictor.distance_cap
    torch.testing.assert_close(clamped.predicted.heads, exact.predicted.heads, rtol=0, atol=0)
    torch.testing.assert_close(clamped.task, exact.task, rtol=0, atol=1e-6)
