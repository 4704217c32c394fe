"""PredictorConfig: defaults, validation naming the bad key, strict from_dict."""

from __future__ import annotations

import pytest

from parserfree.predictor.config import PredictorConfig


def test_defaults_are_valid_and_round_trip():
    config = PredictorConfig().validate()
    assert (config.form, config.arc_dim, config.max_relative_position, config.soft, config.rank) == (
        "heads",
        128,
        16,
        False,
        64,
    )
    assert PredictorConfig.from_dict(config.to_dict()) == config
    assert PredictorConfig.from_dict({"form": "probe", "rank": 8}).rank == 8


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("form", "tree"),
        ("arc_dim", 0),
        ("arc_dim", 2.5),
        ("arc_dim", True),
        ("max_relative_position", -1),
        ("soft", "yes"),
        ("soft", 1),
        ("rank", 0),
        ("label_dim", -1),
        ("label_loss_weight", -0.5),
        ("tower_layers", -1),
        ("tower_d_model", 0),
        ("tower_heads", 0),
        ("tower_d_ff", 0),
    ],
)
def test_validation_names_the_field(field, value):
    with pytest.raises(ValueError, match=rf"predictor\.{field}\b"):
        PredictorConfig(**{field: value}).validate()
    with pytest.raises(ValueError, match=rf"predictor\.{field}\b"):
        PredictorConfig.from_dict({field: value})


def test_from_dict_rejects_unknown_keys():
    with pytest.raises(ValueError, match=r"unknown key 'predictor\.arc_dims'"):
        PredictorConfig.from_dict({"arc_dims": 64})
