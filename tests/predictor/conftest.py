"""Tiny tree fixtures for the predictor tests (random forests in the project's head convention)."""

from __future__ import annotations

import numpy as np
import pytest


def random_forest(rng: np.random.Generator, n: int, n_roots: int = 1) -> np.ndarray:
    """Random forest on n words, 0-based heads, roots point to themselves."""
    order = rng.permutation(n)
    heads = np.empty(n, dtype=np.int64)
    for k, word in enumerate(order):
        heads[word] = word if k < n_roots else order[rng.integers(0, k)]
    return heads


def chain(n: int) -> np.ndarray:
    """The deepest tree: word i's head is i + 1, the last word is the root (n − 1 edges deep)."""
    return np.minimum(np.arange(n) + 1, n - 1)


@pytest.fixture
def make_forest():
    return random_forest


@pytest.fixture
def make_chain():
    return chain


@pytest.fixture(autouse=True)
def _one_thread():
    """Tensors here are tiny: one intra-op thread avoids contention on a shared 2-core machine."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
