"""Distance predictor head: encoder states → D̂, the parser-free stand-in for the parser's D, plus labels.

The model's student path: the biased layers are biased by D̂ from this head instead of the parser's D.
It reads h_k, the output of the shared encoder's unbiased layers 1..k, or — with a parser tower
(tower.py, ``predictor.tower_layers``) — the embeddings h_0 through Transformer layers of its own. One
interface, two forms chosen by ``PredictorConfig.form``:

- ``heads``: ArcScorer → argmax head per word → cycles broken (cycle_breaking.py), so the heads always
  form a forest → D̂ = the exact tree distances of that forest, by pointer jumping (tree_ops.py,
  O(B·T² log T)) — or, with ``distance_cap`` K set (the export's task graph may ask for it), min(d, K)
  from K − 2 products of the undirected head adjacency (``clamped_distances_from_heads``): all a bias
  that saturates at K reads. With labelled training data a LabelScorer (label_scorer.py) names the relation of
  every word to its predicted head (trained at the gold head). The task loss reaches the scorer in one
  of two ways:
  - ``soft``: D̂ is the expected distance under the arc probabilities (path doubling over the softmax
    rows, O(B·T³ log T)), in training and at inference;
  - otherwise, straight through: when the caller asks for a ``differentiable`` D̂ (the training step of
    a model whose task loss should reach the predictor), D̂ keeps the values of the predicted tree, and
    its gradient is that of the expected distance at the predicted tree, passed on to the arc
    probabilities. Without that request (inference, export) no gradient path is built.
- ``probe``: StructuralProbe, D̂_ij = |B(h_i − h_j)|².

The forward pass contains only tensor ops with a fixed number of steps (set by ``max_len``), so it
exports with the TorchScript ONNX exporter (opset 17) with dynamic batch and length. Wrap it to return
a tuple for export, e.g. ``(out.distances, out.heads, out.labels)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from parserfree.encoder.config import BiasConfig, EncoderConfig
from parserfree.encoder.conventions import PAD_DISTANCE
from parserfree.predictor.arc_scorer import ArcScorer
from parserfree.predictor.config import PredictorConfig
from parserfree.predictor.cycle_breaking import break_cycles
from parserfree.predictor.label_scorer import LabelScorer, root_label
from parserfree.predictor.loss import arc_loss, label_loss, probe_loss
from parserfree.predictor.probe import StructuralProbe
from parserfree.predictor.tower import ParserTower
from parserfree.predictor.tree_ops import (
    clamped_distances_from_heads,
    distances_from_heads,
    distances_from_parents,
    parents_from_heads,
    steps_for_length,
)


@dataclass
class PredictorOutput:
    """What the head gives the biased layers and the losses.

    distances: B×T×T float D̂ (pad pairs = −1; cross-tree pairs of the `heads` form = 1000).
    arc_scores: B×T×T, row i = scores of the candidate heads of word i (`heads` form), else None.
    heads: B×T long predicted heads after cycle breaking (a forest), root = self, −1 on pad (`heads`
        form), else None.
    argmax_heads: B×T long argmax heads before cycle breaking (may hold cycles; for the cycle-rate
        metric), −1 on pad (`heads` form), else None.
    labels: B×T long label ids at the predicted heads (−1 on pad), computed outside training, when the
        predictor has a label scorer; else None.
    label_features: the label scorer's (dependent, head) views, B×T×a each, from which the loss scores
        the gold heads; None without a label scorer.
    whole: the distances are the path lengths of the predicted tree and carry no gradient (the `heads`
        form outside a straight-through step), so the biased layers may read them as integers.
    """

    distances: Tensor
    arc_scores: Tensor | None = None
    heads: Tensor | None = None
    argmax_heads: Tensor | None = None
    labels: Tensor | None = None
    label_features: tuple[Tensor, Tensor] | None = None
    whole: bool = False


class DistancePredictor(nn.Module):
    """Predicts all-pairs tree distances D̂ (and, with labels, the relation of each arc) from encoder
    states; sentences may be up to ``max_len`` words.

    ``far_distance``: the max_distance of the syntax bias that reads D̂ (the probe loss pushes pairs in
    different sentences at least that far; see loss.py). ``dep_labels``: the label inventory of the
    training data (empty: no label scorer). ``encoder``: the encoder config, needed with a tower (its
    default sizes and dropout).
    """

    def __init__(
        self,
        d_model: int,
        config: PredictorConfig,
        max_len: int = 256,
        far_distance: int = BiasConfig.max_distance,
        *,
        dep_labels: Sequence[str] = (),
        encoder: EncoderConfig | None = None,
    ) -> None:
        super().__init__()
        self.config = config.validate()
        self.max_len = max_len
        self.far_distance = far_distance
        self.n_steps = steps_for_length(max_len)
        # None: D̂ = the predicted tree's exact path lengths (pointer jumping); an integer K: D̂ = min(d, K)
        # by powers of the head adjacency (`heads` form without ``soft``, outside a straight-through step).
        # Not a setting: the export sets it for the task graph, whose bias reads nothing beyond K.
        self.distance_cap: int | None = None
        self.tower: ParserTower | None = None
        if config.has_tower:
            if encoder is None:
                raise ValueError("a predictor with a tower needs the encoder config (its sizes and dropout)")
            shape = config.tower_shape(encoder)
            self.tower = ParserTower(encoder, shape)
            d_model = shape.d_model
        self.norm = nn.LayerNorm(d_model)  # h_k (or the tower's output) is a raw (pre-LN) residual stream
        self.arc_scorer: ArcScorer | None = None
        self.probe: StructuralProbe | None = None
        self.label_scorer: LabelScorer | None = None
        self.dep_labels = tuple(dep_labels) if config.labelled else ()
        if config.form == "heads":
            self.arc_scorer = ArcScorer(d_model, config.arc_dim, config.max_relative_position)
            if self.dep_labels:
                self.label_scorer = LabelScorer(
                    d_model, config.label_dim, len(self.dep_labels), root_label(self.dep_labels)
                )
        else:
            self.probe = StructuralProbe(d_model, config.rank)

    def forward(self, h: Tensor, mask: Tensor, differentiable: bool = False) -> PredictorOutput:
        """h (B×T×d: h_k, or the tower's output — ``SyntaxModel.predict`` runs the tower), mask (B×T bool,
        True = word) → PredictorOutput.

        ``differentiable``: build the straight-through gradient path from D̂ to the arc scores (`heads`
        form without ``soft``; the other variants are differentiable anyway). Costs O(B·T³ log T).
        """
        if not torch.jit.is_tracing() and h.shape[1] > self.max_len:
            raise ValueError(f"length {h.shape[1]} exceeds the predictor's max_len {self.max_len}")
        h = self.norm(h)
        if self.probe is not None:
            return PredictorOutput(distances=self.probe(h, mask))
        scores = self.arc_scorer(h, mask)  # B×T×T
        argmax_heads = torch.where(mask, scores.argmax(dim=-1), torch.full_like(mask, PAD_DISTANCE, dtype=torch.long))
        heads = break_cycles(scores, argmax_heads, mask, self.n_steps)
        if self.config.soft:
            distances = distances_from_parents(torch.softmax(scores, dim=-1), mask, self.n_steps)  # expected
        elif differentiable:
            probabilities = torch.softmax(scores, dim=-1)  # B×T×T, row i = P(head of i = j)
            # straight through: the values of the one-hot tree, the gradient of the probabilities
            parents = parents_from_heads(heads, dtype=scores.dtype) + (probabilities - probabilities.detach())
            distances = distances_from_parents(parents, mask, self.n_steps)
        elif self.distance_cap is not None:
            distances = clamped_distances_from_heads(heads, mask, self.distance_cap)
        else:
            distances = distances_from_heads(heads, mask, self.n_steps)
        whole = not self.config.soft and not differentiable
        features, labels = None, None
        if self.label_scorer is not None:
            features = self.label_scorer.features(h)
            if not self.training:  # the labels of the predicted tree (training scores the gold heads only)
                labels = self.label_scorer.labels(self.label_scorer.scores(features, heads), heads, mask)
        return PredictorOutput(
            distances=distances,
            arc_scores=scores,
            heads=heads,
            argmax_heads=argmax_heads,
            labels=labels,
            label_features=features,
            whole=whole,
        )

    def losses(
        self, out: PredictorOutput, heads: Tensor, distances: Tensor, dep_labels: Tensor | None = None
    ) -> dict[str, Tensor]:
        """The predictor's losses against the parser: ``arc`` cross-entropy (`heads`) or ``probe`` normalised
        L1, and ``label`` cross-entropy at the gold heads when the predictor has a label scorer and
        ``dep_labels`` are given.

        heads: B×T long (−1 on pad); distances: B×T×T long (−1 pad, 1000 cross-tree); dep_labels: B×T long
        label ids (−1 on pad and where a word has no known label: no loss there).
        """
        if out.arc_scores is None:
            return {"probe": probe_loss(out.distances, distances, self.far_distance)}
        parts = {"arc": arc_loss(out.arc_scores, heads)}
        if self.label_scorer is not None and out.label_features is not None and dep_labels is not None:
            parts["label"] = label_loss(self.label_scorer.scores(out.label_features, heads), dep_labels)
        return parts

    def loss(self, out: PredictorOutput, heads: Tensor, distances: Tensor, dep_labels: Tensor | None = None) -> Tensor:
        """The predictor loss: arc (or probe) loss + ``label_loss_weight`` · label loss (``losses``)."""
        parts = self.losses(out, heads, distances, dep_labels)
        total = parts.get("arc", parts.get("probe"))
        if "label" in parts:
            total = total + self.config.label_loss_weight * parts["label"]
        return total
