"""The check that an exported task graph computes what its PyTorch model does at batch sizes and lengths
other than the one it was traced at."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch

from parserfree.core.checkpoints import TrainedModel


def assert_task_output_matches(
    graph: str | Path,
    trained: TrainedModel,
    trace_shape: Sequence[int],
    shapes: Sequence[tuple[int, int]],
    atol: float,
    rtol: float = 0.0,
) -> None:
    """Random sentences of the vocabulary's words, one batch per (batch, length) of ``shapes`` (the first
    sentence that long, the others shorter): the graph's ``task_output`` against the model's."""
    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    words = trained.vocab.words[2:]
    for batch, length in shapes:
        assert [batch, length] != list(trace_shape)
        lengths = [length] + [int(n) for n in rng.integers(1, length + 1, batch - 1)]
        sentences = [list(rng.choice(words, n)) for n in lengths]
        word_ids, feature_ids, mask = trained.vocab.encode_batch(sentences, trained.encoder_config.max_len)
        task = session.run(["task_output"], {"word_ids": word_ids, "feature_ids": feature_ids, "mask": mask})[0]
        with torch.no_grad():
            ref = trained.model(*(torch.from_numpy(a) for a in (word_ids, feature_ids, mask)))
        np.testing.assert_allclose(task, ref.task.numpy(), atol=atol, rtol=rtol)
