"""Eisner's decoder against brute force: on small sentences it finds the best projective one-root tree."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bench.lib.eisner import eisner_heads, is_projective, root_count


def _trees(n: int):
    """Every head assignment of n words that is a tree with one root (the root points to itself)."""
    for heads in itertools.product(range(n), repeat=n):
        roots = [i for i in range(n) if heads[i] == i]
        if len(roots) != 1:
            continue
        ok = True
        for i in range(n):  # every walk reaches the root within n steps
            j, steps = i, 0
            while heads[j] != j and steps <= n:
                j, steps = heads[j], steps + 1
            ok &= heads[j] == j
        if ok:
            yield np.array(heads)


def _score(scores: np.ndarray, heads: np.ndarray) -> float:
    return float(scores[np.arange(len(heads)), heads].sum())


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_eisner_finds_the_best_projective_tree_not_a_cycle_or_a_second_root(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        scores = rng.normal(size=(n, n)) * 3
        got = eisner_heads(scores)
        best = max((t for t in _trees(n) if is_projective(t)), key=lambda t: _score(scores, t))
        assert is_projective(got) and root_count(got) == 1
        assert _score(scores, got) == pytest.approx(_score(scores, best))


def test_a_crossing_arc_or_an_arc_over_the_root_is_not_projective():
    assert is_projective(np.array([1, 1, 1, 2]))
    assert not is_projective(np.array([2, 3, 2, 2]))  # 0→2 and 1→3 cross
    assert not is_projective(np.array([2, 1, 1]))  # 0→2 passes over the root, word 1
