"""The machine's attainable matrix-product rate, measured in the benchmark's own run and threads.

``attainable_rates`` times large square GEMMs (n = 1024 and 2048) and keeps the best rate per number
type: fp32 with PyTorch's ``torch.mm`` and onnxruntime's ``MatMul`` (MLAS), int8 with onnxruntime's
``MatMulInteger`` (uint8 × int8 → int32, the kernel the dynamically quantised graph runs; it uses VNNI
where the CPU has it). ``shape_rate`` times one fp32 ``MatMul`` of a given M×K·K×N shape — the model's
own products in isolation, which bound what its graph can reach at that size. Rates are GFLOP/s, 2 FLOPs
per multiply-add.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

SIZES = (1024, 2048)


def _rate(call: Callable[[], object], flops: float, min_time: float) -> float:
    """GFLOP/s of ``call`` (``flops`` each), after one warm-up call, repeated for at least ``min_time`` s."""
    call()
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < min_time or calls < 2:
        call()
        calls += 1
    return flops * calls / elapsed / 1e9


def _ort_matmul(m: int, k: int, n: int, integer: bool, threads: int) -> Callable[[], object]:
    """A call that runs one onnxruntime MatMul (fp32) or MatMulInteger (u8 × s8) of M×K · K×N."""
    a_type, b_type, y_type = (
        (TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32) if integer else (TensorProto.FLOAT,) * 3
    )
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger" if integer else "MatMul", ["A", "B"], ["Y"])],
        "gemm",
        [helper.make_tensor_value_info("A", a_type, [m, k]), helper.make_tensor_value_info("B", b_type, [k, n])],
        [helper.make_tensor_value_info("Y", y_type, [m, n])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    if integer:
        feeds = {"A": rng.integers(0, 255, (m, k), dtype=np.uint8), "B": rng.integers(-127, 127, (k, n), dtype=np.int8)}
    else:
        feeds = {"A": rng.standard_normal((m, k), dtype=np.float32), "B": rng.standard_normal((k, n), dtype=np.float32)}
    return lambda: session.run(None, feeds)


def attainable_rates(threads: int, min_time: float = 1.0) -> dict:
    """Best large-GEMM GFLOP/s per number type and library: {"fp32": {...}, "int8": {...}}, each with its
    ``best`` and the per-size rates that gave it."""
    import torch

    torch.set_num_threads(threads)
    out: dict = {"fp32": {"torch.mm": {}, "onnxruntime MatMul": {}}, "int8": {"onnxruntime MatMulInteger": {}}}
    for n in SIZES:
        a, b = torch.randn(n, n), torch.randn(n, n)
        out["fp32"]["torch.mm"][n] = _rate(lambda: torch.mm(a, b), 2.0 * n**3, min_time)  # noqa: B023 (called within the iteration)
        out["fp32"]["onnxruntime MatMul"][n] = _rate(_ort_matmul(n, n, n, False, threads), 2.0 * n**3, min_time)
        out["int8"]["onnxruntime MatMulInteger"][n] = _rate(_ort_matmul(n, n, n, True, threads), 2.0 * n**3, min_time)
    for kind in out.values():
        kind["best"] = max(rate for lib in kind.values() for rate in lib.values())
    return out


def shape_rate(m: int, k: int, n: int, threads: int, min_time: float = 0.3) -> float:
    """GFLOP/s of one onnxruntime fp32 MatMul of M×K · K×N (a product of the model at its own size)."""
    return _rate(_ort_matmul(m, k, n, False, threads), 2.0 * m * k * n, min_time)
