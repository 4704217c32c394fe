"""ONNX export (TorchScript exporter, opset 17, dynamic batch and length) of the in-graph distances and
of the whole predictor, run in onnxruntime at a batch size and length other than the trace's."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
import torch
from torch import nn

from parserfree.core.trees import batch_tree_distances, validate_heads
from parserfree.predictor.config import PredictorConfig
from parserfree.predictor.distance_predictor import DistancePredictor
from parserfree.predictor.tree_ops import break_cycles, distances_from_heads, on_cycle, steps_for_length

MAX_LEN = 64
AXES = {
    "h": {0: "batch", 1: "length"},
    "heads": {0: "batch", 1: "length"},
    "mask": {0: "batch", 1: "length"},
    "scores": {0: "batch", 1: "length", 2: "length"},
    "forest": {0: "batch", 1: "length"},
    "distances": {0: "batch", 1: "length", 2: "length"},
    "predicted_heads": {0: "batch", 1: "length"},
}


class TreeDistances(nn.Module):
    def forward(self, heads: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return distances_from_heads(heads, mask, steps_for_length(MAX_LEN))


class TreeRepair(nn.Module):
    def forward(
        self, scores: torch.Tensor, heads: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        forest = break_cycles(scores, heads, mask, steps_for_length(MAX_LEN))
        return forest, distances_from_heads(forest, mask, steps_for_length(MAX_LEN))


class ExportedPredictor(nn.Module):
    def __init__(self, predictor: DistancePredictor) -> None:
        super().__init__()
        self.predictor = predictor

    def forward(self, h: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.predictor(h, mask)
        heads = out.heads if out.heads is not None else mask.long()
        return out.distances, heads


def _session(module: nn.Module, args: tuple, names: list[str], outputs: list[str], path) -> ort.InferenceSession:
    torch.onnx.export(
        module,
        args,
        str(path),
        dynamo=False,
        opset_version=17,
        input_names=names,
        output_names=outputs,
        dynamic_axes={k: AXES[k] for k in names + outputs},
    )
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _padded(batch: list[np.ndarray], t: int) -> tuple[np.ndarray, np.ndarray]:
    heads = np.full((len(batch), t), -1, dtype=np.int64)
    for b, h in enumerate(batch):
        heads[b, : h.size] = h
    return heads, heads >= 0


def test_exported_tree_distances_equal_teacher_at_new_shape(tmp_path, make_forest, make_chain):
    rng = np.random.default_rng(0)
    trace_heads, trace_mask = _padded([make_forest(rng, 5), make_forest(rng, 3)], 6)
    session = _session(
        TreeDistances(),
        (torch.from_numpy(trace_heads), torch.from_numpy(trace_mask)),
        ["heads", "mask"],
        ["distances"],
        tmp_path / "tree.onnx",
    )
    batch = [make_chain(60), make_forest(rng, 41, 3), np.array([0]), make_forest(rng, 17), make_forest(rng, 60, 2)]
    heads, mask = _padded(batch, 61)
    (got,) = session.run(None, {"heads": heads, "mask": mask})
    expected = batch_tree_distances([h.tolist() for h in batch], length=61)
    np.testing.assert_array_equal(got, expected.astype(np.float32))


@pytest.mark.parametrize("config", [{}, {"soft": True}, {"form": "probe"}])
def test_exported_predictor_matches_pytorch_at_new_shape(tmp_path, config):
    torch.manual_seed(0)
    predictor = DistancePredictor(16, PredictorConfig(arc_dim=8, rank=4, **config), max_len=MAX_LEN).eval()
    for p in predictor.parameters():
        torch.nn.init.normal_(p, std=0.3)
    module = ExportedPredictor(predictor)
    trace = (torch.randn(2, 5, 16), torch.tensor([[True] * 5, [True] * 3 + [False] * 2]))
    session = _session(module, trace, ["h", "mask"], ["distances", "predicted_heads"], tmp_path / "p.onnx")
    h = torch.randn(4, 23, 16)
    mask = torch.arange(23).unsqueeze(0) < torch.tensor([[23], [1], [17], [9]])
    with torch.no_grad():
        distances, heads = module(h, mask)
    got_distances, got_heads = session.run(None, {"h": h.numpy(), "mask": mask.numpy()})
    np.testing.assert_array_equal(got_heads, heads.numpy())
    np.testing.assert_allclose(got_distances, distances.numpy(), rtol=1e-4, atol=1e-4)
    if config.get("form") == "probe":
        return
    with torch.no_grad():
        argmax_heads = predictor(h, mask).argmax_heads
    assert on_cycle(argmax_heads, mask, predictor.n_steps).any()  # the in-graph cycle breaking had work to do
    for b, n in enumerate(mask.sum(1).tolist()):
        validate_heads(got_heads[b, :n])  # the exported graph's heads form a forest
    if not config:  # hard distances are exact integers: those of the repaired forest
        np.testing.assert_array_equal(
            got_distances,
            batch_tree_distances([got_heads[b, :n] for b, n in enumerate(mask.sum(1).tolist())], length=23),
        )


def test_exported_cycle_breaking_and_distances_follow_the_length_and_the_cycles_of_each_call(tmp_path, make_forest):
    """Traced at 6 words, run at 7–64: catches a length fixed at trace time (sorting keys, sentinels) and
    a graph that fails when no word is on a cycle (the rows of cycle words are then an empty selection)."""
    trace = (torch.randn(1, 6, 6), torch.tensor([[1, 0, 1, 2, 3, 3]]), torch.ones(1, 6, dtype=torch.bool))
    session = _session(TreeRepair(), trace, ["scores", "heads", "mask"], ["forest", "distances"], tmp_path / "r.onnx")
    rng = np.random.default_rng(7)
    for t in (7, 23, 64):
        scores = rng.normal(size=(3, t, t)).astype(np.float32)
        argmax, mask = _padded(
            [scores[0].argmax(1), scores[1, : t - 4, : t - 4].argmax(1), make_forest(rng, t // 2, 2)], t
        )
        assert on_cycle(torch.from_numpy(argmax), torch.from_numpy(mask), steps_for_length(t)).any()
        for heads in (
            argmax,
            _padded([make_forest(rng, t), make_forest(rng, t - 4, 3), make_forest(rng, t // 2)], t)[0],
        ):
            with torch.no_grad():
                expected = TreeRepair()(torch.from_numpy(scores), torch.from_numpy(heads), torch.from_numpy(mask))
            got = session.run(None, {"scores": scores, "heads": heads, "mask": mask})
            np.testing.assert_array_equal(got[0], expected[0].numpy())
            np.testing.assert_array_equal(got[1], expected[1].numpy())
