import math

import pytest
import torch

from parserfree.encoder import BIAS_MODES, MASK_VALUE, BiasConfig, SyntaxBias, key_padding_bias
from parserfree.encoder.conventions import CROSS_TREE_DISTANCE as CROSS_TREE


def filled(config: BiasConfig, n_heads: int = 2, dtype=torch.float32, n_layers: int = 1) -> SyntaxBias:
    """A SyntaxBias whose table holds distinct non-zero values and whose scale is not 1."""
    bias = SyntaxBias(config, n_heads, n_layers).to(dtype)
    with torch.no_grad():
        if bias.table is not None:
            bias.table.weight.copy_(torch.randn_like(bias.table.weight, generator=torch.Generator().manual_seed(0)))
        if bias.scale is not None:
            bias.scale.fill_(1.5)
    return bias


def test_zero_init_learned_table_and_unit_scale():
    bias = SyntaxBias(BiasConfig(), n_heads=4)
    assert bias.table.weight.shape == (11, 1)
    assert (bias.table.weight == 0).all() and bias.scale.item() == 1.0
    assert SyntaxBias(BiasConfig(per_head=True), n_heads=4).table.weight.shape == (11, 4)


@pytest.mark.parametrize("per_head", [False, True])
@pytest.mark.parametrize("as_float", [False, True])
def test_per_layer_tables_give_each_layer_its_own_columns_not_one_shared_bias(per_head, as_float):
    bias = filled(BiasConfig(per_layer=True, per_head=per_head), n_heads=2, n_layers=3)
    heads = 2 if per_head else 1
    assert bias.table.weight.shape == (11, 3 * heads)
    mask = torch.tensor([[True, True, True, False]])
    d = torch.tensor([[[0, 1, 2, -1], [1, 0, 1, -1], [2, 1, 0, -1], [-1, -1, -1, -1]]])
    layers = bias.for_layers(bias(d.float() if as_float else d, mask), 3)
    table = bias.table.weight.detach() * 1.5
    for i, layer in enumerate(layers):
        assert layer.shape == (1, heads, 4, 4)
        expected = table[d[0, :3, :3], i * heads : (i + 1) * heads].permute(2, 0, 1)  # its own columns
        torch.testing.assert_close(layer[0, :, :3, :3], expected)
        assert (layer[0, :, :, 3] == MASK_VALUE).all()
    assert not torch.allclose(layers[0], layers[1])
    padding_only = bias.for_layers(key_padding_bias(mask), 3)  # no distances: every layer the padding term
    assert len(padding_only) == 3 and all(p.shape == (1, 1, 1, 4) for p in padding_only)
    with pytest.raises(ValueError, match="2 biased layers"):
        bias.for_layers(bias(d, mask), 2)
    names = bias.column_names()
    assert names[0] == ("layer 1 head 0" if per_head else "layer 1") and len(names) == 3 * heads
    shared = filled(BiasConfig(per_head=per_head), n_heads=2, n_layers=3)  # without per_layer: one table
    assert shared.table.weight.shape == (11, heads) and len(shared.for_layers(shared(d, mask), 3)) == 3


@pytest.mark.parametrize("log_from", [None, 4])
def test_a_prior_slope_starts_the_table_as_a_decay_in_distance_not_at_zero(log_from):
    config = BiasConfig(max_distance=10, log_buckets_from=log_from, prior_slope=0.5, per_head=True)
    bias = SyntaxBias(config, n_heads=3)
    expected = -0.5 * bias.bucket_distances()
    torch.testing.assert_close(bias.curve(), expected[:, None].expand(-1, 3))
    d = torch.tensor([[[0, 2, -1], [2, 0, -1], [-1, -1, -1]]])  # the third word is padding
    out = bias(d, torch.tensor([[True, True, False]]))
    assert out[0, :, 0, 1].tolist() == pytest.approx([-1.0] * 3)  # −0.5 · 2, every head alike
    assert (out[0, :, :, 2] == MASK_VALUE).all() and torch.isfinite(out).all()  # padding: masked, not biased
    with pytest.raises(ValueError, match="prior_slope"):
        BiasConfig(prior_slope=-1.0).validate()


def test_integer_lookup_clamps_and_cross_tree_is_last_bucket():
    bias = filled(BiasConfig(max_distance=4))
    d = torch.tensor([[[0, 1, 3], [4, 7, CROSS_TREE], [2, 2, 2]]])  # 1×3×3
    out = bias(d, torch.ones(1, 3, dtype=torch.bool))  # 1×1×3×3
    curve = bias.curve()
    expected = curve[d.clamp(max=4)]
    torch.testing.assert_close(out[0, 0], expected[0], rtol=0, atol=0)


def hand_bias(bias: SyntaxBias, d: int) -> torch.Tensor:
    """The learned bias of distance d by hand: 1.5 · the table interpolated at the bucket position p(d) of
    docs/design.md §1 (p = d up to L, L + n_log · ln(d/L)/ln(max/L) above it, clamped to max) → (C,)."""
    max_d, low_from = bias.config.max_distance, bias.config.log_buckets_from
    d = min(d, max_d)
    if low_from is None or d <= low_from:
        p = float(d)
    else:
        n_log = math.ceil(math.log2(max_d / low_from))
        p = low_from + n_log * math.log(d / low_from) / math.log(max_d / low_from)
    table = bias.table.weight.detach() * 1.5  # filled() sets the scale to 1.5
    below = min(math.floor(p), table.shape[0] - 2)
    return table[below] + (table[below + 1] - table[below]) * (p - below)


@pytest.mark.parametrize("log_from", [None, 3])
@pytest.mark.parametrize("per_head", [False, True])
def test_integer_and_float_distances_at_bucket_positions_take_the_table_value(log_from, per_head):
    bias = filled(BiasConfig(max_distance=10, log_buckets_from=log_from, per_head=per_head))
    exact = [0, 1, 2, 3, 10, 11, CROSS_TREE] + ([] if log_from else list(range(4, 10)))
    d = torch.tensor(exact).reshape(1, 1, -1)
    mask = torch.ones(1, d.size(-1), dtype=torch.bool)
    last = bias.table.weight.shape[0] - 1
    buckets = [min(x, 10) if log_from is None or x <= log_from else last for x in exact]  # 10 and beyond: last
    expected = (bias.table.weight.detach()[buckets] * 1.5).T.unsqueeze(1)  # C×1×N
    for given in (d, d.float()):
        torch.testing.assert_close(bias(given, mask)[0], expected, rtol=0, atol=1e-6)


def test_interpolation_is_linear_between_buckets():
    bias = filled(BiasConfig(max_distance=5))
    out = bias(torch.tensor([[[2.25]]]), torch.ones(1, 1, dtype=torch.bool)).squeeze()
    curve = bias.curve()
    torch.testing.assert_close(out, 0.75 * curve[2] + 0.25 * curve[3])


def test_log_buckets_are_t5_style():
    bias = SyntaxBias(BiasConfig(max_distance=16, log_buckets_from=4), n_heads=1)
    assert bias.n_buckets == 4 + 2 + 1  # exact 0..4, then one bucket per doubling up to 16
    positions = bias.position(torch.arange(0, 20).float())
    torch.testing.assert_close(positions[[0, 1, 2, 3, 4, 8, 16, 17, 19]], torch.tensor([0.0, 1, 2, 3, 4, 5, 6, 6, 6]))
    assert 4 < positions[5] < positions[7] < 5 < positions[9] < positions[15] < 6
    torch.testing.assert_close(bias.bucket_distances(), torch.tensor([0.0, 1, 2, 3, 4, 8, 16]))


@pytest.mark.parametrize("per_head", [False, True])
def test_integer_distances_between_log_buckets_get_the_bias_of_the_same_float_distance(per_head):
    """Teacher-forced batches (the parser's integer D) and parser-free ones (a predicted tree's D̂ as
    floats) must train the same bias values; the integer path used to take the floor of the position."""
    bias = filled(BiasConfig(max_distance=16, log_buckets_from=4, per_head=per_head))
    values = list(range(0, 24)) + [CROSS_TREE]
    d = torch.tensor(values).reshape(1, 5, 5)
    mask = torch.ones(1, 5, dtype=torch.bool)
    expected = torch.stack([hand_bias(bias, x) for x in values]).T.reshape(-1, 5, 5)  # C×5×5
    for given in (d, d.float()):
        torch.testing.assert_close(bias(given, mask)[0], expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize("per_head", [False, True])
@pytest.mark.parametrize("as_float", [False, True])
def test_padding_keys_masked_and_pad_pairs_unbiased(per_head, as_float):
    """Integer distances take one lookup with a zero row for pad pairs, floats interpolate: both leave pad
    pairs unbiased and pad keys exactly masked, for one table column and for one per head."""
    bias = filled(BiasConfig(per_head=per_head))
    mask = torch.tensor([[True, True, False]])
    d = torch.tensor([[[0, 1, -1], [1, 0, -1], [-1, -1, -1]]])
    out = bias(d.float() if as_float else d, mask)[0]  # C×3×3
    assert (out[:, :, 2] == MASK_VALUE).all()  # pad key: exactly the mask, no bias on top
    assert (out[:, 2, :2] == 0).all()  # pad query, real keys: no bias
    assert (out[:, 0, 1] != 0).all()  # a real pair is biased
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("mode", BIAS_MODES)
@pytest.mark.parametrize("as_float", [False, True])
def test_every_mode_gives_finite_broadcastable_bias(mode, as_float):
    bias = filled(BiasConfig(mode=mode, per_head=True), n_heads=2)
    d = torch.tensor([[[0, 3, -1], [3, 0, -1], [-1, -1, -1]], [[-1] * 3] * 3])  # row 2 all padding
    mask = torch.tensor([[True, True, False], [False, False, False]])
    out = bias(d.float() if as_float else d, mask)
    assert torch.isfinite(out).all()
    assert torch.broadcast_shapes(out.shape, (2, 2, 3, 3)) == (2, 2, 3, 3)


def test_fixed_decay_and_hard_mask_values():
    mask = torch.ones(1, 4, dtype=torch.bool)
    d = torch.tensor([[[0, 1, 2, CROSS_TREE]]])
    decay = SyntaxBias(BiasConfig(mode="fixed_decay", decay_alpha=0.5, max_distance=10, learn_alpha=False), 2)
    torch.testing.assert_close(decay(d, mask)[0, 0, 0], torch.tensor([0.0, -0.5, -1.0, -5.0]))
    assert not any(p.requires_grad for p in decay.parameters())
    hard = SyntaxBias(BiasConfig(mode="hard_mask", hard_mask_k=1), 2)
    torch.testing.assert_close(hard(d, mask)[0, 0, 0], torch.tensor([0.0, 0.0, MASK_VALUE, MASK_VALUE]))


def test_none_mode_is_padding_only():
    bias = SyntaxBias(BiasConfig(mode="none"), 2)
    assert list(bias.parameters()) == []
    out = bias(torch.zeros(1, 2, 2, dtype=torch.long), torch.tensor([[True, False]]))
    torch.testing.assert_close(out, torch.tensor([[[[0.0, MASK_VALUE]]]]))


@pytest.mark.parametrize("log_from", [None, 2])
def test_float_path_gradcheck(log_from):
    bias = filled(BiasConfig(max_distance=6, log_buckets_from=log_from, per_head=True), n_heads=2, dtype=torch.float64)
    d = torch.tensor([[[0.3, 1.7, 2.5], [4.2, 5.6, 0.9], [3.4, 7.5, 1.1]]], dtype=torch.float64, requires_grad=True)
    mask = torch.ones(1, 3, dtype=torch.bool)
    assert torch.autograd.gradcheck(lambda x: bias(x, mask), (d,))
    grad = torch.autograd.grad(bias(d, mask).sum(), d)[0]
    assert torch.isfinite(grad).all() and (grad[0, :2] != 0).all()  # d = 7.5 > max is clamped: zero gradient


def test_fixed_decay_gradcheck_in_alpha_and_distance():
    bias = SyntaxBias(BiasConfig(mode="fixed_decay"), 2).double()
    d = torch.tensor([[[0.5, 2.5], [3.25, 1.5]]], dtype=torch.float64, requires_grad=True)
    mask = torch.ones(1, 2, dtype=torch.bool)
    assert torch.autograd.gradcheck(lambda x: bias(x, mask), (d,))
    bias(d, mask).sum().backward()
    assert bias.alpha.grad == -(0.5 + 2.5 + 3.25 + 1.5)  # ∂(−α·Σd)/∂α


def test_gradients_reach_table_and_scale():
    bias = SyntaxBias(BiasConfig(), 2)
    d = torch.tensor([[[0, 1], [1, 0]]])
    mask = torch.ones(1, 2, dtype=torch.bool)
    (bias(d, mask) * torch.tensor([1.0, 2.0])).sum().backward()
    assert bias.table.weight.grad[:2].abs().min() > 0  # zero table still learns (scale = 1)
    with torch.no_grad():
        bias.table.weight.fill_(0.5)
    bias.scale.grad = None
    bias(d, mask).sum().backward()
    assert bias.scale.grad.abs() > 0


def test_curve_includes_scale_and_shape():
    bias = filled(BiasConfig(max_distance=5))
    assert bias.curve().shape == (6,)
    torch.testing.assert_close(bias.curve(), bias.table.weight.squeeze(-1) * 1.5)
    assert filled(BiasConfig(per_head=True), n_heads=3).curve().shape == (11, 3)
    assert SyntaxBias(BiasConfig(mode="fixed_decay"), 2).curve().shape == (11,)
