"""A bag-of-words linear classifier: lower-cased 1- and 2-grams, multinomial logistic regression with an L2
penalty chosen on dev over the whole grid ``L2_GRID`` (10⁻¹ … 10⁻⁶).

The strongest of the report's shortcut baselines (``parserfree.comparison.baselines``): whatever a model gets right
that word counts alone also get right is no evidence of structure. Written with numpy, scipy.sparse and
scipy.optimize (L-BFGS on the mean cross-entropy plus λ/2·|W|², bias unpenalised) rather than
scikit-learn, which the project does not depend on. The n-gram vocabulary is every 1- and 2-gram found in
at least two training texts; other n-grams are ignored.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, sparse
from scipy.special import logsumexp, softmax

from ..encoder.text import normalise_text

TOKEN = re.compile(r"\w+|[^\w\s]")
L2_GRID = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)  # λ all tried on dev, strongest first (a tie keeps the stronger)
MAX_ITERATIONS = 500
TOLERANCE = 1e-6  # relative decrease of the loss at which L-BFGS stops (dev accuracy does not move below it)
MIN_COUNT = 2  # an n-gram must occur in this many training texts to get a weight


def ngrams(text: str) -> list[str]:
    """Lower-cased word 1-grams and 2-grams of a text."""
    tokens = TOKEN.findall(normalise_text(text).lower())
    return tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:])]


def ngram_vocabulary(texts: Sequence[str], min_count: int = MIN_COUNT) -> dict[str, int]:
    """Column of every n-gram found in at least ``min_count`` training texts, in order of first appearance."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(dict.fromkeys(ngrams(text)).keys())  # once per text, in the text's order (a set's order
        # follows the process's string hashes, so the columns, and with them L-BFGS's result, moved from run to run)
    return {gram: i for i, gram in enumerate(g for g, c in counts.items() if c >= min_count)}


def featurize(texts: Sequence[str], vocab: dict[str, int]) -> sparse.csr_matrix:
    """Binary n-gram presence (N×F CSR, float64); unknown n-grams are dropped."""
    rows, cols = [], []
    for i, text in enumerate(texts):
        seen = {vocab[g] for g in ngrams(text) if g in vocab}
        rows += [i] * len(seen)
        cols += sorted(seen)
    data = np.ones(len(rows))
    return sparse.csr_matrix((data, (rows, cols)), shape=(len(texts), len(vocab)))


def _loss_and_grad(params: np.ndarray, x: sparse.csr_matrix, y: np.ndarray, n_classes: int, l2: float):
    """Mean cross-entropy + λ/2·|W|² and its gradient; params = W (F×C) then the bias (C), flattened."""
    f = x.shape[1]
    w = params[: f * n_classes].reshape(f, n_classes)
    bias = params[f * n_classes :]
    logits = x @ w + bias  # N×C
    log_z = logsumexp(logits, axis=1)
    n = x.shape[0]
    loss = float(np.mean(log_z - logits[np.arange(n), y]) + 0.5 * l2 * np.sum(w * w))
    probs = np.exp(logits - log_z[:, None])
    probs[np.arange(n), y] -= 1.0
    probs /= n
    grad_w = x.T @ probs + l2 * w
    return loss, np.concatenate([np.asarray(grad_w).ravel(), probs.sum(0)])


@dataclass
class BagOfWords:
    """A fitted bag-of-words classifier: its n-gram vocabulary, weights (F×C), bias (C) and λ."""

    vocab: dict[str, int]
    weights: np.ndarray
    bias: np.ndarray
    l2: float
    dev_accuracy: dict[float, float] = field(default_factory=dict)  # λ → dev accuracy (%), every λ of the grid

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """Class probabilities (N×C) of each text."""
        return softmax(featurize(texts, self.vocab) @ self.weights + self.bias, axis=1)


def fit_weights(
    x: sparse.csr_matrix, y: np.ndarray, n_classes: int, l2: float, start: np.ndarray | None = None
) -> np.ndarray:
    """L-BFGS fit of the flattened weights and bias for one λ (from ``start`` when given)."""
    start = np.zeros(x.shape[1] * n_classes + n_classes) if start is None else start
    result = optimize.minimize(
        _loss_and_grad,
        start,
        args=(x, y, n_classes, l2),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": MAX_ITERATIONS, "ftol": TOLERANCE},
    )
    return result.x


def fit_bag_of_words(
    train_texts: Sequence[str],
    train_labels: Sequence[int],
    dev_texts: Sequence[str],
    dev_labels: Sequence[int],
    n_classes: int,
    grid: Sequence[float] = L2_GRID,
) -> BagOfWords:
    """Fit one classifier per λ of ``grid`` on train (strongest first, each warm-started from the previous,
    stronger one) and keep the λ with the best dev accuracy, a tie keeping the stronger λ. The whole grid is
    searched: dev accuracy need not fall monotonically as λ weakens (a rare but decisive n-gram can overtake
    a frequent, noisy one only at a small λ), so no early stop. ``dev_accuracy`` records every λ's dev
    accuracy; without dev examples only the strongest λ is fitted and kept."""
    vocab = ngram_vocabulary(train_texts)
    x, y = featurize(train_texts, vocab), np.asarray(train_labels, dtype=np.int64)
    x_dev, y_dev = featurize(dev_texts, vocab), np.asarray(dev_labels, dtype=np.int64)
    f = x.shape[1]
    best: tuple[float, float, np.ndarray] | None = None
    scores: dict[float, float] = {}
    params = None
    for l2 in sorted(grid, reverse=True):  # strongest first, whatever order the grid is given in
        params = fit_weights(x, y, n_classes, l2, params)
        w, bias = params[: f * n_classes].reshape(f, n_classes), params[f * n_classes :]
        accuracy = 100 * float(np.mean(np.argmax(x_dev @ w + bias, axis=1) == y_dev)) if y_dev.size else float("nan")
        scores[l2] = accuracy
        if best is None or accuracy > best[1]:  # strictly better: a tie keeps the stronger λ found first
            best = (l2, accuracy, params.copy())
        if not y_dev.size:
            break
    if best is None:
        raise ValueError("fit_bag_of_words needs a non-empty λ grid")
    l2, _, params = best
    return BagOfWords(vocab, params[: f * n_classes].reshape(f, n_classes), params[f * n_classes :], l2, scores)
