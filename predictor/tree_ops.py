"""In-graph tree distances: head indices → all-pairs path lengths D̂ by pointer jumping; parent
probabilities → expected path lengths by path doubling.

The last step of the `heads` predictor (arc scores → heads → D̂). It runs inside the model, so it exports
to ONNX for any batch size and length: a fixed number of steps s = ⌈log2 max_len⌉, no loop that depends
on the data, no Python-side graph algorithm. It follows the project's distance conventions: heads are
0-based and a root points to itself, pairs in different trees of a forest get ``CROSS_TREE_DISTANCE``
and pairs that touch padding get ``PAD_DISTANCE``.

Heads (``distances_from_heads``, exact on a forest, O(B·T² log T)). Pointer jumping gives the 2^k-th
ancestor tables up_k = f^(2^k) (f = the head function, a root is a fixed point), and sums along the head
walks by the same jumps give every word's depth, its subtree size and its depth-first pre-order position
(with one sort of the words by parent for the sibling order): s steps each, over B×T. A subtree is then
a range of pre-order positions, so "i is an ancestor-or-self of j" costs two comparisons, and one B×T×T
table is doubled by gathering whole rows: W_1(i, j) = depth(i) if i is an ancestor-or-self of j (else
none), W_2m(i, j) = max(W_m(i, j), W_m(up_m(i), j)). After s steps W is the depth of the lowest common
ancestor, so D̂_ij = depth_i + depth_j − 2·W_ij, and no W means different trees. The B×T×T work is s row
gathers and a few elementwise steps on whole numbers in float32 (float64 past 2^11 words), updated in
place. Heads with a cycle are not a forest: D̂ stays within [PAD_DISTANCE, CROSS_TREE_DISTANCE] but means
nothing — the predictor breaks cycles first (``break_cycles``, below). ``on_cycle`` finds the words on one.

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

from ..encoder.conventions import CROSS_TREE_DISTANCE, PAD_DISTANCE


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
_FLOAT32_STEPS = 11  # the all-pairs step's integers stay below 2^24 (exact in float32) up to 2^11 words


def jump(values: Tensor, index: Tensor) -> Tensor:
    """values (B×T) read at index (B×T long): out[b, i] = values[b, index[b, i]]."""
    return torch.gather(values, 1, index)


def row_offsets(index: Tensor) -> Tensor:
    """B×1 offsets that turn an index into 0..T−1 (B×T) into rows of a B×T×T tensor flattened to (B·T)×T,
    so that gathering rows is one Gather of whole rows, not one gather per element."""
    return torch.arange(index.shape[0], device=index.device).unsqueeze(1) * index.shape[1]


def with_pads_as_roots(heads: Tensor, mask: Tensor) -> Tensor:
    """Heads where every pad position (``mask`` False) is its own root, so that jumping never leaves 0..T−1."""
    return torch.where(mask, heads, positions_like(heads).unsqueeze(0))


def ancestor_tables(heads: Tensor, n_steps: int) -> list[Tensor]:
    """[up_0, …, up_s]: up_k = the 2^k-th ancestor (B×T long, roots are fixed points), by s pointer jumps.

    ``heads`` must index 0..T−1 everywhere (see ``with_pads_as_roots``).
    """
    ups = [heads]
    for _ in range(n_steps):
        ups.append(jump(ups[-1], ups[-1]))
    return ups


def chain_sums(values: Tensor, ups: list[Tensor]) -> Tensor:
    """Per word, the sum of ``values`` (B×T) over the first 2^s words of its head walk, itself included."""
    for up in ups[:-1]:  # sums over the first 2^k words → over the first 2^(k+1)
        values = values + jump(values, up)
    return values


def jump_tables(heads: Tensor, n_steps: int) -> tuple[list[Tensor], Tensor]:
    """([up_0, …, up_s], depth): ``ancestor_tables`` and the number of edges from each word to its root
    (B×T float; exact when it is below 2^s). ``heads`` must index 0..T−1 everywhere."""
    ups = ancestor_tables(heads, n_steps)
    return ups, chain_sums((heads != positions_like(heads)).to(torch.float32), ups)


def cycle_words(heads: Tensor, ups: list[Tensor], mask: Tensor) -> Tensor:
    """``on_cycle`` from jump tables already built for ``heads`` (pads as roots)."""
    walks_ending_here = torch.zeros_like(heads).scatter_add(1, ups[-1], torch.ones_like(heads))  # B×T, O(T)
    return (walks_ending_here > 0) & (heads != positions_like(heads)) & mask


def on_cycle(heads: Tensor, mask: Tensor, n_steps: int) -> Tensor:
    """Words that lie on a cycle of the head function (B×T bool; a root's self-loop is not a cycle).

    After 2^s ≥ T steps every walk has entered the cycle it ends on (a root or a real cycle), so the cycle
    words are exactly the words some walk stands on then.
    """
    heads = with_pads_as_roots(heads, mask)
    return cycle_words(heads, ancestor_tables(heads, n_steps), mask)


def subtree_sizes(heads: Tensor, ups: list[Tensor]) -> Tensor:
    """Words in each word's subtree, itself included (B×T long), from the jump tables of a forest.

    Every word i contributes 1 to each word its walk stands on within 2^s steps. Counted top down: a
    walk segment of 2^(k+1) steps from w is one of 2^k steps from w and one from up_k(w), so the counts
    of all segments of one length are pushed down the levels by one scatter-add each (s scatter-adds over
    B×T). A root's own count repeats for every step its words wait there; its tree size is the number of
    walks that end on it.
    """
    sizes = torch.ones_like(heads)
    for up in reversed(ups[:-1]):
        sizes = sizes.scatter_add(1, up, sizes)
    tree_sizes = torch.zeros_like(heads).scatter_add(1, ups[-1], torch.ones_like(heads))
    return torch.where(heads == positions_like(heads), tree_sizes, sizes)


def preorder(heads: Tensor, ups: list[Tensor], sizes: Tensor) -> Tensor:
    """Depth-first pre-order position of every word of a forest (B×T long): trees in the order of their
    roots, children in word order, so every subtree holds the positions pre(i) … pre(i) + size(i) − 1.

    A word's position is its parent's + 1 + the sizes of its earlier siblings (one sort by parent and a
    cumulative sum give those), summed down from the root by pointer jumping; a root's is the size of the
    trees before it.
    """
    positions = positions_like(heads)
    t = heads.shape[1]
    is_root = heads == positions
    parent = torch.where(is_root, t, heads)  # roots are the children of one virtual word T
    order = torch.argsort(parent * t + positions, dim=1)  # sibling groups by parent, each in word order
    ordered_sizes = jump(sizes, order)
    before = torch.zeros_like(heads).scatter(1, order, ordered_sizes.cumsum(1) - ordered_sizes)  # earlier groups' sizes
    children_so_far = (sizes - 1).cumsum(1)  # sizes of the subtrees of the children of words 0..g
    root_offset = before - children_so_far[:, -1:]  # a root: the sizes of the trees before it
    below_parent = 1 + before - jump(children_so_far - sizes + 1, heads)  # a child: 1 + its earlier siblings' sizes
    return chain_sums(torch.where(is_root, 0, below_parent), ups) + jump(root_offset, ups[-1])  # roots add 0


def distances_from_heads(heads: Tensor, mask: Tensor, n_steps: int) -> Tensor:
    """Head indices (B×T long, root = self, pad −1) + mask (B×T bool) → D̂ (B×T×T float).

    Exact path lengths for a forest of up to 2^n_steps words per example; pairs in different trees →
    CROSS_TREE_DISTANCE, pairs touching padding → PAD_DISTANCE (so a path as long as CROSS_TREE_DISTANCE,
    possible only beyond 1000 words, reads as one). O(B·T²·n_steps) work: B×T pointer jumps, then n_steps
    row gathers and elementwise minima over B×T×T.
    """
    heads = with_pads_as_roots(heads, mask)
    ups, depth = jump_tables(heads, n_steps)
    dtype = torch.float32 if n_steps <= _FLOAT32_STEPS else torch.float64  # exact integer arithmetic
    depth = depth.to(dtype)
    sizes = subtree_sizes(heads, ups)
    first = preorder(heads, ups, sizes).to(dtype)  # B×T: i's subtree holds first(i) … last(i)
    last = first + sizes.to(dtype) - 1.0
    # value(i, j) = −2·depth(i) if i is an ancestor-or-self of j, else CROSS_TREE_DISTANCE: with positions
    # scaled by far (> T + CROSS_TREE_DISTANCE), x = |far·(2·first(j) − first(i) − last(i))| −
    # far·(last(i) − first(i)) is ≤ 0 inside i's subtree and ≥ 2·far outside it, so value = max(x, 0) −
    # 2·depth(i) capped at CROSS_TREE_DISTANCE. The minimum over i's first 2^s ancestors is then
    # −2·depth(LCA(i, j)), or CROSS_TREE_DISTANCE in different trees. In place: a megabyte tensor fresh
    # from the allocator costs page faults in eager mode, more than its arithmetic.
    far = float(2**n_steps + CROSS_TREE_DISTANCE + 1)
    half = far * (last - first) + 2.0 * depth  # B×T
    value = ((2.0 * far) * first).unsqueeze(1) - (far * (first + last)).unsqueeze(2)
    value = value.abs_().clamp_(min=(half - 2.0 * depth).unsqueeze(2)).sub_(half.unsqueeze(2))
    value = value.clamp_(max=float(CROSS_TREE_DISTANCE))
    rows, offsets = value.flatten(0, 1), row_offsets(heads)  # rows (B·T)×T, a view of value
    for up in ups[:-1]:
        rows = rows.clamp_(max=rows.index_select(0, (up + offsets).flatten()))
    # d = depth(i) + depth(j) − 2·depth(LCA); a pad's depth is far below zero, so its pairs clamp to PAD_DISTANCE
    depth = depth - far * (~mask).to(dtype)
    value = rows.view_as(value).add_(depth.unsqueeze(2)).add_(depth.unsqueeze(1))
    return value.clamp_(min=float(PAD_DISTANCE), max=float(CROSS_TREE_DISTANCE)).to(torch.float32)


# --- head indices: powers of the adjacency, clamped -------------------------------------------------
def clamped_distances_from_heads(heads: Tensor, mask: Tensor, cap: int) -> Tensor:
    """Head indices (B×T long, root = self, pad −1) + mask (B×T bool) → min(d, ``cap``) (B×T×T float).

    What a syntax bias that saturates at ``cap`` reads (``SyntaxBias.saturation``: every distance from
    ``cap`` on, and every pair in different trees, gets the same bias), in fewer nodes than
    ``distances_from_heads``: no pointer jumping, no depths, sizes or sort. With A = I + P + Pᵀ (P the
    strict parent one-hot, the undirected head adjacency with self-loops), the pairs within k edges are
    R_k = [A^k > 0], built as R_k = min(R_(k−1)·A, 1), so min(d, cap) = Σ_(k<cap) [not R_k] = cap − Σ_(k<cap) R_k:
    cap − 2 batched T×T products of 0/1 floats (exact), O(B·T³·cap), three nodes each. Pairs in different
    trees and pairs beyond ``cap`` edges → ``cap``, pairs touching padding → PAD_DISTANCE. For a forest it
    equals ``distances_from_heads`` clamped at ``cap`` (tests/predictor/test_adjacency_powers.py).
    """
    if cap < 1:
        raise ValueError(f"cap: expected an integer ≥ 1, got {cap!r}")
    eye = identity(heads.shape[-1], heads.device)  # T×T
    # B×T×T strict parent one-hot: no root self-loop, pad rows all 0 (a pad's head −1 is no position)
    parent = (heads.unsqueeze(-1) == positions_like(heads)) & ~eye
    step = (parent | parent.transpose(1, 2) | eye).to(torch.float32)  # A = R_1
    within = eye.to(torch.float32) + step if cap >= 2 else eye.to(torch.float32).expand_as(step)  # Σ R_k so far
    reach = step
    for _ in range(2, cap):
        reach = torch.matmul(reach, step).clamp_(max=1.0)  # R_k = [A^k > 0]
        within = within + reach
    distances = float(cap) - within
    return torch.where(pair_mask(mask), distances, float(PAD_DISTANCE))


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


# --- cycle breaking ------------------------------------------------------------------------------
# Cycle breaking: argmax heads → a well-formed forest, inside the graph.
#
# The step between the arc scorer and the tree distances of the `heads` predictor. Each word's argmax head
# may form cycles (0 → 1 → 0), which are no tree: words on a cycle have no root and every path through
# the cycle is wrong. This step repairs the heads in a fixed number of tensor steps (s = ⌈log2 max_len⌉
# pointer jumps over B×T, and a row maximum over the scores of the words on cycles, usually few), so it
# exports to ONNX like the rest of the predictor:
#
# 1. An example without any root (every word chose a head) gets one: the word whose root score is closest
#    to the score of its chosen head.
# 2. Pointer jumping finds, for every word, the cycle or root its head walk ends on. Words whose walk
#    ends on a root are in a tree and stay as they are.
# 3. On every cycle exactly one word is re-attached: over the cycle's words v and the tree words u, the
#    pair with the largest score[v, u] − score[v, head(v)] (the cheapest change of one head; ties go to the
#    lowest index). Each cycle word's best u is a maximum over its score row; the best word of each
#    cycle is found by jumping along the cycle (a window of 2^s ≥ T steps from a cycle word covers
#    exactly its cycle). All cycles are re-attached at once, and only to words that were already in a
#    tree, so no new cycle can form: the result is a forest after one pass.
#
# The roots are the scorer's own root choices (an example of several sentences keeps one per sentence it
# found), plus one when there was none. Pad positions keep head −1.


def _masked(values: Tensor, keep: Tensor) -> Tensor:
    """``values`` where ``keep``, −inf elsewhere (``keep`` broadcasts; added, so no broadcasting select)."""
    return values + torch.where(keep, 0.0, float("-inf"))


def _best_along_walks(values: Tensor, ups: list[Tensor]) -> Tensor:
    """Per word, the index of the largest value among the first 2^s words of its head walk (ties: the
    lowest index), by pointer jumping: B×T long. The largest value first, then the lowest index holding it."""
    best_value = values
    for up in ups[:-1]:
        best_value = torch.maximum(best_value, jump(best_value, up))
    positions = positions_like(values)
    best = torch.where(values == best_value, positions, values.shape[-1])  # B×T
    for up in ups[:-1]:
        best = torch.minimum(best, jump(best, up))
    return best


def _best_reattachment(scores: Tensor, chosen: Tensor, in_tree: Tensor, cycle: Tensor) -> tuple[Tensor, Tensor]:
    """For every word on a cycle, the tree word it would best attach to and what that costs (its score
    there minus the score of its head; ≤ 0): B×T long heads and B×T float gains (−inf off cycles).

    Only the score rows of cycle words are read (usually few of the B·T), so the row maxima cost O(K·T)
    for K cycle words instead of a pass over all of B×T×T.
    """
    t = scores.shape[-1]
    rows = cycle.flatten().nonzero().squeeze(1)  # K, the cycle words as rows of the flattened B·T
    examples = torch.div(rows, t, rounding_mode="floor")  # K, the example of each
    row_scores = _masked(scores.flatten(0, 1).index_select(0, rows), in_tree.index_select(0, examples))  # K×T
    best_score, best_head = row_scores.max(dim=1)  # K each
    gain = best_score - chosen.flatten().index_select(0, rows)  # K
    gains = torch.full_like(chosen, float("-inf")).flatten().scatter(0, rows, gain)
    heads = torch.zeros_like(cycle, dtype=torch.long).flatten().scatter(0, rows, best_head)
    return heads.view_as(cycle), gains.view_as(chosen)


def break_cycles(scores: Tensor, heads: Tensor, mask: Tensor, n_steps: int) -> Tensor:
    """Arc scores (B×T×T, row i over heads j, diagonal = root) + heads (B×T long, e.g. the argmax; −1 on
    pad) + mask (B×T bool) → heads of a forest (B×T long, root = self, −1 on pad)."""
    positions = positions_like(heads)
    heads = with_pads_as_roots(heads, mask)
    chosen = torch.gather(scores, 2, heads.unsqueeze(-1)).squeeze(-1)  # B×T, score of each word's head
    root_score = torch.gather(scores, 2, positions.expand_as(heads).unsqueeze(-1)).squeeze(-1)  # B×T, the diagonal

    # 1. at least one root per example
    roots = (heads == positions) & mask
    new_root = (positions == _masked(root_score - chosen, mask).argmax(dim=1, keepdim=True)) & ~roots.any(
        dim=1, keepdim=True
    )
    heads = torch.where(new_root, positions, heads)
    chosen = torch.where(new_root, root_score, chosen)

    # 2. which words are in a tree (their walk ends on a root) and which lie on a cycle
    ups = ancestor_tables(heads, n_steps)
    in_tree = (jump(heads, ups[-1]) == ups[-1]) & mask
    cycle = cycle_words(heads, ups, mask)

    # 3. per word, the best tree word to attach to; per cycle, the word where that costs least
    best_head, gains = _best_reattachment(scores, chosen, in_tree, cycle)
    reattach = cycle & (_best_along_walks(gains, ups) == positions)
    heads = torch.where(reattach, best_head, heads)
    return torch.where(mask, heads, torch.full_like(heads, -1))
