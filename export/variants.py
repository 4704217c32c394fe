"""Optional model variants of a bundle: an onnxruntime-optimised graph and a dynamically quantised int8 graph.

Built by the export from ``model.onnx`` after it has passed the parity check, and checked the same way
(parity.py): ``model.optimized.onnx`` is onnxruntime's ORT_ENABLE_EXTENDED graph (fused ops, saved once
so a session need not redo the work) and must stay within the fp32 tolerance; ``model.int8.onnx``
(``quantize_dynamic``, int8 weights; a float16 weight, the static vector table, is left as it is) is only
reported on — max difference and task-prediction agreement — since quantisation changes the numbers by
design. Neither is assumed faster: measure (docs/design.md §6).
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .session import make_session

QUANTIZE_CHOICES = ("int8",)
# onnxruntime's quantizer logs this (on the root logger) for every non-float tensor it rightly leaves alone,
# e.g. the predictor's boolean masks
NOT_QUANTISABLE = "Inference failed or unsupported type to quantize for tensor"


@contextlib.contextmanager
def _without_not_quantisable_notes() -> Iterator[None]:
    """Drop the quantizer's NOT_QUANTISABLE records from the root logger while quantising; all else passes."""

    def keep(record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(NOT_QUANTISABLE)

    root = logging.getLogger()
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)


def optimize_model(source: str | Path, target: str | Path, threads: int | None = None) -> None:
    """Write onnxruntime's ORT_ENABLE_EXTENDED optimisation of ``source`` to ``target``."""
    make_session(source, threads, level="extended", save_optimized_to=target)


def quantize_model(source: str | Path, target: str | Path, mode: str = "int8") -> None:
    """Write a dynamically quantised copy of ``source``: int8 weights of the weight MatMuls and embeddings,
    activations quantised at run time."""
    if mode not in QUANTIZE_CHOICES:
        raise ValueError(f"quantize={mode!r} must be one of {', '.join(QUANTIZE_CHOICES)}")
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        # onnxruntime's recommended pre-processing (shape inference + basic fusions); its symbolic shape
        # inference cannot resolve this graph's dynamic T×T shapes, so only ONNX shape inference runs.
        quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
        with _without_not_quantisable_notes():
            quantize_dynamic(
                str(prepared),
                str(target),
                weight_type=QuantType.QInt8,
                nodes_to_exclude=half_precision_nodes(prepared),
            )


def half_precision_nodes(path: str | Path) -> list[str]:
    """Names of the nodes that read a float16 weight (the static vector table, ``encoder.static_vectors``): the
    quantizer handles float32 weights only, and a table already stored at half precision stays as it is."""
    import onnx

    model = onnx.load(str(path))
    half = {t.name for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT16}
    return [node.name for node in model.graph.node if half.intersection(node.input)]
