"""In-graph tree distances: parent matrix → all-pairs path lengths D̂, with matrix products only.

This is the last step of the `heads` predictor (arc scores → parents → D̂) and runs inside the model,
so it exports to ONNX for any batch size and length: no loops that depend on data, no Python-side
graph algorithms. It follows the project's distance conventions: heads are 0-based and a root points to
itself (the diagonal of the parent matrix means "is a root"), pairs in different trees of a forest get
``CROSS_TREE_DISTANCE`` and pairs that touch padding get ``PAD_DISTANCE``.

The ancestor-or-self matrix S is the truncated path series S = I + Q + Q² + … + Q^(2^s − 1), where Q is
the parent matrix with its root self-loops removed. It is built by doubling,
S_{2m} = S_m + Q^m S_m, with every step clamped to [0, 1], so s = ⌈log2 max_len⌉ steps cover every path
of a sentence of up to ``max_len`` words (2s − 1 batched T×T products in all). Then, with
|anc(i)| = Σ_k S_ik and |anc(i) ∩ anc(j)| = (S Sᵀ)_ij,

    D̂_ij = |anc(i)| + |anc(j)| − 2 (S Sᵀ)_ij.

- One-hot parents (a forest): S is exactly the 0/1 ancestor-or-self matrix and D̂ the exact integer path
  lengths (as floats). Pairs with no common ancestor are in different trees → CROSS_TREE_DISTANCE.
- One-hot parents with a cycle (possible for argmax heads): S holds reachability, so all nodes of a
  cycle are ancestors of one another and of everything below them. D̂ stays finite and ≤ 2T: two words
  on the same cycle get D̂ = 0, a word hanging below a cycle gets its distance to the cycle.
- Probabilities (the `soft` variant): Q^m_ik is the probability that the head walk from i stands on k
  after m steps, so S_ik ≈ P(k is an ancestor-or-self of i) and D̂ ≈ the expected path length (treating
  the two walks as independent; the diagonal is set to 0). The clamp only bites on cycles, so gradients
  flow from D̂ to every parent probability. A pair counts as cross-tree when its common-ancestor mass
  (S Sᵀ)_ij is below 0.5 (for one-hot parents: exactly when it is 0); that decision passes no gradient.

A sentence longer than ``max_len`` is not fully covered (ancestors beyond 2^s − 1 steps are missed);
``DistancePredictor`` rejects such inputs in eager mode.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from parserfree.encoder.conventions import CROSS_TREE_DISTANCE, PAD_DISTANCE


def steps_for_length(max_len: int) -> int:
    """Doubling steps s = ⌈log2 max_len⌉ (at least 1) so paths of up to ``max_len`` − 1 edges are covered."""
    if max_len < 1:
        raise ValueError(f"max_len: expected an integer ≥ 1, got {max_len!r}")
    return max(1, math.ceil(math.log2(max_len)))


def pair_mask(mask: Tensor) -> Tensor:
    """Word mask (B×T bool) → pair mask (B×T×T bool): True where both ends of the pair are words."""
    return mask.unsqueeze(2) & mask.unsqueeze(1)


def identity(t: int, device: torch.device) -> Tensor:
    """T×T bool identity, built from an index range so that T stays dynamic in an exported graph."""
    idx = torch.arange(t, device=device)
    return idx.unsqueeze(0) == idx.unsqueeze(1)


def parents_from_heads(heads: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """Head indices (B×T long, root = self; negative = pad) → parent one-hot (B×T×T, row i = head of i).

    Built by comparing with an index range (exports to ONNX with a dynamic T); pad rows are all zero.
    """
    candidates = torch.arange(heads.shape[-1], device=heads.device)
    return (heads.unsqueeze(-1) == candidates).to(dtype)  # B×T×T


def ancestor_matrix(parents: Tensor, mask: Tensor, n_steps: int) -> Tensor:
    """Ancestor-or-self matrix S (B×T×T, values in [0, 1]) from parents (B×T×T) by path doubling.

    Row i of ``parents`` is a one-hot or a probability vector over the heads of word i (diagonal = root).
    Rows and columns of pad positions (``mask`` False) are ignored; a pad position is its own ancestor.
    """
    eye = identity(parents.shape[-1], parents.device).to(parents.dtype)  # T×T
    pair_words = pair_mask(mask).to(parents.dtype)  # B×T×T
    step = parents * (1.0 - eye) * pair_words  # Q: strict parent, B×T×T
    ancestors = torch.clamp(eye + step, 0.0, 1.0)  # S_2 = I + Q: paths of < 2 edges
    for _ in range(n_steps - 1):  # ancestors = S_m, paths of < m edges
        step = torch.matmul(step, step)  # Q^m
        ancestors = torch.clamp(ancestors + torch.matmul(step, ancestors), 0.0, 1.0)  # S_2m = S_m + Q^m S_m
    return ancestors


def distances_from_parents(parents: Tensor, mask: Tensor, n_steps: int) -> Tensor:
    """Parents (B×T×T, one-hot or probabilities) + mask (B×T bool) → D̂ (B×T×T float).

    D̂_ij = |anc(i)| + |anc(j)| − 2·|anc(i) ∩ anc(j)|; pairs without a common ancestor → CROSS_TREE_DISTANCE,
    pairs touching padding → PAD_DISTANCE. Exact for one-hot forests when ``n_steps`` ≥ ⌈log2 T⌉.
    """
    ancestors = ancestor_matrix(parents, mask, n_steps)  # B×T×T
    depth = ancestors.sum(dim=-1)  # B×T, |anc(i)|
    common = torch.matmul(ancestors, ancestors.transpose(1, 2))  # B×T×T, |anc(i) ∩ anc(j)|
    distances = depth.unsqueeze(2) + depth.unsqueeze(1) - 2.0 * common
    distances = torch.where(identity(parents.shape[-1], parents.device), torch.zeros_like(distances), distances)
    distances = torch.where(common < 0.5, torch.full_like(distances, CROSS_TREE_DISTANCE), distances)
    return torch.where(pair_mask(mask), distances, torch.full_like(distances, PAD_DISTANCE))


def distances_from_heads(heads: Tensor, mask: Tensor, n_steps: int) -> Tensor:
    """Head indices (B×T long, root = self, pad −1) → exact D̂ (B×T×T float) via the parent one-hot."""
    return distances_from_parents(parents_from_heads(heads), mask, n_steps)
