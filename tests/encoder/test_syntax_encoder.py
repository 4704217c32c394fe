import pytest
import torch

from parserfree.encoder import BIAS_MODES, SyntaxEncoder


def twin(model: SyntaxEncoder, config) -> SyntaxEncoder:
    """A model built from `config` carrying `model`'s weights (bias parameters aside)."""
    other = SyntaxEncoder(config)
    missing, unexpected = other.load_state_dict(model.state_dict(), strict=False)
    assert all(k.startswith("bias.") for k in missing + unexpected)
    return other.eval()


def test_shapes_and_split(config_factory, batch_factory):
    model = SyntaxEncoder(config_factory()).eval()
    w, f, mask, d = batch_factory([5, 3], 5)
    h_n, h_k = model(w, f, mask, d)
    assert h_n.shape == h_k.shape == (2, 5, 16)
    torch.testing.assert_close(h_k, model.lower(w, f, mask))
    torch.testing.assert_close(h_n, model.upper(model.embed(w, f), h_k, mask, d))
    assert model.embed(w, f).shape == (2, 5, 16)


def test_distances_only_reach_the_upper_layers(config_factory, batch_factory):
    model = SyntaxEncoder(config_factory(per_head=True)).eval()
    with torch.no_grad():
        model.bias.table.weight.normal_()
    w, f, mask, d = batch_factory([5, 4], 5)
    h_n1, h_k1 = model(w, f, mask, d)
    shuffled = torch.where(d >= 0, (d + 3) % 5, d)  # other distances, same padding
    h_n2, h_k2 = model(w, f, mask, shuffled)
    torch.testing.assert_close(h_k1, h_k2, rtol=0, atol=0)
    assert (h_n1 - h_n2).abs().max() > 1e-3


@pytest.mark.parametrize("as_float", [False, True])
def test_zero_init_bias_equals_no_bias(config_factory, batch_factory, as_float):
    learned = SyntaxEncoder(config_factory()).eval()
    plain = twin(learned, config_factory(mode="none"))
    w, f, mask, d = batch_factory([6, 2, 4], 6)
    d = d.float() + 0.3 * (d > 0) if as_float else d
    out = learned(w, f, mask, d)[0]
    for reference in (plain(w, f, mask, d)[0], learned(w, f, mask, None)[0]):
        torch.testing.assert_close(out, reference, rtol=0, atol=1e-6)


def test_hard_mask_with_large_k_equals_none(config_factory, batch_factory):
    hard = SyntaxEncoder(config_factory(mode="hard_mask", hard_mask_k=10_000)).eval()
    plain = twin(hard, config_factory(mode="none"))
    w, f, mask, d = batch_factory([6, 3], 6)
    d[0, 0, 5] = d[0, 5, 0] = 1000  # cross-sentence pair still visible
    torch.testing.assert_close(hard(w, f, mask, d)[0], plain(w, f, mask, d)[0], rtol=0, atol=1e-6)
    tight = twin(hard, config_factory(mode="hard_mask", hard_mask_k=1))
    assert (tight(w, f, mask, d)[0] - plain(w, f, mask, d)[0]).abs().max() > 1e-3


@pytest.mark.parametrize("mode", BIAS_MODES)
@pytest.mark.parametrize("as_float", [False, True])
def test_padding_invariance(config_factory, batch_factory, mode, as_float):
    model = SyntaxEncoder(config_factory(mode=mode, per_head=True)).eval()
    if model.bias.table is not None:
        with torch.no_grad():
            model.bias.table.weight.normal_()
    w, f, mask, d = batch_factory([5, 3], 5)
    w2, f2, mask2, d2 = batch_factory([5, 3], 9)
    w2[:, :5], f2[:, :5] = w, f  # same words, 4 more pad columns
    if as_float:
        d, d2 = d.float() * 1.1, d2.float() * 1.1
    short_n, short_k = model(w, f, mask, d)
    long_n, long_k = model(w2, f2, mask2, d2)
    torch.testing.assert_close(long_n[:, :5][mask], short_n[mask], rtol=0, atol=1e-5)
    torch.testing.assert_close(long_k[:, :5][mask], short_k[mask], rtol=0, atol=1e-5)


@pytest.mark.parametrize("mode", BIAS_MODES)
@pytest.mark.parametrize("as_float", [False, True])
def test_no_nan_on_edge_cases(config_factory, batch_factory, mode, as_float):
    config = config_factory(mode=mode)
    model = SyntaxEncoder(config).train()
    cases = [([0, 3], 3), ([0], 1), ([1], 1), ([config.max_len, 2], config.max_len)]
    for lengths, width in cases:
        w, f, mask, d = batch_factory(lengths, width)
        d = d.float().requires_grad_() if as_float else d
        h_n, h_k = model(w, f, mask, d)
        assert torch.isfinite(h_n).all() and torch.isfinite(h_k).all(), (lengths, width)
        h_n.sum().backward()
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        assert all(torch.isfinite(g).all() for g in grads), (lengths, width)
        if as_float and d.grad is not None:  # modes none/hard_mask do not differentiate in d
            assert torch.isfinite(d.grad).all()
        model.zero_grad()


def test_gradients_reach_bias_table_scale_and_distances(config_factory, batch_factory):
    model = SyntaxEncoder(config_factory()).train()
    w, f, mask, d = batch_factory([5, 4], 5)
    model(w, f, mask, d)[0].pow(2).sum().backward()
    assert model.bias.table.weight.grad.abs().sum() > 0
    with torch.no_grad():
        model.bias.table.weight.copy_(-torch.arange(11.0)[:, None] / 5)
    model.zero_grad()
    d_float = (d.float() + 0.4 * (d > 0)).requires_grad_()
    model(w, f, mask, d_float)[0].pow(2).sum().backward()
    assert model.bias.scale.grad.abs() > 0
    assert torch.isfinite(d_float.grad).all() and d_float.grad.abs().sum() > 0


def test_too_long_input_is_refused(config_factory, batch_factory):
    model = SyntaxEncoder(config_factory())
    w, f, mask, d = batch_factory([13], 13)
    with pytest.raises(ValueError, match="max_len=12"):
        model(w, f, mask, d)


def test_wrong_feature_count_is_refused(config_factory, batch_factory):
    w, f, mask, d = batch_factory([3], 3)
    with pytest.raises(ValueError, match="encoder.n_features=3"):
        SyntaxEncoder(config_factory())(w, f[..., :2], mask, d)


def test_bias_curve_is_exposed(config_factory):
    model = SyntaxEncoder(config_factory())
    assert model.bias.curve().shape == (11,)
    assert len([m for m in model.modules() if m.__class__.__name__ == "SyntaxBias"]) == 1


def test_bias_all_layers_biases_the_lower_layers_too():
    """With bias_all_layers the bias reaches layers 1..k as well (a second, biased pass); without, it does not."""
    import torch

    from parserfree.encoder import SyntaxEncoder

    from tiny_models import tiny_encoder

    torch.manual_seed(0)
    config = tiny_encoder(vocab_size=20, n_feature_buckets=4096, d_model=8, d_ff=16, max_len=8)
    w = torch.tensor([[3, 4, 5, 6]])
    f = torch.zeros(1, 4, 3, dtype=torch.long)
    mask = torch.ones(1, 4, dtype=torch.bool)
    d = torch.tensor([[[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]]])
    model = SyntaxEncoder(config).eval()
    torch.nn.init.normal_(model.bias.table.weight, std=3.0)
    layer2_only = model(w, f, mask, d)[0]
    model.config.bias_all_layers = True
    everywhere, h_k = model(w, f, mask, d)
    assert model.first_biased_layer == 0
    torch.testing.assert_close(h_k, model.lower(w, f, mask))  # the predictor still reads the unbiased h_k
    assert not torch.allclose(everywhere, layer2_only, atol=1e-4)
    with torch.no_grad():  # layer by layer: both layers biased, from the embeddings
        h = model.embed(w, f)
        bias = model.bias(d, mask)
        for layer in model.layers:
            h = layer(h, bias)
        torch.testing.assert_close(everywhere, model.final_norm(h))


def test_per_layer_tables_reach_each_biased_layer_in_order():
    """With bias.per_layer each biased layer adds its own table's bias: the model equals the layers run by
    hand with table column i in layer i (a model handing every layer the first table, or all tables at once,
    differs), and a shared table's model is the per-layer one with equal columns."""
    from parserfree.encoder import BiasConfig, key_padding_bias

    from tiny_models import tiny_encoder

    torch.manual_seed(0)
    config = tiny_encoder(n_layers=3, bias_all_layers=True, bias=BiasConfig(per_layer=True))
    w = torch.tensor([[3, 4, 5, 6], [7, 8, 0, 0]])
    f = torch.zeros(2, 4, 3, dtype=torch.long)
    mask = w != 0
    d = torch.tensor([[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]]).expand(2, 4, 4).clone()
    d[1, 2:, :] = d[1, :, 2:] = -1
    model = SyntaxEncoder(config).eval()
    assert model.bias.table.weight.shape == (11, 3)
    torch.nn.init.normal_(model.bias.table.weight, std=3.0)
    out = model(w, f, mask, d)[0]
    with torch.no_grad():
        h = model.embed(w, f)
        table = model.bias.table.weight * model.bias.scale
        for i, layer in enumerate(model.layers):
            values = torch.where(d >= 0, table[d.clamp(min=0), i], torch.zeros(()))
            h = layer(h, values[:, None] + key_padding_bias(mask))
        torch.testing.assert_close(out, model.final_norm(h))
        model.bias.table.weight.copy_(model.bias.table.weight[:, :1].expand(-1, 3))
        shared = SyntaxEncoder(tiny_encoder(n_layers=3, bias_all_layers=True)).eval()
        state = model.state_dict()
        shared.load_state_dict({**state, "bias.table.weight": state["bias.table.weight"][:, :1]})
        torch.testing.assert_close(model(w, f, mask, d)[0], shared(w, f, mask, d)[0])
