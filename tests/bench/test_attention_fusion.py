"""Attention fusion (bench/lib/attention_fusion.py): the fused graph computes what the hand-written one does."""

from __future__ import annotations

import numpy as np
import onnx
import yaml

from parserfree.export import ParserFreeModel
from parserfree.export.graph_inputs import graph_inputs
from parserfree.export.session import make_session

from bench.lib.attention_fusion import fuse_attention

TEXTS = [
    "A great film.",
    "The film is great, and I told my friends. The ending was dull!",
    "Dull.",
    "honestly , the story felt boring from start to finish .",
]


def test_fused_attention_keeps_the_bias_and_the_outputs(smoke_bundle, tmp_path):
    """Catches a fusion that drops the syntax bias or the padding mask, splits Q, K, V or the heads wrongly,
    or leaves a block unfused: every block becomes one MultiHeadAttention and the outputs stay those of the
    tree graph tree.onnx — its task output and D̂ (padding included: texts of different lengths in one batch)."""
    folder, _ = smoke_bundle
    model = ParserFreeModel.load(folder, threads=1)
    heads = yaml.safe_load((folder / "config.yaml").read_text())["encoder"]["n_heads"]
    graph = folder / "tree.onnx"  # the whole model with D̂ among its outputs (model.onnx: the task output only)
    original = onnx.load(str(graph))
    blocks = sum(n.op_type == "Softmax" and "/attention" in n.name for n in original.graph.node)
    fused_path = tmp_path / "fused.onnx"
    assert fuse_attention(graph, fused_path, heads) == blocks > 0
    fused = onnx.load(str(fused_path))
    assert sum(n.op_type == "MultiHeadAttention" for n in fused.graph.node) == blocks
    assert not any(n.op_type == "Softmax" and "/attention" in n.name for n in fused.graph.node)

    feeds = graph_inputs(model.vocab, model.tokenize(TEXTS), model.max_len, None)
    reference = make_session(graph, threads=1).run(None, feeds)
    got = make_session(fused_path, threads=1).run(None, feeds)
    np.testing.assert_allclose(got[0], reference[0], atol=1e-5, rtol=0)
    np.testing.assert_array_equal(got[1], reference[1])  # D̂ reads the fused lower layers
