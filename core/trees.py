"""Tree distances: parser heads → all-pairs dependency path lengths.

This is the teacher signal of the data flow: the parser (or a CoNLL-U file) gives one head per word,
and this module turns those heads into the integer distance matrix D that the syntax bias looks up and
the distance predictor learns. The heads are checked here (numpy); the distances are the predictor's own
(``predictor.tree_ops.distances_from_heads``: pointer jumping, O(B·T² log T)) on the whole padded
batch at once, so parser and predicted trees get their distances from one implementation.

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

from ..encoder.conventions import CROSS_TREE_DISTANCE, PAD_DISTANCE
from ..encoder.errors import ParserfreeError

Heads = Sequence[int] | np.ndarray  # one example's heads: a list or an int array of n words


class TreeError(ParserfreeError, ValueError):
    """Heads that do not form a forest (out-of-range index or a cycle)."""


def heads_from_one_based(heads: Heads) -> np.ndarray:
    """CoNLL-U style heads (1-based, 0 = root) → project heads (0-based, root points to itself)."""
    h = np.asarray(heads, dtype=np.int64)
    if h.size and (h.min() < 0 or h.max() > h.size):
        raise TreeError(f"1-based head out of range 0..{h.size}: {h.tolist()}")
    out = h - 1
    roots = h == 0
    out[roots] = np.nonzero(roots)[0]
    return out


def heads_from_minus_one_root(heads: Heads) -> np.ndarray:
    """0-based heads whose root is marked −1 → project heads (root points to itself)."""
    h = np.asarray(heads, dtype=np.int64).copy()
    if h.size and (h.min() < -1 or h.max() >= h.size):
        raise TreeError(f"0-based head out of range -1..{h.size - 1}: {h.tolist()}")
    roots = h == -1
    h[roots] = np.nonzero(roots)[0]
    return h


def heads_to_one_based(heads: Heads) -> np.ndarray:
    """Project heads → CoNLL-U style heads (1-based, 0 = root)."""
    h = np.asarray(heads, dtype=np.int64)
    idx = np.arange(h.size)
    return np.where(h == idx, 0, h + 1)


def validate_heads(heads: Heads) -> np.ndarray:
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


def padded_distances(heads: np.ndarray) -> np.ndarray:
    """Padded forests (B×T int64, 0-based heads, root = self, −1 on pad) → distances (B×T×T int64):
    pairs in different trees → CROSS_TREE_DISTANCE, pairs touching padding → PAD_DISTANCE (a path of
    CROSS_TREE_DISTANCE edges or more, possible only past 1000 words, reads as CROSS_TREE_DISTANCE)."""
    import torch  # here, not above: serving reads heads (``validate_heads``) without PyTorch installed

    from ..predictor.tree_ops import distances_from_heads, steps_for_length

    batch, t = heads.shape
    if batch == 0 or t == 0:
        return np.full((batch, t, t), PAD_DISTANCE, dtype=np.int64)
    h = torch.from_numpy(heads)
    with torch.inference_mode():
        distances = distances_from_heads(h, h >= 0, steps_for_length(t))
    return distances.to(torch.int64).numpy()  # whole numbers, exact in float


def tree_distances(heads: Heads) -> np.ndarray:
    """All-pairs path lengths of one forest (n×n int64); pairs in different trees → CROSS_TREE_DISTANCE.

    Raises ``TreeError`` for heads that are not a forest (see ``validate_heads``).
    """
    h = validate_heads(heads)
    return padded_distances(h[None, :])[0]


def truncate_heads(heads: Heads, max_len: int) -> np.ndarray:
    """The tree of the first ``max_len`` words: words whose head was cut become roots (int64, a copy).

    The one truncation rule of the project: training, validation and the comparison's parser-fed
    pipeline all cut over-long inputs this way, so a model always meets the distances it was trained on."""
    h = np.array(heads, dtype=np.int64)[:max_len]
    idx = np.arange(h.size)
    return np.where(h >= h.size, idx, h)


def batch_tree_distances(batch_heads: Sequence[Heads], length: int | None = None) -> np.ndarray:
    """Padded batch of distance matrices (B×T×T int64); pairs touching padding are PAD_DISTANCE.

    ``length`` pads (or truncates, ``truncate_heads``) to T words.
    Raises ``TreeError`` for an example whose heads are not a forest.
    """
    lengths = [len(h) for h in batch_heads]
    t = max(lengths, default=0) if length is None else length
    heads = np.full((len(batch_heads), t), -1, dtype=np.int64)
    for b, example in enumerate(batch_heads):
        h = truncate_heads(example, t)
        heads[b, : h.size] = validate_heads(h)
    return padded_distances(heads)


def brute_force_distances(heads: Heads) -> np.ndarray:
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
