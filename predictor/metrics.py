"""Evaluation of D̂ against the parser's trees: UUAS, DSpr, L1 and root accuracy, one example at a time.

The evaluation end of the data flow: the evaluation loop un-pads each example (n words) and feeds numpy
copies of D̂ (and, for the `heads` form, the predicted heads) to ``DistanceMetrics``. Rules:

- UUAS (Hewitt & Manning): undirected edge overlap of the minimum spanning tree of D̂ (decoding.py) with
  the gold tree. Punctuation is excluded by dropping punctuation words: the MST is taken over the
  non-punctuation words only (their rows and columns of D̂), and the gold edges are the (i, head(i)) of
  non-root words i whose both ends are non-punctuation (a gold edge touching punctuation is not
  counted, and no bridging edge is invented when punctuation sits inside a tree). Score = correct / gold
  edges, pooled over all examples, in percent. In a forest example the MST still spans all words, so the
  edge it adds between trees is simply never correct.
- DSpr: for each gold tree (sentence) of m ≥ 2 words, the Spearman correlation between D̂ and D row by
  row over the words of that tree (all words, punctuation included, as in Hewitt & Manning), averaged
  over the rows; a row where D̂ is constant has no ranking and scores 0. Sentence scores are averaged
  per sentence length m, then over the lengths in [min_length, max_length] (5–50) that occur. The rows
  are ranked all at once; each value equals ``scipy.stats.spearmanr`` of the row pair (tested).
- L1: mean |min(D̂, n) − D| over ordered pairs i ≠ j in the same gold tree (n = the example's words).
- Root accuracy (`heads` form): the set of predicted roots equals the set of gold roots.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np
import torch
from scipy.stats import rankdata

from parserfree.predictor.decoding import mst_edges
from parserfree.encoder.conventions import CROSS_TREE_DISTANCE
from parserfree.predictor.tree_ops import distances_from_heads, steps_for_length


def chain_baseline(n: int) -> np.ndarray:
    """The linear-order baseline D̂_ij = |i − j| (n×n float), the figure a predictor must beat."""
    idx = np.arange(n, dtype=np.float64)
    return np.abs(idx[:, None] - idx[None, :])


def gold_distances(heads: np.ndarray) -> np.ndarray:
    """Exact path lengths of one forest (n×n int64; cross-tree pairs CROSS_TREE_DISTANCE) from its heads."""
    h = torch.as_tensor(np.asarray(heads, dtype=np.int64)).unsqueeze(0)  # 1×n
    n = h.shape[1]
    if n == 0:
        return np.zeros((0, 0), dtype=np.int64)
    d = distances_from_heads(h, torch.ones_like(h, dtype=torch.bool), steps_for_length(n))
    return d[0].round().long().numpy()


def uuas(pred: np.ndarray, heads: np.ndarray, punct: np.ndarray | None = None) -> tuple[int, int]:
    """(correct, total) undirected gold edges recovered by the MST of D̂ (n×n), punctuation excluded."""
    heads = np.asarray(heads, dtype=np.int64)
    n = heads.size
    keep = np.ones(n, dtype=bool) if punct is None else ~np.asarray(punct, dtype=bool)
    words = np.nonzero(keep)[0]
    sub = np.asarray(pred)[np.ix_(words, words)]
    predicted = {frozenset(int(words[k]) for k in edge) for edge in mst_edges(sub)}
    gold = {frozenset((i, int(heads[i]))) for i in range(n) if heads[i] != i and keep[i] and keep[heads[i]]}
    return len(predicted & gold), len(gold)


def _trees(gold: np.ndarray) -> list[np.ndarray]:
    """Word indices of each gold tree of a forest, from its distance matrix (n×n)."""
    first = np.argmax(gold != CROSS_TREE_DISTANCE, axis=1)  # smallest index in each word's tree
    return [np.nonzero(first == label)[0] for label in np.unique(first)]


def row_spearman(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Spearman ρ between each row of D̂ and the same row of D (m×m each) → m values.

    The same number as ``scipy.stats.spearmanr(pred[i], gold[i])`` (Pearson correlation of average
    ranks), for all rows at once; a constant row has no ranking and gives 0.
    """
    p = rankdata(pred, axis=1)
    g = rankdata(gold, axis=1)
    p -= p.mean(axis=1, keepdims=True)
    g -= g.mean(axis=1, keepdims=True)
    norm = np.sqrt((p * p).sum(axis=1) * (g * g).sum(axis=1))
    return np.divide((p * g).sum(axis=1), norm, out=np.zeros(norm.shape), where=norm > 0)


def sentence_dspr(pred: np.ndarray, gold: np.ndarray) -> list[tuple[int, float]]:
    """(length, mean row Spearman) for each gold tree of ≥ 2 words in one example (pred, gold n×n)."""
    scores = []
    for members in _trees(gold):
        if members.size < 2:
            continue
        rows = np.ix_(members, members)
        rho = row_spearman(np.asarray(pred, dtype=np.float64)[rows], np.asarray(gold, dtype=np.float64)[rows])
        scores.append((int(members.size), float(rho.mean())))
    return scores


def dspr(scores: Iterable[tuple[int, float]], min_length: int = 5, max_length: int = 50) -> float:
    """Average sentence scores per length, then over the lengths in [min_length, max_length] (nan if none)."""
    by_length: dict[int, list[float]] = defaultdict(list)
    for length, rho in scores:
        if min_length <= length <= max_length:
            by_length[length].append(rho)
    if not by_length:
        return float("nan")
    return float(np.mean([np.mean(v) for v in by_length.values()]))


def l1_error(pred: np.ndarray, gold: np.ndarray) -> tuple[float, int]:
    """(Σ |min(D̂, n) − D|, number of pairs) over ordered pairs i ≠ j in the same gold tree."""
    n = gold.shape[0]
    scored = (gold != CROSS_TREE_DISTANCE) & ~np.eye(n, dtype=bool)
    errors = np.abs(np.minimum(np.asarray(pred, dtype=np.float64), n) - gold)[scored]
    return float(errors.sum()), int(scored.sum())


def root_correct(pred_heads: np.ndarray, heads: np.ndarray) -> bool:
    """Whether the predicted roots (words pointing to themselves) are exactly the gold roots."""
    idx = np.arange(len(heads))
    return bool(np.array_equal(np.asarray(pred_heads) == idx, np.asarray(heads) == idx))


class DistanceMetrics:
    """Accumulates UUAS, DSpr, L1 (and root accuracy) over un-padded examples; see the module rules."""

    def __init__(self, min_length: int = 5, max_length: int = 50) -> None:
        self.min_length = min_length
        self.max_length = max_length
        self.reset()

    def reset(self) -> None:
        """Forget everything seen so far."""
        self.correct = 0
        self.total = 0
        self.l1_sum = 0.0
        self.l1_pairs = 0
        self.sentence_scores: list[tuple[int, float]] = []
        self.roots_correct = 0
        self.roots_seen = 0
        self.n_sentences = 0

    def update(
        self,
        pred: np.ndarray,
        heads: np.ndarray,
        punct: np.ndarray | None = None,
        gold: np.ndarray | None = None,
        pred_heads: np.ndarray | None = None,
    ) -> None:
        """Add one example: D̂ (n×n), gold heads (n), optional punctuation flags (n bool), gold D (n×n,
        computed from ``heads`` when omitted) and predicted heads (n, for root accuracy)."""
        pred = np.asarray(pred, dtype=np.float64)
        heads = np.asarray(heads, dtype=np.int64)
        gold = gold_distances(heads) if gold is None else np.asarray(gold, dtype=np.int64)
        correct, total = uuas(pred, heads, punct)
        self.correct += correct
        self.total += total
        l1_sum, l1_pairs = l1_error(pred, gold)
        self.l1_sum += l1_sum
        self.l1_pairs += l1_pairs
        self.sentence_scores.extend(sentence_dspr(pred, gold))
        if pred_heads is not None:
            self.roots_correct += root_correct(pred_heads, heads)
            self.roots_seen += 1
        self.n_sentences += 1

    def compute(self) -> dict[str, float | int | None]:
        """{uuas (percent), dspr, l1, root_acc (None without predicted heads), n_sentences}."""
        nan = float("nan")
        return {
            "uuas": 100.0 * self.correct / self.total if self.total else nan,
            "dspr": dspr(self.sentence_scores, self.min_length, self.max_length),
            "l1": self.l1_sum / self.l1_pairs if self.l1_pairs else nan,
            "root_acc": self.roots_correct / self.roots_seen if self.roots_seen else None,
            "n_sentences": self.n_sentences,
        }
