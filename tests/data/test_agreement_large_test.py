"""The large-test split of the agreement items (``data.agreement_split: large_test``): more test sentences
than the balanced split from the same candidates, each test cell balanced on subject number, the targets
and the half-a-bucket cap kept; the job's config at the base size."""

from collections import Counter

import pytest
from agreement_items import candidates

from parserfree.distill.config import load_config
from parserfree.distill.data import agreement_splits
from parserfree.distill.data.agreement import attractor_bucket
from parserfree.distill.data.agreement_splits import assign_splits, cue_free_cell
from parserfree.distill.data.datasets import DataConfig

FRACTIONS = [0.8, 0.1, 0.1]


def _test_count(split: str, balance: str = "none") -> Counter:
    cands = candidates(n0=1200, n1=400, n2=150)
    splits = assign_splits(cands, FRACTIONS, balance, split)
    return Counter(attractor_bucket(c.attractors) for c, s in zip(cands, splits) if s == "test")


def test_large_test_holds_more_test_sentences_than_the_balanced_split_of_the_same_candidates():
    large, balanced = _test_count("large_test"), _test_count("balanced")
    assert sum(large.values()) > 1.2 * sum(balanced.values())
    assert all(large[b] >= balanced[b] for b in balanced)


@pytest.mark.parametrize("balance", ["cue", "number", "none"])
def test_large_test_and_dev_cells_are_balanced_on_subject_number(balance):
    cands = candidates(n0=1200, n1=400, n2=150)
    splits = assign_splits(cands, FRACTIONS, balance, "large_test")
    assert set(splits) - {""} == {"train", "dev", "test"}
    test = Counter((cue_free_cell(c), c.subject_number) for c, s in zip(cands, splits) if s == "test")
    for cell in {cell for cell, _ in test}:
        assert test[cell, "sg"] == test[cell, "pl"]
    dev = Counter((c.cell, c.subject_number) for c, s in zip(cands, splits) if s == "dev")
    assert dev and all(dev[cell, "sg"] == dev[cell, "pl"] for cell, _ in dev)


def test_large_test_takes_at_most_half_of_a_bucket_and_stops_at_its_target(monkeypatch):
    cands = candidates(n0=1200, n1=400, n2=150)
    units = agreement_splits._units_by_bucket(cands, agreement_splits.balanced_units(cands, None, cue_free_cell))
    capped = _test_count("large_test")
    assert all(capped[b] <= len(units[b]) + 1 for b in units)  # half of 2 sentences per unit, rounded
    monkeypatch.setitem(agreement_splits.LARGE_TEST_TARGETS, "0", 40)
    assert _test_count("large_test")["0"] == 40


def test_large_test_config_is_the_main_agreement_task_on_nine_corpora_with_its_training_size():
    main = load_config("configs/main/agreement.yaml", size="base")
    large = load_config("configs/main/agreement_large_test.yaml", size="base")
    assert (large.data.agreement_split, large.data.builtin_corpora) == ("large_test", None)
    assert large.encoder.pretrained == "builtin:minilm-l6" and 0 < large.data.train_fraction < 1
    large.data.agreement_split, large.data.builtin_corpora = main.data.agreement_split, main.data.builtin_corpora
    large.data.train_fraction, large.run.recipes = main.data.train_fraction, main.run.recipes
    assert large.to_dict() == main.to_dict()  # everything else is the main job's task at the base size
    DataConfig(**{"dataset": "agreement-number", "agreement_split": "large_test"}).validate()
