"""The nearest-noun generalisation split of the agreement items (``data.agreement_split: nearest_noun``):
attractor-nearest items only in test, none in train or dev; the balanced split unchanged; the split in the
data digest and its default out of old records; the config of the main job's task at both sizes."""

import hashlib
import json
from collections import Counter
from dataclasses import replace

import pytest
from agreement_items import candidates

from parserfree.distill.config import ConfigError, ExperimentConfig, load_config
from parserfree.distill.data import agreement, agreement_views
from parserfree.distill.data.agreement import other_number
from parserfree.distill.data.agreement_splits import assign_splits, cue_free_cell
from parserfree.distill.data.agreement_views import agreement_examples
from parserfree.distill.data.datasets import DataConfig, load_dataset
from parserfree.distill.fingerprints import data_digest, flatten, without_added_at_their_old_value
from parserfree.reports.slices import GROUPS

FRACTIONS = [0.8, 0.1, 0.1]
BALANCES = agreement.TRAIN_BALANCES


def mixed_candidates() -> list[agreement.Candidate]:
    """Fixture candidates where the nearest noun and the attractors part ways: a quarter of those with
    attractors have a nearest noun of the subject's number, and some without attractors are misled (a
    compound modifier of the other number right before the verb)."""
    out = []
    for i, c in enumerate(candidates(n0=1200, n1=400, n2=150)):
        if c.attractors and i % 4 == 0:
            c = replace(c, nearest_noun_number=c.subject_number)
        elif not c.attractors and i % 25 == 0:
            c = replace(c, nearest_noun_number=other_number(c.subject_number))
        out.append(c)
    return out


@pytest.mark.parametrize("balance", BALANCES)
def test_attractor_nearest_item_never_leaks_into_train_or_dev(balance):
    cands = mixed_candidates()
    splits = assign_splits(cands, FRACTIONS, balance, "nearest_noun")
    held = [c for c, s in zip(cands, splits) if s in ("train", "dev")]
    assert held and set(splits) - {""} == {"train", "dev", "test"}
    assert not [c for c in held if c.nearest_noun_is_attractor]
    assert any(c.attractors for c, s in zip(cands, splits) if s == "train")  # by the nearest noun, not attractors


@pytest.mark.parametrize("balance", BALANCES)
def test_no_item_whose_nearest_noun_has_the_subjects_number_lands_in_test(balance):
    cands = mixed_candidates()
    splits = assign_splits(cands, FRACTIONS, balance, "nearest_noun")
    test = [c for c, s in zip(cands, splits) if s == "test"]
    assert test and all(c.nearest_noun_is_attractor for c in test)
    assert any(not c.attractors for c in test)  # a misled item without attractors is still misled


def test_test_split_takes_every_misled_sentence_balancing_keeps_balanced_by_number_per_cell():
    cands = mixed_candidates()
    splits = assign_splits(cands, FRACTIONS, "none", "nearest_noun")
    misled = Counter((cue_free_cell(c), c.subject_number) for c in cands if c.nearest_noun_is_attractor)
    cells = {cell for cell, _ in misled}
    test = Counter((cue_free_cell(c), c.subject_number) for c, s in zip(cands, splits) if s == "test")
    for cell in cells:
        kept = min(misled[cell, "sg"], misled[cell, "pl"])
        assert test[cell, "sg"] == test[cell, "pl"] == kept


# agreement_examples of the fixture's candidates() as the code gave them before data.agreement_split existed:
# (text, label, source, split, columns) of every item, sha256. A change of the balanced split bumps
# BALANCE_VERSION and these digests together.
BEFORE = {
    ("cue", "grammaticality"): "2be6f7a048cac918",
    ("cue", "number"): "2b0eacb6e73ea3c8",
    ("number", "grammaticality"): "bf10573facbd00ce",
    ("number", "number"): "2101869e389fffca",
    ("none", "grammaticality"): "bfcb2bf90b501a6d",
    ("none", "number"): "965a7c5bad0cdac7",
}


@pytest.mark.parametrize(("balance", "task"), list(BEFORE))
def test_default_split_gives_exactly_the_items_it_gave_before_the_setting(balance, task):
    cands = candidates()
    default = agreement_examples(cands, FRACTIONS, False, balance, task)
    blob = json.dumps([(e.text, e.label, e.source, e.split, e.columns) for e in default])
    assert hashlib.sha256(blob.encode()).hexdigest()[:16] == BEFORE[balance, task]
    named = agreement_examples(cands, FRACTIONS, False, balance, task, "balanced")
    assert [(e.source, e.split) for e in named] == [(e.source, e.split) for e in default]


@pytest.mark.parametrize("dataset", ["agreement", "agreement-number"])
def test_split_setting_is_in_the_data_digest_so_a_stale_split_is_never_reused(monkeypatch, dataset):
    monkeypatch.setattr(agreement_views, "digest", lambda cache_dir, archive, text=None: {"text": "fixed"})
    balanced, *others = (data_digest(DataConfig(dataset=dataset, agreement_split=s)) for s in agreement.SPLIT_RULES)
    assert len({str(d) for d in (balanced, *others)}) == len(agreement.SPLIT_RULES)  # each split its own digest
    assert balanced == {"text": "fixed", "columns_version": agreement.COLUMNS_VERSION, "task": balanced["task"]}


def test_split_setting_at_its_default_leaves_old_records_valid():
    settings = ExperimentConfig().to_dict()
    assert "data.agreement_split" not in flatten(without_added_at_their_old_value(settings))
    settings["data"]["agreement_split"] = "nearest_noun"
    assert flatten(without_added_at_their_old_value(settings))["data.agreement_split"] == "nearest_noun"


def test_unknown_split_is_a_config_error_naming_the_key():
    with pytest.raises(ConfigError, match=r"data\.agreement_split='nearest'"):
        DataConfig(dataset="agreement", agreement_split="nearest").validate()
    with pytest.raises(ValueError, match="data.agreement_split"):
        assign_splits(candidates(), FRACTIONS, "cue", "nearest")


@pytest.mark.parametrize("dataset", ["agreement", "agreement-number"])
def test_split_setting_reaches_the_loaded_dataset_and_the_reports_nearest_noun_slice(monkeypatch, tmp_path, dataset):
    monkeypatch.setattr(
        agreement, "build_candidates", lambda cache_dir=None, archive=None, progress=True, text=None: mixed_candidates()
    )
    config = DataConfig(
        dataset=dataset,
        cache_dir=str(tmp_path),
        agreement_split="nearest_noun",
        agreement_train_balance="none",
    )
    ds = load_dataset(config)
    bucket = GROUPS["nearest_noun"].bucket_of  # the report's slice: one rule with the split
    assert {bucket(e.columns) for e in ds.splits["test"]} == {"attractor"}
    assert {bucket(e.columns) for s in ("train", "dev") for e in ds.splits[s]} == {"subject's number"}


@pytest.mark.parametrize("size", ["small", "base"])
def test_nearest_noun_task_is_the_main_agreement_task_on_the_generalisation_split(size):
    main = load_config("configs/main/agreement.yaml", size=size)
    nearest = load_config("configs/main/agreement_nearest_noun.yaml", size=size)
    assert (main.data.agreement_split, nearest.data.agreement_split) == ("balanced", "nearest_noun")
    nearest.data.agreement_split = main.data.agreement_split
    assert nearest.to_dict() == main.to_dict()  # rows, compare_datasets, sizes: the main job's
    assert nearest.run.recipes == ["no_syntax", "locality", "parser_fed_twin", "parser_free"]
