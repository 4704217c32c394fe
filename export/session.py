"""onnxruntime sessions, configured in one place for the export's checks and the runtime's predictions.

Between a bundle's ONNX file and everything that runs it: CPU execution provider, intra-op threads set
explicitly when asked (benchmarks must, docs/design.md §6), one inter-op thread, and optionally a graph
optimisation level whose optimised graph is saved to disk (how ``--optimize`` writes
``model.optimized.onnx``).
"""

from __future__ import annotations

from pathlib import Path

import onnxruntime as ort

LEVELS = {
    "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}


def make_session(
    model_path: str | Path,
    threads: int | None = None,
    level: str = "all",
    save_optimized_to: str | Path | None = None,
) -> ort.InferenceSession:
    """A CPU session for ``model_path``; ``threads`` = intra-op threads (None: onnxruntime's default)."""
    if threads is not None and threads < 1:
        raise ValueError(f"threads={threads} must be ≥ 1")
    options = ort.SessionOptions()
    options.graph_optimization_level = LEVELS[level]
    options.inter_op_num_threads = 1
    if threads is not None:
        options.intra_op_num_threads = threads
    if save_optimized_to is not None:
        options.optimized_model_filepath = str(save_optimized_to)
    options.log_severity_level = 3  # errors only; warnings about unused initialisers are noise here
    return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])
