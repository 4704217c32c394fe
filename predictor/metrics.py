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
- UAS and LAS (`heads` form, directed): over the non-punctuation words (roots included, as spaCy's
  ``Scorer.score_deps`` counts them), the percent whose predicted head is the gold head (UAS), and whose
  predicted label is also the gold label (LAS). LAS is taken over the examples that carry gold labels;
  in those, a word whose gold label is unknown to the model (id −1) counts as wrong. Pooled over examples.
- Relation recall (``RelationMetrics``, the comparison report): for the arcs of relations that matter
  for syntax-sensitive tasks (``RELATIONS``: nsubj, dobj/obj, amod, prep/pobj, relcl, by the parser's
  labels), the percent whose undirected edge is in UUAS's predicted tree (same punctuation rule), with
  UUAS itself, overall and by sentence length (``LENGTH_BINS``; a sentence is one gold tree, its length
  counts every word, punctuation included). Given the predicted heads and labels, also UAS and LAS (the
  rule above) and, per relation, the percent of its arcs whose head is found (directed) and whose head
  and label are (labelled).
- Cycle rates (`heads` form), percent of examples whose heads contain a cycle: ``argmax_cycle_rate`` for
  the scorer's raw argmax heads (how often the in-graph cycle breaking has work to do) and
  ``cycle_rate`` for the heads the predictor outputs (0 when the cycle breaking works).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

import numpy as np
import torch
from scipy.stats import rankdata

from ..encoder.conventions import CROSS_TREE_DISTANCE
from .decoding import mst_edges
from .tree_ops import distances_from_heads, jump_tables, on_cycle, steps_for_length

# relation group → the parser labels it covers (spaCy's English labels; the UD names too)
RELATIONS = {
    "nsubj": ("nsubj",),
    "obj": ("dobj", "obj"),
    "amod": ("amod",),
    "prep/pobj": ("prep", "pobj"),
    "relcl": ("relcl", "acl:relcl"),
}
LENGTH_BINS = (("≤10", 1, 10), ("11–20", 11, 20), ("21–40", 21, 40), (">40", 41, None))  # words per sentence


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


def predicted_edges(pred: np.ndarray, punct: np.ndarray | None = None) -> set[frozenset[int]]:
    """Undirected edges of the MST of D̂ (n×n) over the non-punctuation words (UUAS's predicted tree)."""
    n = np.asarray(pred).shape[0]
    words = np.arange(n) if punct is None else np.nonzero(~np.asarray(punct, dtype=bool))[0]
    sub = np.asarray(pred)[np.ix_(words, words)]
    return {frozenset(int(words[k]) for k in edge) for edge in mst_edges(sub)}


def scored_dependents(heads: np.ndarray, punct: np.ndarray | None = None) -> list[int]:
    """Words i whose gold arc (i, head(i)) UUAS scores: non-roots with both ends non-punctuation."""
    heads = np.asarray(heads, dtype=np.int64)
    keep = np.ones(heads.size, dtype=bool) if punct is None else ~np.asarray(punct, dtype=bool)
    return [i for i in range(heads.size) if heads[i] != i and keep[i] and keep[heads[i]]]


def uuas(pred: np.ndarray, heads: np.ndarray, punct: np.ndarray | None = None) -> tuple[int, int]:
    """(correct, total) undirected gold edges recovered by the MST of D̂ (n×n), punctuation excluded."""
    predicted = predicted_edges(pred, punct)
    gold = {frozenset((i, int(heads[i]))) for i in scored_dependents(heads, punct)}
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


def attachment(
    pred_heads: np.ndarray,
    heads: np.ndarray,
    punct: np.ndarray | None = None,
    pred_labels: np.ndarray | None = None,
    gold_labels: np.ndarray | None = None,
) -> tuple[int, int, int]:
    """(words scored, heads correct, heads and labels correct) of one example: the non-punctuation words,
    roots included. Labels are ids or strings; without both, the third count is 0."""
    head_ok, labelled = attached_words(pred_heads, heads, punct, pred_labels, gold_labels)
    return int(head_ok.size), int(head_ok.sum()), int(labelled.sum())


def attached_words(
    pred_heads: np.ndarray,
    heads: np.ndarray,
    punct: np.ndarray | None = None,
    pred_labels: np.ndarray | None = None,
    gold_labels: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``attachment`` word by word: for each scored word (non-punctuation, roots included, in order) whether
    its head is correct, and whether its head and label are (all False without both labels)."""
    heads = np.asarray(heads, dtype=np.int64)
    keep = np.ones(heads.size, dtype=bool) if punct is None else ~np.asarray(punct, dtype=bool)
    head_ok = (np.asarray(pred_heads, dtype=np.int64) == heads)[keep]
    labelled = np.zeros_like(head_ok)
    if pred_labels is not None and gold_labels is not None:
        labelled = head_ok & (np.asarray(pred_labels) == np.asarray(gold_labels))[keep]
    return head_ok, labelled


def has_cycle(heads: np.ndarray) -> bool:
    """Whether one example's heads (n, 0-based, root = self) contain a cycle."""
    h = torch.as_tensor(np.asarray(heads, dtype=np.int64)).unsqueeze(0)  # 1×n
    if h.shape[1] == 0:
        return False
    return bool(on_cycle(h, torch.ones_like(h, dtype=torch.bool), steps_for_length(h.shape[1])).any())


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
        self.cycles = 0
        self.argmax_cycles = 0
        self.argmax_seen = 0
        self.n_sentences = 0
        self.attached = [0, 0]  # words scored, heads correct (UAS)
        self.labelled = [0, 0]  # words scored in examples with gold labels, heads and labels correct (LAS)

    def update(
        self,
        pred: np.ndarray,
        heads: np.ndarray,
        punct: np.ndarray | None = None,
        gold: np.ndarray | None = None,
        pred_heads: np.ndarray | None = None,
        argmax_heads: np.ndarray | None = None,
        pred_labels: np.ndarray | None = None,
        gold_labels: np.ndarray | None = None,
    ) -> None:
        """Add one example: D̂ (n×n), gold heads (n), optional punctuation flags (n bool), gold D (n×n,
        computed from ``heads`` when omitted), predicted heads (n, for root accuracy, the cycle rate and
        UAS), the raw argmax heads before cycle breaking (n, for the argmax cycle rate) and the predicted
        and gold label ids (n each, −1 = none or unknown; for LAS, when the example has gold labels)."""
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
            self.cycles += has_cycle(pred_heads)
            self.roots_seen += 1
            labelled = (
                pred_labels is not None and gold_labels is not None and bool((np.asarray(gold_labels) >= 0).any())
            )
            words, head_ok, both_ok = attachment(
                pred_heads, heads, punct, pred_labels if labelled else None, gold_labels if labelled else None
            )
            self.attached[0] += words
            self.attached[1] += head_ok
            if labelled:
                self.labelled[0] += words
                self.labelled[1] += both_ok
        if argmax_heads is not None:
            self.argmax_cycles += has_cycle(argmax_heads)
            self.argmax_seen += 1
        self.n_sentences += 1

    def compute(self) -> dict[str, float | int | None]:
        """{uuas (percent), uas, las (percent; None without predicted heads / gold labels), dspr, l1,
        root_acc, cycle_rate, argmax_cycle_rate (percent; None without the heads they need), n_sentences}."""
        nan = float("nan")
        return {
            "uuas": 100.0 * self.correct / self.total if self.total else nan,
            "uas": 100.0 * self.attached[1] / self.attached[0] if self.attached[0] else None,
            "las": 100.0 * self.labelled[1] / self.labelled[0] if self.labelled[0] else None,
            "dspr": dspr(self.sentence_scores, self.min_length, self.max_length),
            "l1": self.l1_sum / self.l1_pairs if self.l1_pairs else nan,
            "root_acc": self.roots_correct / self.roots_seen if self.roots_seen else None,
            "cycle_rate": 100.0 * self.cycles / self.roots_seen if self.roots_seen else None,
            "argmax_cycle_rate": 100.0 * self.argmax_cycles / self.argmax_seen if self.argmax_seen else None,
            "n_sentences": self.n_sentences,
        }


def length_bin(n: int) -> str:
    """Name of the ``LENGTH_BINS`` bin that a sentence of n words falls in."""
    for name, low, high in LENGTH_BINS:
        if n >= low and (high is None or n <= high):
            return name
    raise ValueError(f"sentence length {n} must be ≥ 1")


def tree_roots(heads: np.ndarray) -> np.ndarray:
    """The root of every word's gold tree (n int64) for one forest (0-based heads, root = self)."""
    h = torch.as_tensor(np.asarray(heads, dtype=np.int64)).unsqueeze(0)  # 1×n
    if h.shape[1] == 0:
        return np.zeros(0, dtype=np.int64)
    ups, _ = jump_tables(h, steps_for_length(h.shape[1]))
    return ups[-1][0].numpy()


class RelationMetrics:
    """UUAS and the recall of ``RELATIONS`` arcs, overall ("all") and per ``LENGTH_BINS`` bin; given the
    predicted heads and labels also UAS, LAS and the directed and labelled recall per relation; see the
    module rules."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything seen so far."""
        self.hits: Counter = Counter()  # (bin, relation group or "all") → arcs recovered (undirected)
        self.arcs: Counter = Counter()  # (bin, relation group or "all") → gold arcs
        self.directed: Counter = Counter()  # (bin, relation group or "all") → arcs with the gold head
        self.labelled: Counter = Counter()  # (bin, relation group or "all") → arcs with the gold head and label
        self.sentences: Counter = Counter()  # bin → sentences
        self.words: Counter = Counter()  # (bin, "words" | "uas" | "las") → non-punctuation words, correct ones
        self.with_heads = False  # predicted heads seen (UAS, directed recall)
        self.with_labels = False  # predicted labels seen (LAS, labelled recall)

    def update(
        self,
        pred: np.ndarray,
        heads: np.ndarray,
        deps: tuple[str, ...],
        punct: np.ndarray | None = None,
        pred_heads: np.ndarray | None = None,
        pred_deps: tuple[str, ...] | None = None,
    ) -> None:
        """Add one example: D̂ (n×n), gold heads (n), the parser's labels (n), punctuation flags (n) and,
        when the graph gives them, the predicted heads (n) and labels (n)."""
        heads = np.asarray(heads, dtype=np.int64)
        group = {label: name for name, labels in RELATIONS.items() for label in labels}
        roots = tree_roots(heads)
        size = Counter(roots.tolist())
        for n in size.values():
            self.sentences[length_bin(n)] += 1
            self.sentences["all"] += 1
        predicted = predicted_edges(pred, punct)
        head_ok = label_ok = None
        if pred_heads is not None:
            self.with_heads = True
            self.with_labels |= pred_deps is not None
            head_ok = np.asarray(pred_heads, dtype=np.int64) == heads
            label_ok = head_ok & (np.asarray(pred_deps) == np.asarray(deps)) if pred_deps is not None else None
            keep = np.ones(heads.size, dtype=bool) if punct is None else ~np.asarray(punct, dtype=bool)
            for i in np.flatnonzero(keep).tolist():
                for where in ("all", length_bin(size[int(roots[i])])):
                    self.words[where, "words"] += 1
                    self.words[where, "uas"] += bool(head_ok[i])
                    self.words[where, "las"] += bool(label_ok[i]) if label_ok is not None else 0
        for i in scored_dependents(heads, punct):
            hit = frozenset((i, int(heads[i]))) in predicted
            for key in ("all", group.get(deps[i])):
                if key is None:
                    continue
                for where in ("all", length_bin(size[int(roots[i])])):
                    self.arcs[where, key] += 1
                    self.hits[where, key] += hit
                    if head_ok is not None:
                        self.directed[where, key] += bool(head_ok[i])
                        self.labelled[where, key] += bool(label_ok[i]) if label_ok is not None else 0

    def compute(self) -> dict[str, dict]:
        """{bin: {sentences, arcs, uuas, recall: {group: percent or None}, relation_arcs: {group: n}}} for
        "all" and every length bin; with predicted heads also {words, uas, las, directed_recall,
        labelled_recall} (LAS and labelled recall None without predicted labels)."""
        out = {}
        for where in ("all", *(name for name, _, _ in LENGTH_BINS)):

            def percent(counter: Counter, key: str) -> float | None:
                return 100.0 * counter[where, key] / self.arcs[where, key] if self.arcs[where, key] else None  # noqa: B023 (called within the iteration)

            out[where] = {
                "sentences": self.sentences[where],
                "arcs": self.arcs[where, "all"],
                "uuas": percent(self.hits, "all"),
                "recall": {name: percent(self.hits, name) for name in RELATIONS},
                "relation_arcs": {name: self.arcs[where, name] for name in RELATIONS},
            }
            if self.with_heads:
                words, labelled = self.words[where, "words"], self.with_labels
                out[where].update(
                    {
                        "words": words,
                        "uas": 100.0 * self.words[where, "uas"] / words if words else None,
                        "las": 100.0 * self.words[where, "las"] / words if words and labelled else None,
                        "directed_recall": {name: percent(self.directed, name) for name in RELATIONS},
                        "labelled_recall": {
                            name: percent(self.labelled, name) if labelled else None for name in RELATIONS
                        },
                    }
                )
        return out
