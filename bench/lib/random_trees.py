"""Random trees shaped like parses, for the timing scripts (bench.trees, bench.tree_ops)."""

from __future__ import annotations

import numpy as np


def random_tree(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random tree with the shape statistics of a parse: word i attaches to a nearby earlier word."""
    order = rng.permutation(n)
    heads = np.empty(n, dtype=np.int64)
    heads[order[0]] = order[0]
    for k in range(1, n):
        heads[order[k]] = order[rng.integers(max(0, k - 5), k)]
    return heads
