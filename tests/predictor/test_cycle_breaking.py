"""In-graph cycle breaking (break_cycles in predictor/tree_ops.py): argmax heads always become a forest, by the
cheapest single re-attachment per cycle, the same as a plain-Python walk of the rule."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from parserfree.core.trees import validate_heads
from parserfree.predictor.tree_ops import break_cycles, steps_for_length


def _reference(scores: np.ndarray, heads: list[int]) -> list[int]:
    """The rule of the module docstring for one example, with walks instead of pointer jumping."""
    n = len(heads)
    heads = list(heads)
    chosen = [scores[v, heads[v]] for v in range(n)]
    if all(heads[v] != v for v in range(n)):
        r = max(range(n), key=lambda v: (scores[v, v] - chosen[v], -v))
        heads[r] = r

    def walk(v: int) -> list[int]:
        seen = [v]
        while heads[seen[-1]] not in seen:
            seen.append(heads[seen[-1]])
        return seen

    in_tree = [heads[walk(v)[-1]] == walk(v)[-1] for v in range(n)]
    cycles = {}
    for v in range(n):
        path = walk(v)
        end = heads[path[-1]]
        if not in_tree[v]:
            cycle = path[path.index(end) :]
            cycles[min(cycle)] = sorted(cycle)
    out = list(heads)
    for cycle in cycles.values():
        options = [(scores[v, u] - scores[v, heads[v]], -v, -u) for v in cycle for u in range(n) if in_tree[u]]
        _, v, u = max(options)
        out[-v] = -u
    return out


def _as_batch(cases: list[tuple[np.ndarray, list[int]]], t: int):
    scores = torch.full((len(cases), t, t), torch.finfo(torch.float32).min)
    heads = torch.full((len(cases), t), -1, dtype=torch.long)
    for b, (s, h) in enumerate(cases):
        n = len(h)
        scores[b, :n, :n] = torch.from_numpy(s)
        heads[b, :n] = torch.tensor(h)
    return scores, heads, heads >= 0


@st.composite
def scored_examples(draw) -> tuple[np.ndarray, list[int]]:
    """Random arc scores of n ≤ 25 words and their argmax heads (cycles are common)."""
    n = draw(st.integers(1, 25))
    seed = draw(st.integers(0, 2**31 - 1))
    scores = np.random.default_rng(seed).normal(size=(n, n)).astype(np.float32)
    if draw(st.booleans()):
        np.fill_diagonal(scores, -5.0)  # no word wants to be a root: the "no root" repair
    return scores, scores.argmax(axis=1).tolist()


@settings(max_examples=80, deadline=None)
@given(st.lists(scored_examples(), min_size=1, max_size=4), st.integers(0, 3))
def test_argmax_heads_become_a_forest_by_the_cheapest_reattachment_per_cycle(cases, extra_pad):
    t = max(len(h) for _, h in cases) + extra_pad
    scores, heads, mask = _as_batch(cases, t)
    got = break_cycles(scores, heads, mask, steps_for_length(t))
    for b, (s, h) in enumerate(cases):
        n = len(h)
        fixed = got[b, :n].tolist()
        validate_heads(fixed)  # a forest: raises on a cycle
        assert any(fixed[v] == v for v in range(n))
        assert fixed == _reference(s, h)
        assert (got[b, n:] == -1).all()


def test_the_issue_example_gets_its_cycle_broken_where_it_costs_least():
    # heads [1, 0, 1, 2, 3]: 0 ↔ 1 is a cycle and nothing is a root; word 4's root score is the best
    # margin, so 4 becomes the root, then the cycle attaches where the score drops least (1 → 4 here).
    s = np.full((5, 5), -3.0, dtype=np.float32)
    for v, h in enumerate([1, 0, 1, 2, 3]):
        s[v, h] = 2.0
    s[4, 4] = 1.9
    s[1, 4] = 1.0
    s[0, 4] = 0.5
    scores, heads, mask = _as_batch([(s, [1, 0, 1, 2, 3])], 5)
    got = break_cycles(scores, heads, mask, steps_for_length(5))[0].tolist()
    assert got == [1, 4, 1, 2, 4]


def test_forests_are_left_alone():
    s = np.random.default_rng(0).normal(size=(6, 6)).astype(np.float32)
    heads = [2, 2, 2, 5, 5, 5]  # two trees, roots 2 and 5
    scores, h, mask = _as_batch([(s, heads)], 6)
    assert break_cycles(scores, h, mask, steps_for_length(6))[0].tolist() == heads
