"""Label scorer: encoder states and a head per word → scores over the dependency labels of each arc.

The labelled half of the `heads` predictor (the arc scorer picks each word's head, this scorer names the
relation). A biaffine classifier in the style of Dozat & Manning: two small projections give each word a
"dependent" and a "head" view, and for word i with head j

    score_l(i, j) = dep_iᵀ U_l head_j + V_l · [dep_i; head_j] + b_l          (l over the label inventory)

It is trained by cross-entropy on the gold label at the gold head (loss.py) and read at inference at the
predicted head. When the inventory holds a root label (spaCy's ``ROOT``, UD's ``root``), a word that is
its own head gets it and no other word does, so the labels always agree with the tree. The inventory is
built from the training data (``label_inventory``) and travels with the model (checkpoint and bundle);
``label_ids`` maps a word's labels to ids, −1 for a label outside the inventory or no label.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import torch
from torch import Tensor, nn

ROOT_LABELS = ("ROOT", "root")  # the root relation: spaCy's English models, Universal Dependencies
NO_LABEL = -1  # label id of padding, of a word without a label and of a label outside the inventory


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
    """Biaffine label scores of (dependent, head) pairs over ``n_labels`` labels."""

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
