"""Analytic FLOPs of the parser-free graph: how much arithmetic a word costs, to set speed against the machine's limit.

Counted are the matrix products (2 FLOPs per multiply-add), per word of a sentence of T words, for an
encoder of width d, feed-forward width f, N layers, predictor after layer k (or, with a parser tower of
L_t layers of width d_t and feed-forward width f_t, on the embeddings: k = 0), a ``heads`` predictor of
arc width a (a ``probe`` of rank r) reading states of width p (d, or d_t with a tower) and a label scorer
of width l over L labels:

    passes  = k + N  with ``bias_all_layers`` (layers 1..k run once for the predictor, then all N biased),
              k + (N − k) = N without, N for a model without a predictor
    layer   = 8·d² + 4·d·f    (QKV 6·d², output 2·d², feed-forward 2·2·d·f)
            + 4·T·d            (QKᵀ and the weighted sum of V: 2·T·d each, over all heads)
    shared  = 6·d² + 2·T·d     with ``bias_all_layers`` and k ≥ 1: layer 1's two passes read the same
                               embeddings, so its QKV projection and QKᵀ are computed once (the exported
                               graph holds them once)
    tower   = L_t · (8·d_t² + 4·d_t·f_t + 4·T·d_t)  (its own embeddings are lookups: no FLOPs)
    heads   = 4·p·a + 2·a² + 2·T·a + 4·a   (dependent and head projections, dep·W, (dep·W)·headᵀ, head·u, root)
    probe   = 2·p·r + 2·T·r                 (projection and Gram matrix)
    labels  = 4·p·l + 2·L·l² + 2·L·l + 4·l·L (dependent and head projections, dep·U, ·head of the word's
                                             head, the linear term on [dep; head]) — at the predicted head only
    task    = 2·d·C / T                      (the pooled classifier, C outputs, shared by the sentence's words)
    FLOPs/word(T) = passes · layer − shared + tower + predictor + labels + task

Not counted: embeddings (gathers), layer norms, softmax, GELU, the syntax bias's lookups and the predictor's
tree ops (argmax, cycle breaking, pointer jumping: comparisons and gathers, no products) — the work that
runs below a matrix product's rate. ``useful_flops`` counts every sentence at its own length;
``executed_flops`` at the padded length of its batch (the padding the graph computes too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from parserfree.encoder.config import EncoderConfig
from parserfree.predictor.config import PredictorConfig


@dataclass(frozen=True)
class ModelShape:
    """The sizes the FLOP count needs."""

    d_model: int
    d_ff: int
    n_layers: int
    predictor_layer: int
    bias_all_layers: bool
    predictor_form: str | None  # "heads", "probe" or None (no predictor in the graph)
    predictor_width: int  # arc_dim (heads) or rank (probe)
    n_outputs: int
    tower_layers: int = 0
    tower_d_model: int = 0
    tower_d_ff: int = 0
    label_dim: int = 0
    n_labels: int = 0  # 0: no label scorer

    @classmethod
    def of(
        cls, encoder: EncoderConfig, predictor: PredictorConfig | None, n_outputs: int = 2, n_labels: int = 0
    ) -> ModelShape:
        """From the model's configs (``predictor`` None: a graph that does not run the predictor; ``n_labels``:
        the label inventory's size when the predictor has a label scorer)."""
        encoder_part = (
            encoder.d_model,
            encoder.d_ff,
            encoder.n_layers,
            encoder.predictor_layer,
            encoder.bias_all_layers,
        )
        if predictor is None:
            return cls(*encoder_part, None, 0, n_outputs)
        width = predictor.arc_dim if predictor.form == "heads" else predictor.rank
        tower = predictor.tower_shape(encoder)
        labels = n_labels if predictor.labelled else 0
        return cls(
            *encoder_part,
            predictor.form,
            width,
            n_outputs,
            tower.layers,
            tower.d_model if tower.layers else 0,
            tower.d_ff if tower.layers else 0,
            predictor.label_dim if labels else 0,
            labels,
        )

    @property
    def layer_passes(self) -> int:
        """Encoder layers run per forward pass (layers 1..k run twice with ``bias_all_layers``)."""
        if self.predictor_form is None:
            return self.n_layers
        return self.predictor_layer + (self.n_layers if self.bias_all_layers else self.n_layers - self.predictor_layer)


def flops_per_word(shape: ModelShape, length: int) -> dict[str, float]:
    """FLOPs per word of a sentence (or padded batch) of ``length`` words, by part and in ``total``."""
    d, f, t, a = shape.d_model, shape.d_ff, length, shape.predictor_width
    shared = shape.predictor_form is not None and shape.bias_all_layers and shape.predictor_layer >= 1
    dt, ft, lab, n_labels = shape.tower_d_model, shape.tower_d_ff, shape.label_dim, shape.n_labels
    p = dt if shape.tower_layers else d  # the width the scorers read
    tower = shape.tower_layers * (8.0 * dt * dt + 4.0 * dt * ft + 4.0 * t * dt)
    parts = {
        "dense": shape.layer_passes * (8.0 * d * d + 4.0 * d * f) - (6.0 * d * d if shared else 0.0),
        "attention": shape.layer_passes * 4.0 * t * d - (2.0 * t * d if shared else 0.0),
        "tower": tower if shape.tower_layers else 0.0,
        "predictor": {
            "heads": 4.0 * p * a + 2.0 * a * a + 2.0 * t * a + 4.0 * a,
            "probe": 2.0 * p * a + 2.0 * t * a,
            None: 0.0,
        }[shape.predictor_form],
        "labels": 4.0 * p * lab + 2.0 * n_labels * lab * lab + 2.0 * n_labels * lab + 4.0 * lab * n_labels
        if n_labels
        else 0.0,
        "task": 2.0 * d * shape.n_outputs / max(t, 1),
    }
    parts["total"] = sum(parts.values())
    return parts


def useful_flops(shape: ModelShape, lengths: Sequence[int]) -> float:
    """FLOPs of sentences of these lengths, each at its own length (no padding)."""
    return sum(n * flops_per_word(shape, n)["total"] for n in lengths if n > 0)


def executed_flops(shape: ModelShape, batches: Sequence[Sequence[int]]) -> float:
    """FLOPs the graph computes on these batches of sentence lengths: every row at its batch's padded length."""
    total = 0.0
    for lengths in batches:
        t = max(lengths, default=0)
        if t:
            total += len(lengths) * t * flops_per_word(shape, t)["total"]  # the task term is per sentence
    return total


def bundle_shape(folder: str | Path, graph: str = "task") -> ModelShape:
    """The ModelShape of one graph of a bundle (``graph``: "task", or "tree" for a parser-free bundle's tree
    graph), from its config.yaml and labels: the predictor counts when the bundle's model runs it (a
    parser-free bundle: its manifest names the predictor's form), the label scorer only in the graph that
    returns ``dep_labels`` (the tree graph; the task graph computes no labels)."""
    import json

    folder = Path(folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    config = yaml.safe_load((folder / manifest["config"]).read_text(encoding="utf-8"))
    labels = json.loads((folder / manifest["labels"]).read_text(encoding="utf-8"))
    runs_predictor = manifest.get("predictor_form") is not None
    predictor = PredictorConfig.from_dict(config["predictor"]) if runs_predictor else None
    n_outputs = 1 if labels["task"] == "regression" else max(2, len(labels["label_names"]))
    outputs = (manifest.get("tree_graph") or {}).get("outputs", []) if graph == "tree" else manifest["outputs"]
    labelled = any(o["name"] == "dep_labels" for o in outputs)
    n_labels = len(manifest.get("dependency_labels") or ()) if labelled else 0
    return ModelShape.of(EncoderConfig.from_dict(config["encoder"]), predictor, n_outputs, n_labels)
