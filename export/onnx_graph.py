"""Trained ``SyntaxModel`` → one ONNX graph (TorchScript exporter, opset 17, dynamic batch and length).

The first step of the export in the data flow: a thin wrapper per graph kind fixes the model's distance
source and returns plain tensors in the order of ``graph_inputs.output_names`` — ``ParserFreeGraph``
(D̂ from the predictor, the parser-free model), ``ParserFedGraph`` (parser distances as an input) and
``NoSyntaxGraph`` (bias off). The same wrappers give the PyTorch reference of the parity check, so the
graph and its reference can never disagree on what is computed. The dynamo exporter fails on this model
(DESIGN §2), hence ``dynamo=False``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

from parserfree.export.graph_inputs import check_kind, input_names, output_names
from parserfree.predictor.syntax_model import SyntaxModel

OPSET = 17


class ParserFreeGraph(nn.Module):
    """(word_ids, feature_ids, mask) → (task_output, D̂): the predictor's distances bias layers k+1..N."""

    def __init__(self, model: SyntaxModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        out = self.model(word_ids, feature_ids, mask, source="predicted")
        return out.task, out.predicted.distances  # B×C (or B), B×T×T


class ParserFedGraph(nn.Module):
    """(word_ids, feature_ids, mask, distances) → task_output: parser distances bias every layer."""

    def __init__(self, model: SyntaxModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor, distances: Tensor) -> Tensor:
        return self.model(word_ids, feature_ids, mask, distances=distances, source="parser").task


class NoSyntaxGraph(nn.Module):
    """(word_ids, feature_ids, mask) → task_output: padding mask only, no syntax bias."""

    def __init__(self, model: SyntaxModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor) -> Tensor:
        return self.model(word_ids, feature_ids, mask, source="none").task


GRAPHS = {"parser_free": ParserFreeGraph, "parser_fed": ParserFedGraph, "no_syntax": NoSyntaxGraph}


def graph_module(model: SyntaxModel, kind: str) -> nn.Module:
    """The export wrapper of one kind around a trained model (eval mode)."""
    check_kind(kind)
    if kind == "parser_free" and model.predictor is None:
        raise ValueError("a parser_free graph needs a model with a distance predictor")
    if model.head is None:
        raise ValueError("the model has no task head (a pretrain_predictor run); nothing to export")
    return GRAPHS[kind](model).eval()


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
