"""Attention fusion: the hand-written biased attention of an exported graph → onnxruntime's MultiHeadAttention.

``encoder/attention.py`` writes attention by hand (QKV product, reshape, transpose, split, QKᵀ/√d_head +
bias, softmax, ·V, transpose, reshape) so that batch and length stay dynamic in ONNX; onnxruntime's
transformer optimiser does not recognise that pattern with an additive syntax bias. ``fuse_attention``
rewrites each such block of a graph into a ``Split`` of the QKV product and one ``com.microsoft``
``MultiHeadAttention`` node that takes the QKV bias and the syntax bias as its ``attention_bias`` input
(the padding-only bias B×1×1×T of the unbiased layers is expanded to B×1×T×T once per bias tensor), then
drops the nodes no output needs. The result computes the same numbers (tests/bench/test_attention_fusion.py).
The benchmark measures whether it pays (bench/README.md); the export does not write it.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper


def _attention_blocks(graph: onnx.GraphProto) -> list[onnx.NodeProto]:
    """The softmax node of every hand-written attention block, in graph order."""
    return [n for n in graph.node if n.op_type == "Softmax" and re.search(r"/attention(_\d+)?/Softmax$", n.name)]


def _topological(graph: onnx.GraphProto) -> list[onnx.NodeProto]:
    """The nodes some graph output needs, in an order where every input is computed before it is read."""
    producer = {o: n for n in graph.node for o in n.output}
    needed: set[int] = set()
    stack = [o.name for o in graph.output]
    while stack:
        node = producer.get(stack.pop())
        if node is not None and id(node) not in needed:
            needed.add(id(node))
            stack.extend(i for i in node.input if i)
    ready = {i.name for i in graph.input} | {i.name for i in graph.initializer}
    pending, order = [n for n in graph.node if id(n) in needed], []
    while pending:
        rest = [n for n in pending if not all(not i or i in ready for i in n.input)]
        for n in pending:
            if n not in rest:
                order.append(n)
                ready.update(n.output)
        if len(rest) == len(pending):
            raise ValueError(f"attention fusion left {rest[0].name} without its inputs")
        pending = rest
    return order


def fuse_attention(source: str | Path, target: str | Path, n_heads: int) -> int:
    """Write ``source`` with its attention blocks fused to ``target``; returns the number of blocks fused."""
    model = onnx.load(str(source))
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for n in graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    weights = {i.name for i in graph.initializer}
    sizes_of = {i.name: numpy_helper.to_array(i).shape for i in graph.initializer}
    added, expanded, removed = [], {}, []
    for softmax in _attention_blocks(graph):
        block = softmax.name.rsplit("/", 1)[0]
        score_add = producer[softmax.input[0]]
        weighted = consumers[softmax.output[0]][0]
        transpose = consumers[weighted.output[0]][0]
        context = consumers[transpose.output[0]][0]  # B×T×d, read by the output projection
        scaled = next(producer[i] for i in score_add.input if i in producer and producer[i].op_type == "Div")
        bias = next(i for i in score_add.input if i != scaled.output[0])
        qkv_add = producer[producer[scaled.input[0]].input[0]]  # walk q back to the QKV product + bias
        while not (qkv_add.op_type == "Add" and any(i in weights for i in qkv_add.input)):
            qkv_add = producer[qkv_add.input[0]]
        if (score_add.op_type, weighted.op_type, transpose.op_type, context.op_type) != (
            "Add",
            "MatMul",
            "Transpose",
            "Reshape",
        ):
            raise ValueError(f"{block}: not the hand-written attention pattern")
        product = next(i for i in qkv_add.input if i not in weights)
        qkv_bias = next(i for i in qkv_add.input if i in weights)
        d = sizes_of[qkv_bias][0] // 3
        if bias not in expanded:  # B×1×1×T or B×1×T×T → B×1×T×T
            full = f"{bias}/full"
            added += [
                helper.make_node("Shape", [bias], [f"{full}/bh"], start=0, end=2),
                helper.make_node("Shape", [bias], [f"{full}/t"], start=3, end=4),
                helper.make_node("Concat", [f"{full}/bh", f"{full}/t", f"{full}/t"], [f"{full}/shape"], axis=0),
                helper.make_node("Expand", [bias, f"{full}/shape"], [full]),
            ]
            expanded[bias] = full
        split = f"{block}/fused/split_sizes"
        graph.initializer.append(numpy_helper.from_array(np.array([d, d, d], dtype=np.int64), split))
        q, k, v = (f"{block}/fused/{x}" for x in "qkv")
        added += [
            helper.make_node("Split", [product, split], [q, k, v], axis=-1, name=f"{block}/fused/Split"),
            helper.make_node(
                "MultiHeadAttention",
                [q, k, v, qkv_bias, "", expanded[bias]],
                [context.output[0]],
                domain="com.microsoft",
                num_heads=n_heads,
                name=f"{block}/fused/MultiHeadAttention",
            ),
        ]
        removed.append(context)
    for node in removed:
        graph.node.remove(node)
    graph.node.extend(added)
    order = _topological(graph)
    del graph.node[:]
    graph.node.extend(order)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(target))
    return len(removed)
