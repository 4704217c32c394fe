"""Tree decoding for evaluation: D̂ of one sentence → the undirected tree it implies (minimum spanning tree).

Used by the UUAS metric (metrics.py) on numpy copies of D̂, outside the model graph. scipy's
``minimum_spanning_tree`` treats zero entries as missing edges, so every off-diagonal weight is shifted
by a small epsilon (D̂ may be 0 between distinct words, e.g. a probe that has not separated them).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import minimum_spanning_tree

EPSILON = 1e-6


def mst_edges(pred: np.ndarray) -> set[frozenset[int]]:
    """Undirected minimum spanning tree of an n×n distance matrix → {frozenset({i, j}), …} (n − 1 edges).

    The matrix is symmetrised ((D̂ + D̂ᵀ)/2) and negative values are clamped to 0; n ≤ 1 gives no edges.
    """
    d = np.asarray(pred, dtype=np.float64)
    n = d.shape[0]
    if n <= 1:
        return set()
    weights = np.clip((d + d.T) / 2.0, 0.0, None) + EPSILON
    tree = minimum_spanning_tree(np.triu(weights, k=1)).tocoo()
    return {frozenset((int(i), int(j))) for i, j in zip(tree.row, tree.col)}
