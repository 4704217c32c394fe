"""The distance predictor, read top to bottom: states → arc scores → a forest → D̂ (and labels).

The parser-free stand-in for the parser's D. It reads h_k, the output of the encoder's unbiased layers
1..k, or — with a parser tower (``predictor.tower_layers``) — the embeddings through Transformer layers of
its own (``ParserTower``). Two forms (``PredictorConfig.form``):

- ``heads``: a biaffine ``ArcScorer`` → the argmax head of every word → cycles broken (``tree_ops``), so
  the heads always form a forest → D̂ = that forest's exact path lengths by pointer jumping, or, with
  ``distance_cap`` K (the export's task graph), min(d, K) by powers of the head adjacency: all a bias that
  saturates at K reads. With labelled training data a ``LabelScorer`` names each word's relation to its
  predicted head. The task loss reaches the scorer either through ``soft`` D̂ (the expected distance under
  the arc probabilities) or straight through (D̂ keeps the predicted tree's values, its gradient is the
  expected distance's at that tree), built only when a training step asks for a ``differentiable`` D̂.
- ``probe``: a ``StructuralProbe``, D̂_ij = |B(h_i − h_j)|².

Every step is a tensor op with a number of steps fixed by ``max_len``, so the predictor exports to ONNX
(opset 17) with dynamic batch and length. Its losses against the parser are in ``predictor/loss.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from ..encoder.config import BiasConfig, EncoderConfig
from ..encoder.conventions import NO_LABEL, PAD_DISTANCE
from ..encoder.model import Embedded, layer_stack, run_unbiased
from .config import PredictorConfig, TowerShape
from .loss import arc_loss, label_loss, probe_loss
from .tree_ops import (
    break_cycles,
    clamped_distances_from_heads,
    distances_from_heads,
    distances_from_parents,
    pair_mask,
    parents_from_heads,
    steps_for_length,
)

# --- a parser of its own: the tower -----------------------------------------------------------


class ParserTower(Embedded, nn.Module):
    """word_ids B×T, feature_ids B×T×F, mask B×T → its own embeddings → ``layers`` unbiased encoder layers →
    B×T×d_tower (the raw residual stream; the predictor normalises it). It shares nothing with the task
    layers but the vocabulary, so one pre-trained tower serves task encoders of any width and depth, and
    every encoder layer is biased by D̂ in a single pass."""

    def __init__(self, encoder: EncoderConfig, shape: TowerShape) -> None:
        super().__init__()
        self.init_embeddings_of(encoder, shape.d_model)
        self.layers = layer_stack(shape.layers, shape.d_model, shape.n_heads, shape.d_ff, encoder.dropout)

    def forward(self, word_ids: Tensor, feature_ids: Tensor, mask: Tensor) -> Tensor:
        """→ B×T×d_tower."""
        return run_unbiased(self.layers, self.embed(word_ids, feature_ids), mask)


# --- arc scores (Dozat & Manning's biaffine scorer) -------------------------------------------


class ArcScorer(nn.Module):
    """Biaffine arc scores with a clipped relative-position term and a separate root score:

        score_ij = dep_iᵀ W head_j + uᵀ head_j + rel[clip(j − i, −R, R)]       (j ≠ i)
        score_ii = rootᵀ dep_i + b                                              (i is a root)

    The diagonal is the root choice (a root points to itself). Pad columns get the dtype's most negative
    finite value, so a softmax over a row never picks them and never turns into NaN."""

    def __init__(self, d_model: int, arc_dim: int = 128, max_relative_position: int = 16) -> None:
        super().__init__()
        self.max_relative_position = max_relative_position
        self.dep = nn.Sequential(nn.Linear(d_model, arc_dim), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(d_model, arc_dim), nn.ReLU())
        # Zero-initialised bilinear terms: every candidate head starts equally likely.
        self.weight = nn.Parameter(torch.zeros(arc_dim, arc_dim))  # W
        self.head_bias = nn.Parameter(torch.zeros(arc_dim))  # u
        self.relative = nn.Embedding(2 * max_relative_position + 1, 1)  # rel, one scalar per clipped offset
        nn.init.zeros_(self.relative.weight)
        self.root = nn.Linear(arc_dim, 1)

    def forward(self, h: Tensor, mask: Tensor) -> Tensor:
        """h (B×T×d), mask (B×T bool, True = word) → arc scores (B×T×T), row i over candidate heads j."""
        dep = self.dep(h)  # B×T×a
        head = self.head(h)  # B×T×a
        scores = torch.matmul(torch.matmul(dep, self.weight), head.transpose(1, 2))  # B×T×T
        scores = scores + torch.matmul(head, self.head_bias).unsqueeze(1)  # + uᵀ head_j
        t = h.shape[1]
        idx = torch.arange(t, device=h.device)
        offset = idx.unsqueeze(0) - idx.unsqueeze(1)  # T×T, entry (i, j) = j − i
        r = self.max_relative_position
        scores = scores + self.relative(torch.clamp(offset, -r, r) + r).squeeze(-1)  # + rel[clip(j − i)]
        root = self.root(dep)  # B×T×1
        diagonal = offset == 0  # T×T
        scores = torch.where(diagonal, root, scores)  # score_ii = root score of i
        pad_column = ~mask.unsqueeze(1)  # B×1×T
        return scores.masked_fill(pad_column, torch.finfo(scores.dtype).min)


# --- dependency labels ------------------------------------------------------------------------


ROOT_LABELS = ("ROOT", "root")  # the root relation: spaCy's English models, Universal Dependencies


def label_inventory(label_lists: Iterable[Sequence[str] | None]) -> tuple[str, ...]:
    """The sorted set of labels of the given examples (None or empty labels skipped)."""
    return tuple(sorted({label for labels in label_lists if labels for label in labels if label}))


def label_ids(labels: Sequence[str] | None, inventory: Sequence[str], n: int) -> np.ndarray:
    """n label ids (int64) of one example's labels, NO_LABEL where a label is missing or unknown."""
    out = np.full(n, NO_LABEL, dtype=np.int64)
    if labels:
        index = {label: k for k, label in enumerate(inventory)}
        m = min(n, len(labels))
        out[:m] = [index.get(label, NO_LABEL) for label in labels[:m]]
    return out


def root_label(inventory: Sequence[str]) -> int | None:
    """Index of the root relation in an inventory (``ROOT_LABELS``), None when it holds none."""
    return next((k for k, label in enumerate(inventory) if label in ROOT_LABELS), None)


class LabelScorer(nn.Module):
    """Biaffine label scores of (dependent, head) pairs over ``n_labels`` labels: for word i with head j,

        score_l(i, j) = dep_iᵀ U_l head_j + V_l · [dep_i; head_j] + b_l

    trained at the gold head, read at the predicted one. With a root label in the inventory (spaCy's
    ``ROOT``, UD's ``root``) a word that is its own head gets it and no other word does."""

    not_root: Tensor  # L, a buffer (registered in __init__)

    def __init__(self, d_model: int, label_dim: int, n_labels: int, root: int | None = None) -> None:
        super().__init__()
        self.n_labels = n_labels
        self.root = root
        self.dep = nn.Sequential(nn.Linear(d_model, label_dim), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(d_model, label_dim), nn.ReLU())
        self.bilinear = nn.Parameter(torch.zeros(label_dim, n_labels * label_dim))  # U, as a×(L·a)
        self.linear = nn.Linear(2 * label_dim, n_labels)  # V and b
        not_root = torch.zeros(n_labels)
        if root is not None:
            not_root[root] = float("-inf")
        self.register_buffer("not_root", not_root, persistent=False)  # L: added to the scores of non-roots

    def features(self, h: Tensor) -> tuple[Tensor, Tensor]:
        """h (B×T×d) → (dependent view, head view), each B×T×a."""
        return self.dep(h), self.head(h)

    def scores(self, features: tuple[Tensor, Tensor], heads: Tensor) -> Tensor:
        """Label scores of every word at the given heads (B×T long; pad −1, read as 0) → B×T×L."""
        dep, head = features
        index = heads.clamp(min=0).unsqueeze(-1).expand_as(head)  # B×T×a
        head_of = torch.gather(head, 1, index)  # B×T×a, the head view of each word's head
        a = dep.shape[-1]
        bilinear = torch.matmul(dep, self.bilinear).unflatten(-1, (self.n_labels, a))  # B×T×L×a: dep_iᵀ U_l
        # dep_iᵀ U_l head_j as one batched product (B·T of L×a · a×1), not a broadcast multiply and a sum
        # over a: in the exported graph that was a B×T×L×a tensor and a ReduceSum (bench/README.md)
        scores = torch.matmul(bilinear, head_of.unsqueeze(-1)).squeeze(-1)  # B×T×L
        return scores + self.linear(torch.cat([dep, head_of], dim=-1))

    def labels(self, scores: Tensor, heads: Tensor, mask: Tensor) -> Tensor:
        """The best label of every word (B×T long, NO_LABEL on pad); with a root label in the inventory,
        roots (head = self) get it and other words never do."""
        if self.root is not None:
            is_root = heads == torch.arange(heads.shape[1], device=heads.device).unsqueeze(0)  # B×T
            best = torch.where(is_root, torch.full_like(heads, self.root), (scores + self.not_root).argmax(-1))
        else:
            best = scores.argmax(-1)
        return torch.where(mask, best, torch.full_like(best, NO_LABEL))


# --- the probe form ---------------------------------------------------------------------------


class StructuralProbe(nn.Module):
    """D̂_ij = |B(h_i − h_j)|² with B: d_model → rank (no bias), as ‖z_i‖² + ‖z_j‖² − 2 z_i·z_j with z = B h
    (one B×T×T product, never B×T×T×r), clamped at 0. Cross-tree pairs get whatever the probe says; the
    loss pushes them at least as far as the bias can tell (``loss.probe_loss``)."""

    def __init__(self, d_model: int, rank: int = 64) -> None:
        super().__init__()
        self.proj = nn.Linear(d_model, rank, bias=False)  # B

    def forward(self, h: Tensor, mask: Tensor) -> Tensor:
        """h (B×T×d), mask (B×T bool) → D̂ (B×T×T float, ≥ 0 on word pairs, PAD_DISTANCE on pad pairs)."""
        z = self.proj(h)  # B×T×r
        norms = (z * z).sum(dim=-1)  # B×T, ‖z_i‖²
        gram = torch.matmul(z, z.transpose(1, 2))  # B×T×T, z_i·z_j
        distances = torch.clamp(norms.unsqueeze(2) + norms.unsqueeze(1) - 2.0 * gram, min=0.0)
        return torch.where(pair_mask(mask), distances, torch.full_like(distances, PAD_DISTANCE))


# --- the predictor ----------------------------------------------------------------------------


@dataclass
class PredictorOutput:
    """What the predictor gives the biased layers and the losses.

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
