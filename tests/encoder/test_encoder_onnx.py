"""The encoder must export to one ONNX graph with dynamic batch and length (TorchScript exporter)."""

import warnings

import numpy as np
import pytest
import torch

from parserfree.encoder import SyntaxEncoder

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

INPUTS = ["word_ids", "feature_ids", "mask", "distances"]


def export(model: SyntaxEncoder, args: tuple, path) -> None:
    axes = {
        "word_ids": {0: "batch", 1: "length"},
        "feature_ids": {0: "batch", 1: "length"},
        "mask": {0: "batch", 1: "length"},
        "distances": {0: "batch", 1: "length", 2: "length"},
        "h_n": {0: "batch", 1: "length"},
        "h_k": {0: "batch", 1: "length"},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # exporter deprecation notices
        torch.onnx.export(
            model,
            args,
            str(path),
            input_names=INPUTS,
            output_names=["h_n", "h_k"],
            dynamo=False,
            opset_version=17,
            dynamic_axes=axes,
        )


@pytest.mark.parametrize("per_layer", [False, True])
@pytest.mark.parametrize("as_float", [False, True])
def test_export_runs_at_other_batch_and_length(tmp_path, config_factory, batch_factory, as_float, per_layer):
    config = config_factory(per_head=True, log_buckets_from=3, per_layer=per_layer)
    config.bias_all_layers = per_layer  # per-layer tables need two biased layers
    model = SyntaxEncoder(config).eval()
    with torch.no_grad():
        model.bias.table.weight.normal_()
        model.bias.scale.fill_(1.3)
    traced = batch_factory([4, 2], 4)
    run = batch_factory([7, 3, 1, 0], 7, seed=1)  # other batch size, other length, an all-pad row
    if as_float:
        traced = (*traced[:3], traced[3].float() * 1.3)
        run = (*run[:3], run[3].float() * 1.3 + 0.2 * (run[3] > 0))
    path = tmp_path / "encoder.onnx"
    export(model, traced, path)
    graph_ops = {node.op_type for node in onnx.load(str(path)).graph.node}
    if as_float:
        assert "Floor" in graph_ops
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    h_n, h_k = session.run(None, {name: x.numpy() for name, x in zip(INPUTS, run)})
    with torch.no_grad():
        ref_n, ref_k = model(*run)
    assert h_n.shape == (4, 7, 16)
    np.testing.assert_allclose(h_n, ref_n.numpy(), atol=1e-4, rtol=0)
    np.testing.assert_allclose(h_k, ref_k.numpy(), atol=1e-4, rtol=0)
