"""A model with static vectors (``encoder.static_vectors``) exports: its checkpoint reloads with the table, and
the bundle's graph carries the table and computes what PyTorch does at shapes other than the trace's."""

from __future__ import annotations

import copy

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from parserfree.distill.checkpoints import load_trained
from parserfree.encoder import EncoderConfig
from parserfree.encoder.config import STATIC_VECTOR_WIDTHS
from parserfree.export import export_bundle
from parserfree.predictor import PredictorConfig
from parserfree.predictor.syntax_model import SyntaxModel

WIDTH = STATIC_VECTOR_WIDTHS["en_core_web_md"]


@pytest.fixture(scope="module")
def vectors_checkpoint(smoke_checkpoint, tmp_path_factory):
    """The smoke run's model with static vectors: its weights, a random unit-row table, a random projection."""
    ckpt = torch.load(smoke_checkpoint, map_location="cpu", weights_only=False)
    meta = copy.deepcopy(ckpt["parserfree"])
    meta["encoder"]["static_vectors"] = "en_core_web_md"
    meta["experiment"]["encoder"]["static_vectors"] = "en_core_web_md"
    model = SyntaxModel(
        EncoderConfig.from_dict(meta["encoder"]),
        PredictorConfig.from_dict(meta["predictor"]),
        meta["task"],
        max(2, len(meta["label_names"])),
        dep_labels=meta["dep_labels"],
    )
    state = {k.removeprefix("model."): v for k, v in ckpt["state_dict"].items()}
    assert model.load_state_dict(state, strict=False).missing_keys == [
        "encoder.static_vectors",
        "encoder.static_projection.weight",
        "encoder.static_projection.bias",
    ]
    gen = torch.Generator().manual_seed(0)
    table = torch.randn(model.encoder.config.vocab_size, WIDTH, generator=gen)
    table[:2] = 0
    model.encoder.set_static_vectors(table / table.norm(dim=1, keepdim=True).clamp_min(1e-6))
    with torch.no_grad():
        model.encoder.static_projection.weight.normal_(std=0.3, generator=gen)
    path = tmp_path_factory.mktemp("vectors") / "vectors.ckpt"
    torch.save({"state_dict": {f"model.{k}": v for k, v in model.state_dict().items()}, "parserfree": meta}, path)
    return path, model.encoder.static_vectors.clone()


def test_the_checkpoint_reloads_with_its_table(vectors_checkpoint):
    path, table = vectors_checkpoint
    trained = load_trained(path)
    assert trained.encoder_config.static_vectors == "en_core_web_md"
    assert torch.equal(trained.model.encoder.static_vectors, table)


def test_the_bundle_graph_carries_the_table_and_matches_pytorch(vectors_checkpoint, smoke_bundle, tmp_path):
    path, table = vectors_checkpoint
    manifest = export_bundle(path, tmp_path / "bundle", threads=1)
    assert manifest["parity"]["default"]["task_output_max_diff"] <= 1e-4
    graph = tmp_path / "bundle" / "model.onnx"
    shapes = {tuple(t.dims) for t in onnx.load(str(graph)).graph.initializer}
    assert tuple(table.shape) in shapes
    # the table's fp16 bytes are what the graph grows by, against the smoke bundle without vectors
    grown = graph.stat().st_size - (smoke_bundle[0] / "model.onnx").stat().st_size
    assert table.numel() * 2 <= grown < table.numel() * 2 + 200_000
    trained = load_trained(path)
    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    words = trained.vocab.words[2:]
    for batch, length in [(5, 17), (1, 40), (3, 2)]:
        assert [batch, length] != manifest["trace_shape"]
        lengths = [length] + [int(n) for n in rng.integers(1, length + 1, batch - 1)]
        sentences = [list(rng.choice(words, n)) for n in lengths]
        word_ids, feature_ids, mask = trained.vocab.encode_batch(sentences, trained.encoder_config.max_len)
        task = session.run(["task_output"], {"word_ids": word_ids, "feature_ids": feature_ids, "mask": mask})[0]
        with torch.no_grad():
            ref = trained.model(*(torch.from_numpy(a) for a in (word_ids, feature_ids, mask)))
        np.testing.assert_allclose(task, ref.task.numpy(), atol=1e-4, rtol=0)


def test_the_variants_keep_the_half_precision_table(vectors_checkpoint, tmp_path):
    """The int8 quantizer handles float32 weights only: it leaves the float16 table alone (and the graph loads)."""
    path, table = vectors_checkpoint
    manifest = export_bundle(path, tmp_path / "bundle", optimize=True, quantize="int8", threads=1)
    assert manifest["parity"]["optimized"]["task_output_max_diff"] <= 1e-4
    assert manifest["parity"]["int8"]["finite"] and manifest["parity"]["int8"]["prediction_agreement"] >= 0.9
    int8 = onnx.load(str(tmp_path / "bundle" / "model.int8.onnx")).graph.initializer
    halves = [t for t in int8 if t.data_type == onnx.TensorProto.FLOAT16]
    assert [tuple(t.dims) for t in halves] == [tuple(table.shape)]
