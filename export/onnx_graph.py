"""Trained ``SyntaxModel`` → the ONNX graphs of a bundle (TorchScript exporter, opset 17, dynamic batch and length).

The first step of the export: ``RecipeGraph`` fixes the model's distance source to the recipe's
inference source and returns plain tensors in the order of its ``output_names``. Every bundle has a
**task graph** (``graph="task"``): words (+ parser distances for the parser-fed model) → ``task_output``
only — the parser-free model computes its predictor's D̂ for the bias inside it, but no dependency labels
and no output the task does not read (the exporter drops every node no output needs, so the label
scorer is not in it). A parser-free bundle also has a **tree graph** (``graph="tree"``): the same model
returning ``task_output``, D̂ and, for a ``heads`` predictor, the predicted heads and labels — what the
spaCy component, ``predict --with-tree`` and the parser bench run. The task graph's D̂ may come from
pointer jumping (``"pointer_jumps"``, exact) or from powers of the head adjacency clamped where the bias
saturates (``"adjacency_powers"``: the same bias, other nodes; ``TASK_DISTANCES``); ``"auto"``, the
default, takes adjacency powers wherever they apply (a parser-free model with a hard `heads` predictor;
the gain is measured in ``docs/bench/task_distances-*.json``) and pointer jumping elsewhere; the tree graph's D̂ is always exact. ``PredictorGraph`` is the predictor alone (embeddings, the layers or
tower it reads, the scorers: words → D̂, heads, labels); with ``parse=True`` it returns the heads and
labels alone, the graph the parser benchmark times against spaCy's parser. The same wrappers give the PyTorch reference of the parity check, so a graph and its
reference can never disagree on what is computed. The dynamo exporter fails on this model
(docs/design.md §6), hence ``dynamo=False``.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

from ..core.recipes import Recipe
from ..predictor.distance_predictor import DistancePredictor
from ..predictor.sources import DistanceSource
from ..predictor.syntax_model import Outputs, SyntaxModel
from .graph_inputs import (
    POSITION_INPUTS,
    TASK_OUTPUTS,
    WORD_INPUTS,
    graph_recipe,
    has_tree_graph,
    input_names,
    output_names,
    position_axis,
    tree_outputs,
)

OPSET = 17
# What the exported graph computes from a checkpoint, as a version: bumped whenever the export builds other
# nodes for the same weights (2: label scores as one batched product, the predicted tree's D̂ read by table
# lookup; 3: a task graph without the label scorer and tree outputs, and a tree graph beside it; 4: the task
# graph's D̂ by adjacency powers where they apply), so that a bundle exported by older code is exported again
# instead of being reused (stages.py).
GRAPH_VERSION = 4
GRAPHS = ("task", "tree")
# How the task graph computes the D̂ its bias reads: exact path lengths by pointer jumping, or min(d, K) by
# powers of the head adjacency, K = the bias's saturation (predictor/tree_ops.py). The same bias either way.
TASK_DISTANCES = ("pointer_jumps", "adjacency_powers")
AUTO = "auto"  # adjacency powers where they apply, else pointer jumps (``task_distances_for``)
AXES = {
    "word_ids": {0: "batch", 1: "length"},
    "feature_ids": {0: "batch", 1: "length"},
    "mask": {0: "batch", 1: "length"},
    "distances": {0: "batch", 1: "length", 2: "length"},
    "task_output": {0: "batch"},
    "heads": {0: "batch", 1: "length"},
    "dep_labels": {0: "batch", 1: "length"},
}


def axes_of(name: str, subwords: bool) -> dict[int, str]:
    """The dynamic axes of one graph input or output (a pre-trained encoder's ids run over its subwords)."""
    axes = AXES[name]
    return {**axes, 1: position_axis(subwords)} if name in POSITION_INPUTS else axes


def model_tree_outputs(model: SyntaxModel) -> tuple[str, ...]:
    """The tree outputs (``graph_inputs.tree_outputs``) of a model's predictor: heads, and labels when it
    has a label scorer; none for a probe or without a predictor."""
    predictor = model.predictor
    if predictor is None:
        return ()
    return tree_outputs(predictor.config.form, predictor.label_scorer is not None)


def _tree_tensors(predicted, names: tuple[str, ...]) -> tuple[Tensor, ...]:
    """The predictor's outputs named ``names`` (of "distances", "heads", "dep_labels"), in that order."""
    tensors = {"distances": predicted.distances, "heads": predicted.heads, "dep_labels": predicted.labels}
    return tuple(tensors[name] for name in names)


@contextlib.contextmanager
def _distance_cap(predictor: DistancePredictor | None, cap: int | None) -> Iterator[None]:
    """Within the block the predictor computes D̂ clamped at ``cap`` (None: exactly); restored after."""
    if predictor is None or cap is None:
        yield
        return
    before = predictor.distance_cap
    predictor.distance_cap = cap
    try:
        yield
    finally:
        predictor.distance_cap = before


def reads_subwords(model: SyntaxModel) -> bool:
    """Whether a model's ids run over a pre-trained encoder's subwords (``graph_inputs.position_axis``)."""
    return model.encoder.reads_subwords


class RecipeGraph(nn.Module):
    """What one exported graph of a recipe computes, the biased layers fed from the recipe's inference
    source (its row's ``eval_source``: the predictor's D̂, the parser's distances given as an input, or no
    bias): (word_ids, feature_ids, mask[, distances]) → task_output (``graph="task"``), or → task_output,
    D̂, heads, labels (``graph="tree"``, a parser-free recipe only). ``distances``: how the task graph
    computes D̂ (``TASK_DISTANCES``; "adjacency_powers" clamps it at the bias's saturation)."""

    def __init__(self, model: SyntaxModel, row: Recipe, graph: str = "task", distances: str = "pointer_jumps") -> None:
        super().__init__()
        self.model = model
        self.graph = graph
        self.source = row.eval_source
        self.returns_distances = graph == "tree"
        self.input_names = input_names(row.name)
        self.output_names = output_names(row.name, model_tree_outputs(model)) if graph == "tree" else TASK_OUTPUTS
        self.distances = distances
        self.distance_cap = model.encoder.bias.saturation() if distances == "adjacency_powers" else None

    @property
    def subwords(self) -> bool:
        """Whether the graph's ids run over a pre-trained encoder's subwords (``graph_inputs.position_axis``)."""
        return reads_subwords(self.model)

    def forward(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor, distances: Tensor | None = None):
        with _distance_cap(self.model.predictor, self.distance_cap):
            out = self.model(
                word_ids,
                feature_ids,
                mask,
                distances=distances,
                source=self.source,
                outputs=Outputs.BOTH if self.returns_distances else Outputs.TASK,
            )
        if self.returns_distances:
            return (out.task, *_tree_tensors(out.predicted, self.output_names[1:]))  # B×C (or B), B×T×T, B×T, B×T
        return out.task


class PredictorGraph(nn.Module):
    """The predictor alone: (word_ids, feature_ids, mask) → D̂ (B×T×T) and, for a ``heads`` predictor, the
    heads and label ids (B×T each) — the embeddings, the layers 1..k or the tower it reads, and its scorers.

    ``parse=True``: the parser's outputs only (heads and label ids, no D̂), what a dependency parser returns;
    the exporter then drops the nodes that compute D̂ from the heads.
    """

    def __init__(self, model: SyntaxModel, parse: bool = False) -> None:
        super().__init__()
        if model.predictor is None:
            raise ValueError("the model has no distance predictor")
        tree = model_tree_outputs(model)
        if parse and not tree:
            raise ValueError(f"a {model.predictor.config.form!r} predictor returns no heads: it has no parser graph")
        self.model = model
        self.input_names = WORD_INPUTS
        self.output_names = tree if parse else ("distances", *tree)

    @property
    def subwords(self) -> bool:
        """As ``RecipeGraph.subwords``."""
        return reads_subwords(self.model)

    def forward(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor):
        return _tree_tensors(self.model.predict(word_ids, feature_ids, mask), self.output_names)


def task_distances_for(model: SyntaxModel, recipe: str, requested: str = AUTO) -> str:
    """The task graph's D̂ method (``TASK_DISTANCES``) for ``requested``: itself, or for ``AUTO`` adjacency
    powers where they apply (a parser-free recipe whose predictor has hard `heads`), else pointer jumps."""
    if requested != AUTO:
        return requested
    predictor = model.predictor
    applies = has_tree_graph(recipe) and predictor is not None and predictor.arc_scorer is not None
    return "adjacency_powers" if applies and not predictor.config.soft else "pointer_jumps"


def graph_module(model: SyntaxModel, recipe: str, graph: str = "task", distances: str = "pointer_jumps") -> RecipeGraph:
    """The export wrapper of one graph (``GRAPHS``) of one recipe around a trained model (eval
    mode); ``distances``: how the task graph computes D̂ (``TASK_DISTANCES``). ValueError naming what
    does not fit (a tree graph of a recipe without one, adjacency powers without a predicted tree)."""
    row = graph_recipe(recipe)
    if graph not in GRAPHS:
        raise ValueError(f"graph={graph!r} must be one of {', '.join(GRAPHS)}")
    if distances not in TASK_DISTANCES:
        raise ValueError(f"task distances {distances!r} must be one of {', '.join(TASK_DISTANCES)}")
    if row.eval_source == DistanceSource.PREDICTED and model.predictor is None:
        raise ValueError(f"a {recipe} graph needs a model with a distance predictor")
    if model.head is None:
        raise ValueError("the model has no task head (a pretrain_predictor run); nothing to export")
    if graph == "tree" and not has_tree_graph(recipe):
        raise ValueError(f"a {recipe} model predicts no distances: its bundle has a task graph only")
    if distances == "adjacency_powers":
        predictor = model.predictor
        if graph != "task" or not has_tree_graph(recipe) or predictor is None:
            raise ValueError("adjacency_powers computes the task graph's D̂ of a parser-free model only")
        if predictor.arc_scorer is None or predictor.config.soft:
            raise ValueError(
                "adjacency_powers needs a predicted tree: a `heads` predictor without `soft` "
                f"(this one is form {predictor.config.form!r}, soft {predictor.config.soft})"
            )
    return RecipeGraph(model, row, graph, distances).eval()


def run_graph_module(module: RecipeGraph | PredictorGraph, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The PyTorch reference: run a wrapper on named numpy inputs → named numpy outputs."""
    args = tuple(torch.from_numpy(feeds[name]) for name in module.input_names)
    with torch.no_grad():
        out = module(*args)
    out = out if isinstance(out, tuple) else (out,)
    return {name: t.numpy() for name, t in zip(module.output_names, out)}


def export_onnx(module: RecipeGraph | PredictorGraph, trace_feeds: dict[str, np.ndarray], path: str | Path) -> None:
    """Trace a wrapper on ``trace_feeds`` and write the ONNX graph to ``path`` (dynamic batch and length
    on every input and output)."""
    args = tuple(torch.from_numpy(trace_feeds[name]) for name in module.input_names)
    names = (*module.input_names, *module.output_names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings and exporter deprecation notices
        torch.onnx.export(
            module,
            args,
            str(path),
            input_names=list(module.input_names),
            output_names=list(module.output_names),
            dynamic_axes={name: axes_of(name, module.subwords) for name in names},
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=True,
        )
