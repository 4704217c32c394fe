"""The parser tower: the predictor reads the embeddings through layers of its own, every encoder layer runs
once (biased), and the settings that cannot work together are refused naming them."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from parserfree.distill.config import load_config
from parserfree.encoder.schema import ConfigError
from parserfree.predictor import PredictorConfig
from parserfree.predictor.syntax_model import SyntaxModel

from tiny_models import tiny_encoder

ENCODER = tiny_encoder(n_layers=3, predictor_layer=0, bias_all_layers=True)
TOWER = PredictorConfig(arc_dim=8, label_dim=4, tower_layers=2, tower_d_model=12, tower_heads=3)


def _batch():
    gen = torch.Generator().manual_seed(0)
    mask = torch.tensor([[True] * 7, [True] * 4 + [False] * 3])
    word_ids = torch.randint(2, 40, (2, 7), generator=gen) * mask
    feature_ids = torch.randint(1, 32, (2, 7, 3), generator=gen) * mask[..., None]
    return word_ids, feature_ids, mask


def test_tower_reads_the_embeddings_and_every_encoder_layer_runs_once():
    model = SyntaxModel(ENCODER, TOWER, "binary", seed=0, dep_labels=("ROOT", "det", "nsubj")).eval()
    calls = {"encoder": 0, "tower": 0}
    for part, layers in (("encoder", model.encoder.layers), ("tower", model.predictor.tower.layers)):
        for layer in layers:
            layer.register_forward_hook(lambda *_, part=part: calls.__setitem__(part, calls[part] + 1))
    with torch.no_grad():
        before = model(*_batch(), source="predicted")
    assert calls == {"encoder": 3, "tower": 2}  # no second, unbiased pass over shared layers
    with torch.no_grad():
        for p in model.encoder.layers.parameters():
            p.add_(torch.randn_like(p))  # the shared layers change; the predictor must not notice
        after = model(*_batch(), source="predicted")
    torch.testing.assert_close(after.predicted.distances, before.predicted.distances, atol=0, rtol=0)
    assert torch.equal(after.predicted.heads, before.predicted.heads)
    assert torch.equal(after.predicted.labels, before.predicted.labels)
    assert not torch.allclose(after.task, before.task)  # while the biased layers did change


def test_tower_beside_unbiased_lower_layers_runs_each_encoder_layer_once_and_keeps_layer_1_unbiased():
    """A tower with encoder.predictor_layer 1 (the layout of an encoder pre-trained beside a predictor on h_1):
    layer 1 runs once without bias, layers 2..N once with it, and the predictor reads the tower alone."""
    encoder = dataclasses.replace(ENCODER, predictor_layer=1, bias_all_layers=False)
    model = SyntaxModel(encoder, TOWER, "binary", seed=0, dep_labels=("ROOT", "det", "nsubj")).eval()
    calls = {"encoder": 0, "tower": 0}
    for part, layers in (("encoder", model.encoder.layers), ("tower", model.predictor.tower.layers)):
        for layer in layers:
            layer.register_forward_hook(lambda *_, part=part: calls.__setitem__(part, calls[part] + 1))
    seen = []
    model.encoder.layers[0].register_forward_hook(lambda _m, _i, out: seen.append(out))
    with torch.no_grad():
        table = model.encoder.bias.table.weight
        table.copy_(torch.arange(len(table), dtype=table.dtype)[:, None])  # near and far pairs weighed apart
        before = model(*_batch(), source="sequential")
        table.neg_()
        after = model(*_batch(), source="sequential")
    assert calls == {"encoder": 6, "tower": 4}
    torch.testing.assert_close(seen[0], seen[1], atol=0, rtol=0)  # layer 1 never reads the bias
    assert not torch.allclose(after.task, before.task)  # layers 2..N do
    torch.testing.assert_close(after.predicted.distances, before.predicted.distances, atol=0, rtol=0)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["predictor.tower_layers=1"],  # smoke: predictor_layer 1 with bias_all_layers (layer 1 would run twice)
            r"predictor\.tower_layers=1 with encoder\.predictor_layer=1 needs encoder\.bias_all_layers: false",
        ),
        (["encoder.predictor_layer=0"], r"encoder\.predictor_layer must be ≥ 1 .*predictor\.tower_layers ≥ 1"),
        (
            ["encoder.predictor_layer=0", "predictor.tower_layers=1", "predictor.tower_heads=3"],
            r"predictor\.tower_heads=3 must divide the tower's width 32",
        ),
    ],
)
def test_combinations_that_cannot_work_are_refused_naming_the_settings(smoke_overrides, overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config("configs/smoke.yaml", [*smoke_overrides, *overrides])


def test_tower_config_with_unbiased_lower_layers_loads(smoke_overrides):
    config = load_config(
        "configs/smoke.yaml", [*smoke_overrides, "predictor.tower_layers=1", "encoder.bias_all_layers=false"]
    )
    assert config.encoder.predictor_layer == 1 and config.predictor.has_tower


def test_tower_config_loads_with_the_encoders_sizes_as_defaults(smoke_overrides):
    config = load_config(
        "configs/smoke.yaml", [*smoke_overrides, "encoder.predictor_layer=0", "predictor.tower_layers=2"]
    )
    shape = config.predictor.tower_shape(config.encoder)
    assert (shape.layers, shape.d_model, shape.n_heads, shape.d_ff) == (2, 32, 2, 128)
