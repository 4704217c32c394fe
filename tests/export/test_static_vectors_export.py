"""A model with static vectors (``encoder.static_vectors``) exports: its checkpoint reloads with the table, and
the bundle's graph carries the table and computes what PyTorch does at shapes other than the trace's."""

from __future__ import annotations

import onnx
import pytest
import torch
from checkpoint_edits import edited_meta, model_of, save_checkpoint
from graph_checks import assert_task_output_matches

from parserfree.core.checkpoints import load_trained
from parserfree.encoder.config import STATIC_VECTOR_WIDTHS
from parserfree.jobs.exporting import export_checkpoint

WIDTH = STATIC_VECTOR_WIDTHS["en_core_web_md"]


@pytest.fixture(scope="module")
def vectors_checkpoint(smoke_checkpoint, tmp_path_factory):
    """The smoke run's model with static vectors: its weights, a random unit-row table, a random projection."""
    state, meta = edited_meta(smoke_checkpoint, static_vectors="en_core_web_md")
    model = model_of(meta)
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
    save_checkpoint(model, meta, path)
    return path, model.encoder.static_vectors.clone()


def test_the_checkpoint_reloads_with_its_table(vectors_checkpoint):
    path, table = vectors_checkpoint
    trained = load_trained(path)
    assert trained.encoder_config.static_vectors == "en_core_web_md"
    assert torch.equal(trained.model.encoder.static_vectors, table)


def test_the_bundle_graph_carries_the_table_and_matches_pytorch(vectors_checkpoint, smoke_bundle, tmp_path):
    path, table = vectors_checkpoint
    manifest = export_checkpoint(path, tmp_path / "bundle", threads=1)
    assert manifest["parity"]["default"]["task_output_max_diff"] <= 1e-4
    graph = tmp_path / "bundle" / "model.onnx"
    shapes = {tuple(t.dims) for t in onnx.load(str(graph)).graph.initializer}
    assert tuple(table.shape) in shapes
    # the table's fp16 bytes are what the graph grows by, against the smoke bundle without vectors
    grown = graph.stat().st_size - (smoke_bundle[0] / "model.onnx").stat().st_size
    assert table.numel() * 2 <= grown < table.numel() * 2 + 200_000
    trained = load_trained(path)
    assert_task_output_matches(graph, trained, manifest["trace_shape"], [(5, 17), (1, 40), (3, 2)], atol=1e-4)


def test_the_variants_keep_the_half_precision_table(vectors_checkpoint, tmp_path):
    """The int8 quantizer handles float32 weights only: it leaves the float16 table alone (and the graph loads)."""
    path, table = vectors_checkpoint
    manifest = export_checkpoint(path, tmp_path / "bundle", optimize=True, quantize="int8", threads=1)
    assert manifest["parity"]["optimized"]["task_output_max_diff"] <= 1e-4
    assert manifest["parity"]["int8"]["finite"] and manifest["parity"]["int8"]["prediction_agreement"] >= 0.9
    int8 = onnx.load(str(tmp_path / "bundle" / "model.int8.onnx")).graph.initializer
    halves = [t for t in int8 if t.data_type == onnx.TensorProto.FLOAT16]
    assert [tuple(t.dims) for t in halves] == [tuple(table.shape)]
