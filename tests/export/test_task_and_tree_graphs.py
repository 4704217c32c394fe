"""A parser-free model exports two graphs: the task graph computes the task output and nothing the task does
not read (no label scorer, no tree outputs), the tree graph also gives D̂, heads and labels — each as PyTorch
computes them, at batch sizes and lengths other than the trace's, with D̂ by pointer jumps or by adjacency
powers in the task graph. Tiny models with random weights; no training."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from parserfree.encoder import EncoderConfig
from parserfree.export.onnx_graph import export_onnx, graph_module, run_graph_module
from parserfree.predictor import PredictorConfig
from parserfree.predictor.syntax_model import SyntaxModel

LABELS = ("ROOT", "amod", "det", "dobj", "nsubj", "punct")
SHAPES = [(7, 23), (1, 40), (3, 2)]  # none is the trace's (2, 5)


def tiny_model(**predictor) -> SyntaxModel:
    encoder = EncoderConfig.from_dict(
        {"vocab_size": 60, "d_model": 16, "n_heads": 2, "n_layers": 2, "d_ff": 32, "max_len": 40}
        | {"predictor_layer": 1, "bias": {"zero_init": False}}
    )
    config = PredictorConfig.from_dict({"arc_dim": 8, "label_dim": 4} | predictor)
    model = SyntaxModel(encoder, config, "binary", 2, seed=0, dep_labels=LABELS).eval()
    torch.manual_seed(1)
    for p in model.predictor.parameters():
        torch.nn.init.normal_(p, std=0.5)  # varied trees and labels, no ties
    if model.predictor.arc_scorer is not None:
        scorer = model.predictor.arc_scorer
        with torch.no_grad():  # long chains: paths beyond max_distance (10)
            scorer.relative.weight[scorer.max_relative_position + 1] = 3.0
    return model


def feeds(batch: int, length: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    lengths = [length] + [int(n) for n in rng.integers(1, length + 1, batch - 1)]
    mask = np.arange(length)[None, :] < np.array(lengths)[:, None]
    return {
        "word_ids": np.where(mask, rng.integers(2, 60, (batch, length)), 0).astype(np.int64),
        "feature_ids": rng.integers(0, 4096, (batch, length, 3)).astype(np.int64),
        "mask": mask,
    }


def exported(model: SyntaxModel, graph: str, path, distances: str = "pointer_jumps"):
    module = graph_module(model, "parser_free", graph, distances)
    export_onnx(module, feeds(2, 5), path)
    return module, ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


@pytest.fixture(scope="module")
def model() -> SyntaxModel:
    return tiny_model()


def test_the_task_graph_contains_no_label_scorer_and_returns_the_task_output_only(model, tmp_path):
    """No output but task_output, and no weight of the label scorer among the graph's constants (by value,
    transposed too: the exporter renames and transposes weights); the tree graph has them."""
    _, task = exported(model, "task", tmp_path / "model.onnx")
    _, tree = exported(model, "tree", tmp_path / "tree.onnx")
    assert [o.name for o in task.get_outputs()] == ["task_output"]
    assert [o.name for o in tree.get_outputs()] == ["task_output", "distances", "heads", "dep_labels"]

    def constants(path) -> list[np.ndarray]:
        return [onnx.numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer]

    def holds(arrays: list[np.ndarray], weight: np.ndarray) -> bool:
        return any(a.shape == w.shape and np.array_equal(a, w) for a in arrays for w in (weight, weight.T))

    label_weights = [p.detach().numpy() for p in model.predictor.label_scorer.parameters()]
    assert not any(holds(constants(tmp_path / "model.onnx"), w) for w in label_weights)
    assert all(holds(constants(tmp_path / "tree.onnx"), w) for w in label_weights)
    graph = onnx.load(str(tmp_path / "model.onnx")).graph
    assert not [t.name for t in graph.initializer if "label_scorer" in t.name]
    assert len(graph.node) < len(onnx.load(str(tmp_path / "tree.onnx")).graph.node)


@pytest.mark.parametrize("distances", ["pointer_jumps", "adjacency_powers"])
def test_the_task_graph_gives_the_task_output_of_pytorch_and_of_the_tree_graph(model, tmp_path, distances):
    module, task = exported(model, "task", tmp_path / "model.onnx", distances)
    tree_module, tree = exported(model, "tree", tmp_path / "tree.onnx")
    for batch, length in SHAPES:
        f = feeds(batch, length, seed=batch)
        (got,) = task.run(None, f)
        with torch.no_grad():
            ref = model(*(torch.from_numpy(f[k]) for k in ("word_ids", "feature_ids", "mask")))
        np.testing.assert_allclose(got, ref.task.numpy(), atol=1e-4, rtol=0)
        np.testing.assert_allclose(got, tree.run(None, f)[0], atol=1e-4, rtol=0)
        np.testing.assert_allclose(got, run_graph_module(module, f)["task_output"], atol=1e-4, rtol=0)
    assert model.predictor.distance_cap is None  # the task graph's clamp does not outlive its call


def test_the_tree_graph_gives_the_heads_labels_and_distances_of_pytorch(model, tmp_path):
    _, tree = exported(model, "tree", tmp_path / "tree.onnx")
    deep = False
    for batch, length in SHAPES:
        f = feeds(batch, length, seed=10 + batch)
        task, distances, heads, labels = tree.run(None, f)
        with torch.no_grad():
            ref = model(*(torch.from_numpy(f[k]) for k in ("word_ids", "feature_ids", "mask")))
        mask = f["mask"]
        pairs = mask[:, :, None] & mask[:, None, :]
        np.testing.assert_array_equal(heads, ref.predicted.heads.numpy())
        np.testing.assert_array_equal(labels, ref.predicted.labels.numpy())
        np.testing.assert_allclose(distances[pairs], ref.predicted.distances.numpy()[pairs], atol=1e-4, rtol=0)
        deep |= bool(distances[pairs].max() > model.encoder.bias.saturation())  # exact, not clamped
        assert (heads[~mask] == -1).all() and (labels[mask] >= 0).all()
    assert deep


def test_adjacency_powers_are_refused_where_d_hat_is_no_predicted_tree(tmp_path):
    with pytest.raises(ValueError, match="needs a predicted tree"):
        graph_module(tiny_model(form="probe"), "parser_free", "task", "adjacency_powers")
    with pytest.raises(ValueError, match="needs a predicted tree"):
        graph_module(tiny_model(soft=True), "parser_free", "task", "adjacency_powers")
    with pytest.raises(ValueError, match="task graph"):
        graph_module(tiny_model(), "parser_free", "tree", "adjacency_powers")  # the tree graph's D̂ stays exact
    with pytest.raises(ValueError, match="task graph only"):
        graph_module(tiny_model(), "parser_fed_twin", "tree")


def test_the_default_takes_adjacency_powers_only_where_they_apply(model):
    from parserfree.export.onnx_graph import AUTO, task_distances_for

    assert task_distances_for(model, "parser_free", AUTO) == "adjacency_powers"
    assert task_distances_for(model, "parser_free", "pointer_jumps") == "pointer_jumps"  # asked for: kept
    assert task_distances_for(model, "parser_fed_twin", AUTO) == "pointer_jumps"  # its D comes from the parser
    assert task_distances_for(tiny_model(soft=True), "parser_free", AUTO) == "pointer_jumps"  # no predicted tree
    assert task_distances_for(tiny_model(form="probe"), "parser_free", AUTO) == "pointer_jumps"
