"""The bag-of-words baseline: the choice of λ on dev (the whole grid is searched, not stopped at the first dip)
and n-gram columns that are the same in every run."""

from __future__ import annotations

from parserfree.comparison.bag_of_words import L2_GRID, fit_bag_of_words, ngram_vocabulary


def test_bag_of_words_searches_the_whole_grid_so_a_small_penalty_wins_after_a_worse_middle_one():
    """Train: 'great' is 75 % positive over 40 texts, 'refund' (5 texts) is always negative, 'plain' fills a
    negative majority. Dev wants 'great' alone → 1 but 'great refund' → 0. At λ 10⁻¹ the weights shrink and
    the bias says 0 everywhere (3 of 4 right); at 10⁻² and 10⁻³ 'great' outgrows the bias but the rare
    'refund' is still shrunk (1 of 4); only from 10⁻⁴ on does 'refund' outweigh 'great' (4 of 4). An early
    stop at the first λ worse than the best so far kept 10⁻¹."""
    train = ["great"] * 40 + ["plain"] * 300 + ["refund"] * 5
    labels = [1] * 30 + [0] * 10 + [0] * 300 + [0] * 5
    dev, dev_labels = ["great refund"] * 3 + ["great"], [0, 0, 0, 1]
    model = fit_bag_of_words(train, labels, dev, dev_labels, 2)
    assert L2_GRID[-1] == 1e-6
    assert model.dev_accuracy == {1e-1: 75.0, 1e-2: 25.0, 1e-3: 25.0, 1e-4: 100.0, 1e-5: 100.0, 1e-6: 100.0}
    assert model.l2 == 1e-4  # the best on dev; 10⁻⁵ and 10⁻⁶ tie with it and the stronger is kept
    assert model.probabilities(dev).argmax(1).tolist() == dev_labels


def test_bag_of_words_breaks_a_dev_tie_towards_the_stronger_penalty_whatever_the_grid_order():
    """Train agrees with dev at every λ here (100 % on dev for both): the stronger λ is kept."""
    train = ["good film"] * 7 + ["bad film"] * 3
    labels = [1] * 7 + [0] * 3
    model = fit_bag_of_words(train, labels, ["good day"], [1], 2, grid=(1e-4, 1e-1))
    assert model.dev_accuracy == {1e-1: 100.0, 1e-4: 100.0} and model.l2 == 1e-1


def test_the_ngram_columns_follow_the_texts_order_not_the_processes_string_hashes():
    """The vocabulary was built from a set of each text's n-grams, whose order follows Python's per-process
    string hashes: the columns, and with them the fitted weights and a few borderline predictions, differed
    between two runs of the same comparison (the main job's bag of words read 71.76 or 71.88)."""
    words = [f"w{k:02d}" for k in range(40)]
    text = " ".join(words)
    vocab = ngram_vocabulary([text, text])
    expected = words + [f"{a} {b}" for a, b in zip(words, words[1:])]
    assert list(vocab) == expected
