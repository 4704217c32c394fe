"""Trained ``SyntaxModel`` → one ONNX graph (TorchScript exporter, opset 17, dynamic batch and length).

The first step of the export: ``RecipeGraph`` fixes the model's distance source to the recipe's
inference source and returns plain tensors in the order of ``graph_inputs.output_names`` (D̂ from the
predictor for the parser-free model, parser distances as an input for the parser-fed one, no bias for
the baseline). The same wrappers give the PyTorch reference of the parity check, so the
graph and its reference can never disagree on what is computed. The dynamo exporter fails on this model
(docs/design.md §6), hence ``dynamo=False``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

from parserfree.distill.recipes import Recipe
from parserfree.export.graph_inputs import graph_recipe, input_names, output_names
from parserfree.predictor.sources import DistanceSource
from parserfree.predictor.syntax_model import SyntaxModel

OPSET = 17


class RecipeGraph(nn.Module):
    """What the exported graph of a recipe computes: (word_ids, feature_ids, mask[, distances]) →
    task_output[, D̂], with the biased layers fed from the recipe's inference source (its row's
    ``eval_source``: the predictor's D̂, the parser's distances given as an input, or no bias)."""

    def __init__(self, model: SyntaxModel, row: Recipe) -> None:
        super().__init__()
        self.model = model
        self.source = row.eval_source
        self.returns_distances = row.graph_returns_distances

    def forward(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor, distances: Tensor | None = None):
        out = self.model(word_ids, feature_ids, mask, distances=distances, source=self.source,
                         predict=self.returns_distances)
        if self.returns_distances:
            return out.task, out.predicted.distances  # B×C (or B), B×T×T
        return out.task


def graph_module(model: SyntaxModel, kind: str) -> nn.Module:
    """The export wrapper of one kind (a recipe) around a trained model (eval mode)."""
    row = graph_recipe(kind)
    if row.eval_source == DistanceSource.PREDICTED and model.predictor is None:
        raise ValueError(f"a {kind} graph needs a model with a distance predictor")
    if model.head is None:
        raise ValueError("the model has no task head (a pretrain_predictor run); nothing to export")
    return RecipeGraph(model, row).eval()


def run_graph_module(module: nn.Module, kind: str, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The PyTorch reference: run a wrapper on named numpy inputs → named numpy outputs."""
    args = tuple(torch.from_numpy(feeds[name]) for name in input_names(kind))
    with torch.no_grad():
        out = module(*args)
    out = out if isinstance(out, tuple) else (out,)
    return {name: t.numpy() for name, t in zip(output_names(kind), out)}


def dynamic_axes(kind: str) -> dict[str, dict[int, str]]:
    """Dynamic batch and length for every input and output of a kind."""
    axes = {"word_ids": {0: "batch", 1: "length"}, "feature_ids": {0: "batch", 1: "length"},
            "mask": {0: "batch", 1: "length"}, "distances": {0: "batch", 1: "length", 2: "length"},
            "task_output": {0: "batch"}}
    return {name: axes[name] for name in (*input_names(kind), *output_names(kind))}


def export_onnx(module: nn.Module, kind: str, trace_feeds: dict[str, np.ndarray], path: str | Path) -> None:
    """Trace a wrapper on ``trace_feeds`` and write the ONNX graph to ``path``."""
    args = tuple(torch.from_numpy(trace_feeds[name]) for name in input_names(kind))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings and exporter deprecation notices
        torch.onnx.export(
            module, args, str(path),
            input_names=list(input_names(kind)), output_names=list(output_names(kind)),
            dynamic_axes=dynamic_axes(kind), opset_version=OPSET, dynamo=False, do_constant_folding=True,
        )
