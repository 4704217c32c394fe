import pytest

from parserfree.encoder import BiasConfig, EncoderConfig
from parserfree.encoder.model import SyntaxEncoder


def test_defaults_validate_and_round_trip():
    config = EncoderConfig(vocab_size=100)
    config.validate()
    data = config.to_dict()
    assert data["bias"]["mode"] == "learned" and data["bias"]["max_distance"] == 10
    assert EncoderConfig.from_dict(data) == config


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"n_heads": 3}, "encoder.n_heads=3 must divide encoder.d_model=128"),
        ({"vocab_size": 1}, "encoder.vocab_size=1"),
        ({"dropout": 1.0}, "encoder.dropout=1.0"),
        ({"n_layers": 2, "predictor_layer": 2}, "encoder.predictor_layer=2 must be below encoder.n_layers=2"),
        ({"max_len": 0}, "encoder.max_len=0"),
        ({"d_ff": 2.5}, "encoder.d_ff=2.5 must be an integer"),
        ({"n_feature_buckets": 1}, "encoder.n_feature_buckets=1"),
    ],
)
def test_encoder_errors_name_the_field(changes, fragment):
    config = EncoderConfig(**{"vocab_size": 100, **changes})
    with pytest.raises(ValueError, match=fragment):
        config.validate()


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"mode": "soft"}, "encoder.bias.mode='soft'"),
        ({"max_distance": 0}, "encoder.bias.max_distance=0"),
        ({"log_buckets_from": 10}, "encoder.bias.log_buckets_from=10 must be below encoder.bias.max_distance=10"),
        ({"decay_alpha": -1.0}, "encoder.bias.decay_alpha=-1.0"),
        ({"hard_mask_k": -1}, "encoder.bias.hard_mask_k=-1"),
        ({"per_head": "yes"}, "encoder.bias.per_head='yes'"),
    ],
)
def test_bias_errors_name_the_field(changes, fragment):
    with pytest.raises(ValueError, match=fragment):
        EncoderConfig(vocab_size=100, bias=BiasConfig(**changes)).validate()


def test_from_dict_rejects_unknown_keys_by_name():
    with pytest.raises(ValueError, match="unknown key.*n_head\\b"):
        EncoderConfig.from_dict({"vocab_size": 10, "n_head": 4})
    with pytest.raises(ValueError, match="unknown key.*encoder.bias.*max_dist"):
        EncoderConfig.from_dict({"vocab_size": 10, "bias": {"max_dist": 4}})


def test_a_model_without_the_vocabulary_size_is_refused():
    config = EncoderConfig.from_dict({"d_model": 8, "n_heads": 2})  # a config section: size still unknown
    assert config.vocab_size == 0
    with pytest.raises(ValueError, match="encoder.vocab_size=0: the model needs the vocabulary"):
        SyntaxEncoder(config)


def test_from_dict_validates():
    with pytest.raises(ValueError, match="encoder.n_heads=3"):
        EncoderConfig.from_dict({"vocab_size": 10, "n_heads": 3})
