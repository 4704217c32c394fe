"""D̂ → sentences and directed heads: exact tree distances give their tree back, sentences stay contiguous."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from parserfree.export.predicted_tree import heads_from_distances, sentence_spans, sentence_starts
from parserfree.predictor.decoding import mst_edges


def tree_distances(heads: np.ndarray) -> np.ndarray:
    """All-pairs path lengths of a forest (root = self); 1000 between trees."""
    n = len(heads)
    rows = [i for i in range(n) if heads[i] != i]
    graph = csr_matrix((np.ones(len(rows)), (rows, [heads[i] for i in rows])), shape=(n, n))
    d = shortest_path(graph, directed=False, unweighted=True)
    d[np.isinf(d)] = 1000
    return d


def undirected(heads: np.ndarray) -> set[frozenset[int]]:
    return {frozenset((i, int(h))) for i, h in enumerate(heads) if h != i}


def random_tree(rng: np.random.Generator, n: int, offset: int = 0) -> np.ndarray:
    order = rng.permutation(n)
    heads = np.empty(n, dtype=np.int64)
    heads[order[0]] = order[0]
    for k in range(1, n):
        heads[order[k]] = order[rng.integers(0, k)]
    return heads + offset


def check_one_tree_per_sentence(heads: np.ndarray, spans: list[tuple[int, int]]) -> None:
    for start, end in spans:
        roots = [i for i in range(start, end) if heads[i] == i]
        assert len(roots) == 1
        for i in range(start, end):
            seen, node = set(), i
            while heads[node] != node:  # every word reaches the root, without a cycle
                assert start <= heads[node] < end and node not in seen
                seen.add(node)
                node = int(heads[node])


def test_exact_tree_distances_give_back_the_tree_and_its_busiest_word_as_root():
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 17, 40):
        gold = random_tree(rng, n)
        heads = heads_from_distances(tree_distances(gold))
        assert undirected(heads) == undirected(gold)
        degree = np.bincount([w for e in undirected(gold) for w in e], minlength=n)
        assert [i for i in range(n) if heads[i] == i] == [int(np.argmax(degree))]


def test_trees_far_apart_become_sentences_in_word_order():
    rng = np.random.default_rng(1)
    gold = np.concatenate([random_tree(rng, 6), random_tree(rng, 4, offset=6), random_tree(rng, 1, offset=10)])
    d = tree_distances(gold)
    assert sentence_spans(d) == [(0, 6), (6, 10), (10, 11)]
    heads = heads_from_distances(d)
    check_one_tree_per_sentence(heads, sentence_spans(d))
    assert undirected(heads) == undirected(gold)
    assert sentence_starts(heads).tolist() == [i in (0, 6, 10) for i in range(11)]


def test_interleaved_trees_merge_into_one_contiguous_sentence():
    # trees {0, 2} and {1, 3}: no contiguous split keeps them apart, so 0..3 is one sentence with one tree
    d = tree_distances(np.array([2, 3, 2, 3]))
    assert sentence_spans(d) == [(0, 4)]
    heads = heads_from_distances(d)
    check_one_tree_per_sentence(heads, [(0, 4)])
    assert {frozenset((0, 2)), frozenset((1, 3))} <= undirected(heads)


def test_merged_sentence_joined_through_another_sentence_still_gets_a_whole_tree():
    # A = {0, 2} and B = {1} share the span 0..2; C = {3, 4} is a sentence of its own. The whole-text MST
    # joins B to the rest through C (d(1, 3) = 700 < d(1, A) = 900), which leaves 0..2 without B's edge.
    d = np.full((5, 5), 1000.0)
    np.fill_diagonal(d, 0)
    d[0, 2] = d[2, 0] = d[3, 4] = d[4, 3] = 1
    d[0, 3] = d[3, 0] = 600
    d[1, 3] = d[3, 1] = 700
    d[1, 0] = d[0, 1] = d[1, 2] = d[2, 1] = 900
    assert frozenset((1, 3)) in mst_edges(d)
    assert sentence_spans(d) == [(0, 3), (3, 5)]
    heads = heads_from_distances(d)
    check_one_tree_per_sentence(heads, [(0, 3), (3, 5)])
    assert len(undirected(heads)) == 3


@pytest.mark.parametrize("seed", range(5))
def test_noisy_distances_always_give_one_tree_per_contiguous_sentence(seed):
    rng = np.random.default_rng(seed)
    n = 30
    labels = rng.integers(0, 4, n)
    d = rng.random((n, n)) * 8
    d[labels[:, None] != labels[None, :]] = 1000
    np.fill_diagonal(d, 0)
    spans = sentence_spans(d)
    assert spans[0][0] == 0 and spans[-1][1] == n and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    heads = heads_from_distances(d)
    check_one_tree_per_sentence(heads, spans)
    for start, end in spans:  # each sentence's tree is a minimum spanning tree of its words
        sub = (d + d.T)[start:end, start:end] / 2
        best = sum(sub[tuple(e)] for e in map(sorted, mst_edges(sub)))
        ours = sum(sub[i - start, heads[i] - start] for i in range(start, end) if heads[i] != i)
        assert ours == pytest.approx(best)


def test_forest_shortcut_equals_the_spanning_tree_and_steps_aside_when_d_is_no_forest(monkeypatch):
    import parserfree.export.predicted_tree as predicted_tree

    rng = np.random.default_rng(7)
    forests = [
        np.concatenate([random_tree(rng, 7), random_tree(rng, 5, offset=7)]),
        np.array([2, 3, 2, 3, 4]),
        random_tree(rng, 30),
    ]
    fast = [(undirected(heads_from_distances(tree_distances(f))), sentence_spans(tree_distances(f))) for f in forests]
    with monkeypatch.context() as m:
        m.setattr(predicted_tree, "_unit_forest", lambda sym: None)
        slow = [
            (undirected(heads_from_distances(tree_distances(f))), sentence_spans(tree_distances(f))) for f in forests
        ]
    assert fast == slow
    triangle = np.ones((3, 3)) - np.eye(3)  # three pairs at distance 1: no forest
    heads = heads_from_distances(triangle)
    check_one_tree_per_sentence(heads, [(0, 3)])
    assert len(undirected(heads)) == 2
    closer = tree_distances(np.array([1, 1, 1]))  # the chain 0-1-2, then 0 and 2 brought closer than 1
    closer[0, 2] = closer[2, 0] = 0.5
    assert frozenset((0, 2)) in undirected(heads_from_distances(closer))
