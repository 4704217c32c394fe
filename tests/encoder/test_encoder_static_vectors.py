"""Static word vectors in the encoder (``encoder.static_vectors``): a frozen table read by word id through a
learned projection, carried by the state dict and the ONNX graph; a bad setting is one line naming the key."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from parserfree.encoder import EncoderConfig
from parserfree.encoder.config import STATIC_VECTOR_WIDTHS
from parserfree.encoder.model import SyntaxEncoder
from parserfree.encoder.schema import ConfigError

WIDTH = STATIC_VECTOR_WIDTHS["en_core_web_md"]


def with_vectors(config: EncoderConfig) -> EncoderConfig:
    return dataclasses.replace(config, static_vectors="en_core_web_md")


def random_table(vocab_size: int, seed: int = 0) -> torch.Tensor:
    table = torch.randn(vocab_size, WIDTH, generator=torch.Generator().manual_seed(seed))
    table[:2] = 0  # <pad> and <unk>
    return table / table.norm(dim=1, keepdim=True).clamp_min(1e-6)


@pytest.mark.parametrize("value", ["en_core_web_lg", "md", ""])
def test_an_unknown_setting_is_one_line_naming_the_key(value):
    with pytest.raises(ConfigError) as caught:
        EncoderConfig.from_dict({"vocab_size": 100, "static_vectors": value})
    message = str(caught.value)
    assert message == f"encoder.static_vectors={value!r} must be null or one of en_core_web_md"
    assert "\n" not in message


def test_a_setting_of_the_wrong_type_names_the_key():
    with pytest.raises(ConfigError, match=r"^encoder\.static_vectors=300 must be a string$"):
        EncoderConfig.from_dict({"vocab_size": 100, "static_vectors": 300})


def test_the_default_is_none_and_a_config_without_the_key_reads_as_before(config_factory):
    assert EncoderConfig().static_vectors is None and EncoderConfig().static_width == 0
    old = config_factory().to_dict()
    del old["static_vectors"]  # a checkpoint written before the setting existed
    model = SyntaxEncoder(EncoderConfig.from_dict(old))
    assert model.static_vectors is None and model.static_projection is None
    assert not any("static" in key for key in model.state_dict())


def test_the_table_is_a_buffer_no_optimiser_step_changes(config_factory, batch_factory):
    config = with_vectors(config_factory())
    model = SyntaxEncoder(config).train()
    table = random_table(config.vocab_size)
    model.set_static_vectors(table)
    assert model.static_vectors is not None and model.static_projection is not None
    assert model.static_vectors.shape == (config.vocab_size, WIDTH) and not model.static_vectors.requires_grad
    assert all("static_vectors" not in name for name, _ in model.named_parameters())
    before = model.static_vectors.clone()
    projection = model.static_projection.weight.detach().clone()
    optimiser = torch.optim.AdamW(model.parameters(), lr=0.1)
    for _ in range(2):
        word_ids, feature_ids, mask, distances = batch_factory([5, 3], 5)
        h_n, _ = model(word_ids, feature_ids, mask, distances)
        optimiser.zero_grad()
        h_n.pow(2).mean().backward()
        optimiser.step()
    assert torch.equal(model.static_vectors, before)  # frozen
    assert not torch.equal(model.static_projection.weight, projection)  # the projection learns


def test_a_model_with_vectors_starts_as_the_same_model_without(config_factory, batch_factory):
    """The zero projection draws no random numbers: same seed, same weights, same outputs, table or not."""
    torch.manual_seed(3)
    plain = SyntaxEncoder(config_factory()).eval()
    torch.manual_seed(3)
    model = SyntaxEncoder(with_vectors(config_factory())).eval()
    model.set_static_vectors(random_table(model.config.vocab_size))
    shared = plain.state_dict()
    for key, value in model.state_dict().items():
        if "static" not in key:
            assert torch.equal(value, shared[key]), key
    batch = batch_factory([4, 2], 4)
    with torch.no_grad():
        assert torch.equal(model(*batch)[0], plain(*batch)[0])


def test_row_i_of_the_table_is_what_word_id_i_reads(config_factory):
    config = with_vectors(dataclasses.replace(config_factory(), dropout=0.0))
    model = SyntaxEncoder(config).eval()
    assert model.static_projection is not None
    with torch.no_grad():
        model.static_projection.weight.copy_(torch.eye(config.d_model, WIDTH))  # h_0 gains the row's first d columns
    table = torch.zeros(config.vocab_size, WIDTH)
    table[7, :3] = torch.tensor([0.5, -0.25, 1.0])
    model.set_static_vectors(table)
    word_ids = torch.tensor([[7, 8, 1, 0]])
    feature_ids = torch.zeros(1, 4, config.n_features, dtype=torch.long)
    with torch.no_grad():
        plain = model.word_embedding(word_ids) + model.position_embedding.weight[:4]
        gained = model.embed(word_ids, feature_ids) - plain
    np.testing.assert_allclose(gained[0, 0, :3].numpy(), [0.5, -0.25, 1.0], atol=1e-6)
    assert torch.count_nonzero(gained[0, 0, 3:]) == 0 and torch.count_nonzero(gained[0, 1:]) == 0


def test_the_table_is_filled_only_at_its_shape(config_factory):
    model = SyntaxEncoder(with_vectors(config_factory()))
    with pytest.raises(ValueError, match="static vector table of shape"):
        model.set_static_vectors(torch.zeros(model.config.vocab_size - 2, WIDTH))
    with pytest.raises(ValueError, match="no static vector table"):
        SyntaxEncoder(config_factory()).set_static_vectors(torch.zeros(3, WIDTH))


def test_the_state_dict_carries_the_table(config_factory):
    config = with_vectors(config_factory())
    model = SyntaxEncoder(config)
    model.set_static_vectors(random_table(config.vocab_size))
    with torch.no_grad():
        model.static_projection.weight.normal_()  # type: ignore[union-attr]
    again = SyntaxEncoder(config)
    again.load_state_dict(model.state_dict())
    assert again.static_vectors is not None and model.static_vectors is not None
    assert torch.equal(again.static_vectors, model.static_vectors)
    assert again.static_vectors.dtype == torch.float16  # half the bytes of an fp32 table


def test_the_onnx_graph_carries_the_table(tmp_path, config_factory, batch_factory):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from test_encoder_onnx import INPUTS, export

    config = with_vectors(config_factory())
    model = SyntaxEncoder(config).eval()
    model.set_static_vectors(random_table(config.vocab_size))
    with torch.no_grad():
        model.static_projection.weight.normal_(std=0.5)  # type: ignore[union-attr]
        model.bias.table.weight.normal_()
    path = tmp_path / "encoder.onnx"
    export(model, batch_factory([4, 2], 4), path)
    shapes = [tuple(t.dims) for t in onnx.load(str(path)).graph.initializer]
    assert (config.vocab_size, WIDTH) in shapes  # the table is in the graph: serving needs nothing else
    run = batch_factory([7, 3, 1, 0], 7, seed=1)  # other batch size and length than the trace
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    h_n, h_k = session.run(None, {name: x.numpy() for name, x in zip(INPUTS, run, strict=True)})
    with torch.no_grad():
        ref_n, ref_k = model(*run)
        no_vectors = SyntaxEncoder(config_factory()).eval()
        no_vectors.load_state_dict({k: v for k, v in model.state_dict().items() if "static" not in k})
        without, _ = no_vectors(*run)
    np.testing.assert_allclose(h_n, ref_n.numpy(), atol=1e-4, rtol=0)
    np.testing.assert_allclose(h_k, ref_k.numpy(), atol=1e-4, rtol=0)
    assert np.abs(h_n - without.numpy()).max() > 1e-2  # the vectors change what the graph computes
