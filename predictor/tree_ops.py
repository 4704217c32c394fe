"""In-graph tree distances: head indices → all-pairs path lengths D̂ by pointer jumping; parent
probabilities → expected path lengths by path doubling.

The last step of the `heads` predictor (arc scores → heads → D̂). It runs inside the model, so it exports
to ONNX for any batch size and length: a fixed number of steps s = ⌈log2 max_len⌉, no loop that depends
on the data, no Python-side graph algorithm. It follows the project's distance conventions: heads are
0-based and a root points to itself, pairs in different trees of a forest get ``CROSS_TREE_DISTANCE``
and pairs that touch padding get ``PAD_DISTANCE``.

Heads (``distances_from_heads``, exact on a forest, O(B·T² log T)). Pointer jumping gives the 2^k-th
ancestor tables up_k = f^(2^k) (f = the head function, a root is a fixed point) and every word's depth,
by s gathers over B×T. Two B×T×T tables are then doubled by gathering whole rows:

- the ancestor-or-self sets A_m(i) = {f^0(i), …, f^(m−1)(i)} as a bool matrix,
  A_2m(i) = A_m(i) ∪ A_m(up(i));
- the depth of the deepest common ancestor, W_m(i, j) = max{depth(a) : a ∈ A_m(i), a ancestor-or-self
  of j} (−1 if none), W_2m(i, j) = max(W_m(i, j), W_m(up(i), j)).

After s steps W is the depth of the lowest common ancestor, so D̂_ij = depth_i + depth_j − 2·W_ij, and
W < 0 means different trees. Heads with a cycle are not a forest: D̂ stays finite (≤ 2^(s+1)) but means
nothing — the predictor breaks cycles first (cycle_breaking.py). ``on_cycle`` finds the words on one.

Parent probabilities (``distances_from_parents``, the `soft` variant and the straight-through gradient).
The ancestor-or-self matrix is the truncated path series S = I + Q + … + Q^(2^s − 1), Q the parent matrix
without root self-loops, built by S_2m = S_m + Q^m S_m clamped to [0, 1] (2s − 1 batched T×T products,
O(B·T³ log T)); then D̂_ij = Σ_k S_ik + Σ_k S_jk − 2 (S Sᵀ)_ij. For one-hot parents of a forest this is the
exact distance again; for probabilities Q^m_ik is the chance that the head walk from i stands on k after m
steps, so D̂ ≈ the expected path length (treating the two walks as independent; diagonal 0) and every
parent probability gets a gradient. A pair counts as cross-tree when its common-ancestor mass (S Sᵀ)_ij is
below 0.5; that decision passes no gradient.

A sentence longer than ``max_len`` is not fully covered; ``DistancePredictor`` rejects such inputs in
eager mode.
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


def positions_like(heads: Tensor) -> Tensor:
    """Word positions 0..T−1 (T long), built from an index range so that T stays dynamic in an exported graph."""
    return torch.arange(heads.shape[-1], device=heads.device)


def identity(t: int, device: torch.device) -> Tensor:
    """T×T bool identity, built from an index range so that T stays dynamic in an exported graph."""
    idx = torch.arange(t, device=device)
    return idx.unsqueeze(0) == idx.unsqueeze(1)


def parents_from_heads(heads: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """Head indices (B×T long, root = self; negative = pad) → parent one-hot (B×T×T, row i = head of i).

    Built by comparing with an index range (exports to ONNX with a dynamic T); pad rows are all zero.
    """
    return (heads.unsqueeze(-1) == positions_like(heads)).to(dtype)  # B×T×T


# --- head indices: pointer jumping ------------------------------------------------------------------
def jump(values: Tensor, index: Tensor) -> Tensor:
    """values (B×T) read at index (B×T long): out[b, i] = values[b, index[b, i]]."""
    return torch.gather(values, 1, index)


def gather_rows(matrix: Tensor, index: Tensor) -> Tensor:
    """Rows of matrix (B×T×T) picked by index (B×T long): out[b, i, :] = matrix[b, index[b, i], :].

    One row copy per word (a Gather on the flattened B·T rows), not one gather per element.
    """
    offsets = torch.arange(index.shape[0], device=index.device).unsqueeze(1) * index.shape[1]  # B×1
    return matrix.flatten(0, 1).index_select(0, (index + offsets).flatten()).view_as(matrix)


def with_pads_as_roots(heads: Tensor, mask: Tensor) -> Tensor:
    """Heads where every pad position (``mask`` False) is its own root, so that jumping never leaves 0..T−1."""
    return torch.where(mask, heads, positions_like(heads).unsqueeze(0))


def jump_tables(heads: Tensor, n_steps: int) -> tuple[list[Tensor], Tensor]:
    """([up_0, …, up_s], depth): up_k = the 2^k-th ancestor (B×T long, roots are fixed points) and the
    number of edges from each word to its root (B×T float; exact when it is below 2^s).

    ``heads`` must index 0..T−1 everywhere (see ``with_pads_as_roots``).
    """
    up = heads
    depth = (heads != positions_like(heads)).to(torch.float32)  # edges in the first 1 step
    ups = [up]
    for _ in range(n_steps):
        depth = depth + jump(depth, up)  # edges in the first 2^(k+1) steps
        up = jump(up, up)
        ups.append(up)
    return ups, depth


def ancestor_sets(heads: Tensor, ups: list[Tensor]) -> Tensor:
    """Ancestor-or-self matrix (B×T×T bool): entry (i, a) is True iff a lies on the path from i to its root,
    within 2^s steps (s = len(ups) − 1)."""
    positions = positions_like(heads)
    sets = (heads.unsqueeze(-1) == positions) | (positions.unsqueeze(-1) == positions)  # A_2: self and head
    for up in ups[1:-1]:  # up_k = f^(2^k): A_(2^(k+1)) = A_(2^k)(i) ∪ A_(2^k)(up_k(i))
        sets = sets | gather_rows(sets, up)
    return sets


def distances_from_heads(heads: Tensor, mask: Tensor, n_steps: int) -> Tensor:
    """Head indices (B×T long, root = self, pad −1) + mask (B×T bool) → D̂ (B×T×T float).

    Exact path lengths for a forest of up to 2^n_steps words per example; pairs in different trees →
    CROSS_TREE_DISTANCE, pairs touching padding → PAD_DISTANCE. O(B·T²·n_steps) work, gathers only.
    """
    heads = with_pads_as_roots(heads, mask)
    ups, depth = jump_tables(heads, n_steps)
    sets = ancestor_sets(heads, ups)  # (i, a): a ancestor-or-self of i
    # W_1(i, j) = depth(i) if i is an ancestor-or-self of j, else −1; then climb i's side by doubling
    below = sets.transpose(1, 2).contiguous()  # (i, j): i ancestor-or-self of j; row-major again for the row gathers
    deepest = below.to(depth.dtype) * (depth + 1.0).unsqueeze(2) - 1.0  # depth(i) where below, else −1
    for up in ups[:-1]:
        deepest = torch.maximum(deepest, gather_rows(deepest, up))
    distances = depth.unsqueeze(2) + depth.unsqueeze(1) - 2.0 * deepest
    distances = torch.where(deepest < 0, float(CROSS_TREE_DISTANCE), distances)  # scalars: no T×T fill tensors
    return torch.where(pair_mask(mask), distances, float(PAD_DISTANCE))


def on_cycle(heads: Tensor, mask: Tensor, n_steps: int) -> Tensor:
    """Words that lie on a cycle of the head function (B×T bool; a root's self-loop is not a cycle).

    After 2^s ≥ T steps every walk has entered the cycle it ends on (a root or a real cycle), so the cycle
    words are exactly the words some walk stands on then.
    """
    heads = with_pads_as_roots(heads, mask)
    ups, _ = jump_tables(heads, n_steps)
    walks_ending_here = torch.zeros_like(heads).scatter_add(1, ups[-1], torch.ones_like(heads))  # B×T, O(T)
    return (walks_ending_here > 0) & (heads != positions_like(heads)) & mask


# --- parent probabilities: path doubling ------------------------------------------------------------
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
    """Parents (B×T×T, one-hot or probabilities) + mask (B×T bool) → D̂ (B×T×T float), differentiable.

    D̂_ij = |anc(i)| + |anc(j)| − 2·|anc(i) ∩ anc(j)|; pairs without a common ancestor → CROSS_TREE_DISTANCE,
    pairs touching padding → PAD_DISTANCE. Equals ``distances_from_heads`` for one-hot forests.
    """
    ancestors = ancestor_matrix(parents, mask, n_steps)  # B×T×T
    depth = ancestors.sum(dim=-1)  # B×T, |anc(i)|
    common = torch.matmul(ancestors, ancestors.transpose(1, 2))  # B×T×T, |anc(i) ∩ anc(j)|
    distances = depth.unsqueeze(2) + depth.unsqueeze(1) - 2.0 * common
    distances = torch.where(identity(parents.shape[-1], parents.device), torch.zeros_like(distances), distances)
    distances = torch.where(common < 0.5, float(CROSS_TREE_DISTANCE), distances)
    return torch.where(pair_mask(mask), distances, float(PAD_DISTANCE))
