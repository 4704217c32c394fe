"""Tree distances: parser heads → all-pairs dependency path lengths.

This is the teacher signal of the data flow: the parser (or a CoNLL-U file) gives one head per word,
and this module turns those heads into the integer distance matrix D that the syntax bias looks up and
the distance predictor learns. Everything is vectorised with numpy (ancestor matrix by repeated
squaring), so a batch of trees costs a handful of matrix products.

Conventions (the constants live in ``parserfree.encoder.conventions``, used by every layer):
- heads are 0-based indices into the example's words; a root points to itself;
- an example may hold several sentences (a forest): pairs in different trees have no path and get
  ``CROSS_TREE_DISTANCE``, a constant larger than any in-tree path of a ``max_len ≤ 1000`` example; the
  syntax bias clamps it to its last bucket, the probe loss pushes such pairs to at least the bias's
  max_distance, the L1 metric skips them, and the UUAS spanning tree treats them as far apart;
- in a padded batch (B×T×T) every pair that touches a pad position is ``PAD_DISTANCE`` (−1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from parserfree.encoder.conventions import CROSS_TREE_DISTANCE, PAD_DISTANCE


class TreeError(ValueError):
    """Heads that do not form a forest (out-of-range index or a cycle)."""


def heads_from_one_based(heads: Sequence[int]) -> np.ndarray:
    """CoNLL-U style heads (1-based, 0 = root) → project heads (0-based, root points to itself)."""
    h = np.asarray(heads, dtype=np.int64)
    if h.size and (h.min() < 0 or h.max() > h.size):
        raise TreeError(f"1-based head out of range 0..{h.size}: {h.tolist()}")
    out = h - 1
    roots = h == 0
    out[roots] = np.nonzero(roots)[0]
    return out


def heads_from_minus_one_root(heads: Sequence[int]) -> np.ndarray:
    """0-based heads whose root is marked −1 → project heads (root points to itself)."""
    h = np.asarray(heads, dtype=np.int64).copy()
    if h.size and (h.min() < -1 or h.max() >= h.size):
        raise TreeError(f"0-based head out of range -1..{h.size - 1}: {h.tolist()}")
    roots = h == -1
    h[roots] = np.nonzero(roots)[0]
    return h


def heads_to_one_based(heads: Sequence[int]) -> np.ndarray:
    """Project heads → CoNLL-U style heads (1-based, 0 = root)."""
    h = np.asarray(heads, dtype=np.int64)
    idx = np.arange(h.size)
    return np.where(h == idx, 0, h + 1)


def validate_heads(heads: Sequence[int]) -> np.ndarray:
    """Check that ``heads`` (0-based, root = self) form a forest; return them as an int64 array.

    Raises ``TreeError`` naming the first offending word for an out-of-range head or a cycle.
    """
    h = np.asarray(heads, dtype=np.int64)
    n = h.size
    if n and (h.min() < 0 or h.max() >= n):
        bad = int(np.nonzero((h < 0) | (h >= n))[0][0])
        raise TreeError(f"head of word {bad} is {int(h[bad])}, outside 0..{n - 1}")
    # Pointer doubling: after ⌈log2 n⌉+1 steps every word of a forest sits on its root (h[r] = r);
    # a word on or below a cycle sits on a cycle node instead.
    top = h.copy()
    for _ in range(n.bit_length() + 1):
        top = top[top]
    on_cycle = h[top] != top
    if on_cycle.any():
        bad = int(np.nonzero(on_cycle)[0][0])
        raise TreeError(f"heads contain a cycle (reached from word {bad})")
    return h


def ancestor_matrix(heads: np.ndarray) -> np.ndarray:
    """Ancestor-or-self matrix A (n×n bool): A[i, a] is True iff a lies on the path from i to its root.

    Computed by repeated squaring of (I + P), P the parent one-hot: ⌈log2 n⌉ boolean matrix products.
    """
    n = heads.size
    a = np.eye(n, dtype=np.float32)
    a[np.arange(n), heads] = 1.0
    reach = 1
    while reach < n:
        a = np.minimum(a @ a, 1.0)
        reach *= 2
    return a > 0


def tree_distances(heads: Sequence[int]) -> np.ndarray:
    """All-pairs path lengths of one forest (n×n int64); pairs in different trees → CROSS_TREE_DISTANCE.

    d(i, j) = |anc(i)| + |anc(j)| − 2·|anc(i) ∩ anc(j)|, anc = ancestors-or-self.
    """
    h = validate_heads(heads)
    n = h.size
    if n == 0:
        return np.zeros((0, 0), dtype=np.int64)
    a = ancestor_matrix(h).astype(np.float32)
    depth = a.sum(axis=1)
    common = a @ a.T
    d = depth[:, None] + depth[None, :] - 2.0 * common
    out = np.rint(d).astype(np.int64)
    out[common == 0] = CROSS_TREE_DISTANCE
    return out


def batch_tree_distances(batch_heads: Sequence[Sequence[int]], length: int | None = None) -> np.ndarray:
    """Padded batch of distance matrices (B×T×T int64); pairs touching padding are PAD_DISTANCE.

    ``length`` pads (or truncates, dropping heads that point past it — they become roots) to T words.
    """
    lengths = [len(h) for h in batch_heads]
    t = max(lengths, default=0) if length is None else length
    out = np.full((len(batch_heads), t, t), PAD_DISTANCE, dtype=np.int64)
    for b, heads in enumerate(batch_heads):
        h = np.asarray(heads, dtype=np.int64)[:t]
        n = h.size
        cut = h >= n
        h = np.where(cut, np.arange(n), h)
        out[b, :n, :n] = tree_distances(h)
    return out


def brute_force_distances(heads: Sequence[int]) -> np.ndarray:
    """Textbook reference: for every pair, walk both ancestor chains (O(n²·depth), pure Python)."""
    h = [int(x) for x in heads]
    n = len(h)

    def chain(i: int) -> list[int]:
        path = [i]
        while h[path[-1]] != path[-1]:
            path.append(h[path[-1]])
        return path

    out = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            ci, cj = chain(i), chain(j)
            pos = {node: k for k, node in enumerate(ci)}
            out[i][j] = CROSS_TREE_DISTANCE
            for k, node in enumerate(cj):
                if node in pos:
                    out[i][j] = pos[node] + k
                    break
    return np.asarray(out, dtype=np.int64)
