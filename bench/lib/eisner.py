"""Eisner's algorithm: the highest-scoring projective dependency tree of arc scores, with one root.

Written by hand for the decoding bench (``bench.decoding``): the first-order dynamic programme over spans
(Eisner 1996) in O(n³), with the inner maximum over split points vectorised by numpy. Scores follow the
predictor's convention: ``scores[i, j]`` is the score of word j as the head of word i, the diagonal the
score of i being the root; the tree maximises the sum of its arcs' scores (pass log-probabilities to
decode the most probable tree). Exactly one word is the root.
"""

from __future__ import annotations

import numpy as np

_LEFT, _RIGHT = 0, 1  # the span's head is its right end (arcs point left) / its left end


def _with_root_node(scores: np.ndarray) -> np.ndarray:
    """n×n predictor scores → (n+1)×(n+1) arc weights w[h, d] with node 0 the artificial root."""
    n = scores.shape[0]
    w = np.full((n + 1, n + 1), -np.inf)
    w[1:, 1:] = scores.T  # w[h + 1, d + 1] = scores[d, h]
    w[0, 1:] = np.diag(scores)
    np.fill_diagonal(w[1:, 1:], -np.inf)
    return w


def eisner_heads(scores: np.ndarray) -> np.ndarray:
    """The best projective tree with one root: heads (n, 0-based, the root points to itself)."""
    w = _with_root_node(np.asarray(scores, dtype=np.float64))
    size = w.shape[0]
    complete = np.full((size, size, 2), -np.inf)
    incomplete = np.full((size, size, 2), -np.inf)
    complete_split = np.zeros((size, size, 2), dtype=np.int64)
    incomplete_split = np.zeros((size, size, 2), dtype=np.int64)
    complete[np.arange(size), np.arange(size), :] = 0.0
    for width in range(1, size):
        for s in range(size - width):
            t = s + width
            joined = complete[s, s:t, _RIGHT] + complete[s + 1 : t + 1, t, _LEFT]
            # the artificial root takes one child: its arc spans everything left of that child at once
            r = 0 if s == 0 else int(np.argmax(joined))
            incomplete[s, t, _RIGHT] = joined[r] + w[s, t]
            incomplete_split[s, t, _RIGHT] = s + r
            if s > 0:  # the root is nobody's dependent
                incomplete[s, t, _LEFT] = joined[r] + w[t, s]
                incomplete_split[s, t, _LEFT] = s + r
            left = complete[s, s:t, _LEFT] + incomplete[s:t, t, _LEFT]
            r = int(np.argmax(left))
            complete[s, t, _LEFT], complete_split[s, t, _LEFT] = left[r], s + r
            right = incomplete[s, s + 1 : t + 1, _RIGHT] + complete[s + 1 : t + 1, t, _RIGHT]
            r = int(np.argmax(right))
            complete[s, t, _RIGHT], complete_split[s, t, _RIGHT] = right[r], s + 1 + r
    heads = np.zeros(size, dtype=np.int64)
    stack = [(0, size - 1, _RIGHT, True)]
    while stack:
        s, t, direction, whole = stack.pop()
        if s == t:
            continue
        if whole:
            r = complete_split[s, t, direction]
            if direction == _LEFT:
                stack += [(s, r, _LEFT, True), (r, t, _LEFT, False)]
            else:
                stack += [(s, r, _RIGHT, False), (r, t, _RIGHT, True)]
        else:
            r = incomplete_split[s, t, direction]
            if direction == _LEFT:
                heads[s] = t
            else:
                heads[t] = s
            stack += [(s, r, _RIGHT, True), (r + 1, t, _LEFT, True)]
    out = heads[1:] - 1
    return np.where(out < 0, np.arange(size - 1), out)


def root_count(heads: np.ndarray) -> int:
    """How many words of a tree (0-based heads) are their own head: its roots."""
    return int((np.asarray(heads) == np.arange(len(heads))).sum())


def is_projective(heads: np.ndarray) -> bool:
    """Whether a tree (0-based heads, the root pointing to itself) has no crossing arcs, the root's arc from
    an artificial node before the first word included (so no arc passes over the root)."""
    arcs = [(min(i, int(h)), max(i, int(h))) if i != h else (-1, i) for i, h in enumerate(heads)]
    return not any(a < c < b < d for a, b in arcs for c, d in arcs)
