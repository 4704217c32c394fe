"""The predicted tree as a dependency parse: D̂ of one text → sentences and directed heads.

The graph predicts distances, not arcs: D̂ says which words are close but not which governs which. Three
rules turn it into what a spaCy user expects from a parser (used by the spaCy component, the SVGs of
``parserfree predict --svg`` and the comparison report's tree figure):

1. **Sentences.** Pairs at least ``CROSS_TREE_DISTANCE / 2`` apart are in different trees (the ``heads``
   predictor gives exactly ``CROSS_TREE_DISTANCE`` across its trees, the convention it was trained on);
   trees whose word spans overlap are merged, so every sentence is a contiguous span of words.
2. **Arcs.** Within a sentence, the minimum spanning tree of D̂ (``predictor.decoding.mst_edges``): the
   undirected edges the runtime reports under ``"tree"``, less the far edges that join its sentences. When
   D̂ is the path length of a forest (the ``heads`` predictor) that tree is read off directly: the pairs at
   distance 1.
3. **Direction.** The root is the word with the most tree neighbours (ties: the leftmost); every edge points
   away from it. It is a rule of thumb: ``python -m bench.spacy_component`` reports how often it picks
   spaCy's own root when applied to spaCy's trees.

Heads are 0-based word indices and a root points to itself (the project's convention).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ..encoder.conventions import CROSS_TREE_DISTANCE
from ..predictor.decoding import mst_edges

SENTENCE_GAP = CROSS_TREE_DISTANCE / 2  # D̂ at or above this: the two words are in different sentences


def _mst(weights: np.ndarray) -> list[tuple[int, int]]:
    return sorted((min(edge), max(edge)) for edge in mst_edges(weights))  # each edge: frozenset({i, j})


def unspanned(n: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Bool per word k of 0..n−1: True where no pair (lo ≤ hi) spans the gap before k (lo < k ≤ hi);
    always True at word 0. With the arcs or edges of contiguous trees: True where a sentence starts."""
    lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
    crossing = np.bincount(lo + 1, minlength=n + 1) - np.bincount(hi + 1, minlength=n + 1)
    return np.cumsum(crossing[:n]) == 0


def tree_by_sentence(distances: np.ndarray) -> tuple[list[tuple[int, int]], np.ndarray]:
    """n×n D̂ → (undirected edges (i < j) of one tree per sentence, sentence number of each word).

    Rules 1 and 2: ``near_edges`` connect exactly the words that D̂ puts in one tree, so sentences end
    where none of them crosses, and each tree gets its minimum spanning tree. A sentence that merged
    several trees is completed by the cheapest edges joining them (Prim's algorithm over its trees), which
    makes its edges the sentence's own MST."""
    d = np.asarray(distances, dtype=np.float64)
    n = d.shape[0]
    if n < 2:
        return [], np.zeros(n, dtype=np.int64)
    sym = (d + d.T) / 2.0
    near = near_edges(sym)
    if len(near) == n - 1:  # one tree: one sentence
        return near, np.zeros(n, dtype=np.int64)
    pairs = np.array(near, dtype=np.int64).reshape(-1, 2)
    sentence = np.cumsum(unspanned(n, pairs[:, 0], pairs[:, 1])) - 1
    sizes = np.bincount(sentence)
    missing = sizes - 1 - np.bincount(sentence[pairs[:, 0]], minlength=len(sizes))
    inside = list(near)
    if missing.any():
        tree = _forest_labels(n, near)
        starts = np.cumsum(sizes) - sizes
        for k in np.flatnonzero(missing).tolist():
            inside += _joining_edges(sym, tree, int(starts[k]), int(starts[k] + sizes[k]))
    return inside, sentence


def near_edges(sym: np.ndarray) -> list[tuple[int, int]]:
    """Edges (i < j) of a minimum spanning forest of the pairs closer than ``SENTENCE_GAP`` (symmetric D̂):
    the MST edges shorter than the gap (a minimum spanning tree minimises its longest edge, so they join
    exactly the words D̂ puts in one tree). Fast path for the ``heads`` predictor, whose D̂ is the path
    length of a forest: its pairs at distance 1 already are that forest (checked, not assumed)."""
    forest = _unit_forest(sym)
    if forest is not None:
        return forest
    edges = _mst(sym)
    pairs = np.array(edges, dtype=np.int64)
    keep = (sym[pairs[:, 0], pairs[:, 1]] < SENTENCE_GAP).tolist()
    return [edge for edge, ok in zip(edges, keep) if ok]


def _unit_forest(sym: np.ndarray) -> list[tuple[int, int]] | None:
    """The pairs at D̂ = 1 when they form a spanning forest of the near pairs with every other near pair at
    D̂ ≥ 1 (then no spanning tree weighs less: it is the MST), else None."""
    n = sym.shape[0]
    i, j = np.nonzero(np.triu(sym == 1.0, 1))
    edges = list(zip(i.tolist(), j.tolist()))
    labels = _forest_labels(n, edges) if len(edges) < n else None
    if labels is None:
        return None
    same = labels[:, None] == labels[None, :]
    if not np.array_equal(sym < SENTENCE_GAP, same):
        return None
    off_diagonal = same & ~np.eye(n, dtype=bool)
    return edges if sym[off_diagonal].min(initial=1.0) >= 1.0 else None


def _forest_labels(n: int, edges: list[tuple[int, int]]) -> np.ndarray | None:
    """Tree label of each of n words under ``edges`` (union–find); None when the edges hold a cycle."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in edges:
        a, b = find(i), find(j)
        if a == b:
            return None
        parent[a] = b
    return np.array([find(x) for x in range(n)], dtype=np.int64)


def _joining_edges(sym: np.ndarray, tree: np.ndarray, start: int, end: int) -> list[tuple[int, int]]:
    """The cheapest edges that join the trees (labels ``tree``) of words start..end−1 into one (Prim's
    algorithm over trees: with the trees' own MST edges, the MST of the span)."""
    labels = tree[start:end]
    joined = labels == labels[0]
    block = sym[start:end, start:end]
    out = []
    while not joined.all():
        inner, outer = np.flatnonzero(joined), np.flatnonzero(~joined)
        a, b = np.unravel_index(np.argmin(block[np.ix_(inner, outer)]), (len(inner), len(outer)))
        i, j = int(inner[a]), int(outer[b])
        out.append((start + min(i, j), start + max(i, j)))
        joined |= labels == labels[j]
    return out


def sentence_spans(distances: np.ndarray) -> list[tuple[int, int]]:
    """n×n D̂ → contiguous sentences [(start, end), …] (end exclusive) covering 0..n (rule 1)."""
    _, sentence = tree_by_sentence(distances)
    bounds = np.flatnonzero(np.diff(sentence)) + 1
    edges = [0, *bounds.tolist(), len(sentence)]
    return [(a, b) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def heads_from_distances(distances: np.ndarray) -> np.ndarray:
    """n×n D̂ → n heads (0-based, root = self): one tree per sentence, each pointing away from its root
    (rule 3: the word with the most tree neighbours, the leftmost on ties)."""
    edges, sentence = tree_by_sentence(distances)
    n = len(sentence)
    heads = np.full(n, -1, dtype=np.int64)
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for i, j in edges:
        neighbours[i].append(j)
        neighbours[j].append(i)
    degree = np.bincount(np.asarray(edges, dtype=np.int64).reshape(-1), minlength=n)
    first = np.flatnonzero(np.diff(sentence, prepend=-1))  # first word of each sentence
    for start, end in zip(first, [*first[1:], n]):
        root = int(start) + int(np.argmax(degree[start:end]))
        heads[root] = root
        queue = deque([root])
        while queue:
            node = queue.popleft()
            for other in neighbours[node]:
                if heads[other] < 0:
                    heads[other] = node
                    queue.append(other)
    return heads


def sentence_starts(heads: np.ndarray) -> np.ndarray:
    """Heads (root = self) of contiguous sentences → bool per word, True where a sentence begins."""
    heads = np.asarray(heads, dtype=np.int64)
    idx = np.arange(len(heads))
    return unspanned(len(heads), np.minimum(idx, heads), np.maximum(idx, heads))
