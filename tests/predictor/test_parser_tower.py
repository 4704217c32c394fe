"""The parser tower: the predictor reads the embeddings through layers of its own, every encoder layer runs
once (biased), and the settings that cannot work together are refused naming them."""

from __future__ import annotations

import pytest
import torch

from parserfree.distill.config import load_config
from parserfree.encoder import EncoderConfig
from parserfree.encoder.schema import ConfigError
from parserfree.predictor import PredictorConfig
from parserfree.predictor.syntax_model import SyntaxModel

ENCODER = EncoderConfig(
    vocab_size=40,
    n_feature_buckets=32,
    d_model=16,
    n_heads=2,
    n_layers=3,
    d_ff=32,
    max_len=16,
    predictor_layer=0,
    bias_all_layers=True,
    dropout=0.0,
)
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


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["predictor.tower_layers=1"], r"predictor\.tower_layers=1 needs encoder\.predictor_layer: 0, got 1"),
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


def test_tower_config_loads_with_the_encoders_sizes_as_defaults(smoke_overrides):
    config = load_config(
        "configs/smoke.yaml", [*smoke_overrides, "encoder.predictor_layer=0", "predictor.tower_layers=2"]
    )
    shape = config.predictor.tower_shape(config.encoder)
    assert (shape.layers, shape.d_model, shape.n_heads, shape.d_ff) == (2, 32, 2, 128)
