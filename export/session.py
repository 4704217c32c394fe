"""onnxruntime sessions, configured in one place for the export's checks and the runtime's predictions.

Between a bundle's ONNX file and everything that runs it: CPU execution provider, intra-op threads set
explicitly when asked (benchmarks must, docs/design.md §6), one inter-op thread, and optionally a graph
optimisation level whose optimised graph is saved to disk (how ``--optimize`` writes
``model.optimized.onnx``), whether idle intra-op threads spin (onnxruntime's default) or sleep, the
parallel execution mode (with ``inter_op_threads``) and onnxruntime's per-node profiler. The benchmark
measures these settings (bench/README.md); none is assumed faster.
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
    spinning: bool | None = None,
    inter_op_threads: int | None = None,
    profile_prefix: str | Path | None = None,
) -> ort.InferenceSession:
    """A CPU session for ``model_path``; ``threads`` = intra-op threads (None: onnxruntime's default).

    ``spinning``: whether idle intra-op threads busy-wait for work (None: onnxruntime's default, on);
    ``inter_op_threads`` > 1 runs independent nodes in parallel (ORT_PARALLEL); ``profile_prefix``
    turns on onnxruntime's profiler (``session.end_profiling()`` returns its JSON file).
    """
    for name, value in (("threads", threads), ("inter_op_threads", inter_op_threads)):
        if value is not None and value < 1:
            raise ValueError(f"{name}={value} must be ≥ 1")
    options = ort.SessionOptions()
    options.graph_optimization_level = LEVELS[level]
    options.inter_op_num_threads = inter_op_threads or 1
    if inter_op_threads is not None and inter_op_threads > 1:
        options.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    if threads is not None:
        options.intra_op_num_threads = threads
    if spinning is not None:
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "1" if spinning else "0")
    if save_optimized_to is not None:
        options.optimized_model_filepath = str(save_optimized_to)
    if profile_prefix is not None:
        options.enable_profiling = True
        options.profile_file_prefix = str(profile_prefix)
    options.log_severity_level = 3  # errors only; warnings about unused initialisers are noise here
    return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])
