"""Silver trees: pre-training sentences with spaCy's trees, with every task's held-out text left out."""

from collections import Counter

import pytest

from parserfree.distill import agreement, silver_trees
from parserfree.distill.agreement import Candidate
from parserfree.distill.datasets import DataConfig, load_dataset, split_of
from parserfree.distill.readers import RawExample
from parserfree.distill.tagging import TaggedSentence

FRACTIONS = [0.8, 0.1, 0.1]


def tagged(text: str) -> TaggedSentence:
    """A flat tree over the words of ``text`` (every word attached to the first), spaces after each word."""
    words = tuple(text.split())
    return TaggedSentence(words, tuple(True for _ in words), tuple("NN" for _ in words), tuple("dep" for _ in words),
                          tuple(0 for _ in words))


@pytest.fixture
def corpus(monkeypatch):
    """One corpus of 400 one-sentence texts; agreement candidates made from the first 200 of them."""
    texts = [f"sentence number {i} is here ." for i in range(400)]
    raws = [RawExample(t, 1.0, f"src:{i}") for i, t in enumerate(texts)]
    cands = [Candidate(t, t.replace(" is ", " are "), 0, 2, "src") for t in texts[:200]]
    monkeypatch.setattr(agreement, "SOURCES", ("src",))
    monkeypatch.setattr(agreement, "corpus_raws", lambda name, cache_dir, archive: raws)
    monkeypatch.setattr(agreement, "source_texts", lambda cache_dir, archive: [("src", t) for t in texts])
    monkeypatch.setattr(agreement, "tagged_sources", lambda pairs, cache, model=None, progress=True: [[tagged(t)] for _, t in pairs])
    monkeypatch.setattr(agreement, "build_candidates", lambda cache_dir=None, archive=None, progress=True: cands)
    return texts, cands


def test_silver_trees_leave_out_corpus_dev_test_texts_and_agreement_dev_test_sources(corpus, tmp_path):
    texts, cands = corpus
    raws = silver_trees.load_silver_trees(tmp_path, None, FRACTIONS, progress=False)
    kept = {r.text for r in raws}
    corpus_held = {t for t in texts if split_of(t, FRACTIONS) != "train"}
    item_held = {c.sentence for c, s in zip(cands, agreement.assign_splits(cands, FRACTIONS)) if s != "train"}
    assert corpus_held and item_held - corpus_held  # both rules have something of their own to leave out
    assert not kept & (corpus_held | item_held)
    assert kept == set(texts) - corpus_held - item_held


def test_silver_trees_split_is_not_all_train_although_every_kept_text_lies_in_train(corpus, tmp_path):
    raws = silver_trees.load_silver_trees(tmp_path, None, FRACTIONS, progress=False)
    counts = Counter(r.split for r in raws)
    assert counts["dev"] >= 0.05 * len(raws) and counts["test"] >= 0.05 * len(raws)


def test_silver_trees_load_with_their_trees_so_pre_training_parses_nothing(corpus, tmp_path):
    ds = load_dataset(DataConfig(dataset="silver-trees", task="none", cache_dir=str(tmp_path)))
    example = ds.splits["train"][0]
    assert example.label is None and example.words == tuple(example.text.split())
    assert example.heads == tuple(0 for _ in example.words) and example.punct[-1] and not any(example.punct[:-1])
    assert example.columns == {"corpus": "src", "deps": tuple("dep" for _ in example.words)}  # quality by domain, relation
