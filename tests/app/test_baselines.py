"""Shortcut baselines: what each rule predicts, that the bag of words reads 2-grams, that its λ is chosen on
dev, and which baselines a dataset gets."""

from __future__ import annotations

import numpy as np
import pytest

from parserfree.comparison.bag_of_words import fit_bag_of_words, ngrams
from parserfree.comparison.baselines import fit_baselines, majority, named_rule, verb_form
from parserfree.distill.data.agreement import LABEL_NAMES
from parserfree.distill.data.datasets import Example

GRAMMATICAL, UNGRAMMATICAL = LABEL_NAMES.index("grammatical"), LABEL_NAMES.index("ungrammatical")


def item(text: str, label: int, verb: str, number: str, prev: str) -> Example:
    return Example(
        text,
        label,
        "fixture",
        columns={
            "verb": verb,
            "verb_number": number,
            "prev_word": prev,
            "attractors": 0,
            "distance": 1,
            "pair_id": text,
        },
    )


def test_verb_form_lookup_takes_each_forms_majority_label_and_the_prior_for_unseen_forms():
    train = (
        [item("the dog is here", GRAMMATICAL, "is", "sg", "dog")] * 3
        + [item("the dogs is here", UNGRAMMATICAL, "is", "sg", "dogs")]
        + [item("the dog are here", UNGRAMMATICAL, "Are", "pl", "dog")] * 2
        + [item("the dogs are here", GRAMMATICAL, "are", "pl", "dogs")]
        + [item("the dog runs", GRAMMATICAL, "runs", "sg", "dog")]
    )
    lookup = verb_form(train, 2)
    test = [item("x", 0, "IS", "sg", "a"), item("x", 0, "are", "pl", "a"), item("x", 0, "barks", "sg", "a")]
    preds, probs = lookup.predict(test)
    assert preds.tolist() == [GRAMMATICAL, UNGRAMMATICAL, GRAMMATICAL]  # unseen "barks": the training majority (5 of 8)
    assert probs[0][GRAMMATICAL] == pytest.approx(3 / 4) and probs[1][UNGRAMMATICAL] == pytest.approx(2 / 3)
    assert probs[2][GRAMMATICAL] == pytest.approx(5 / 8)


def test_previous_word_rule_reads_a_final_s_as_plural():
    rule = named_rule("prev_word", list(LABEL_NAMES))
    test = [
        item("x", 0, "are", "pl", "dogs"),
        item("x", 0, "are", "pl", "dog"),
        item("x", 0, "is", "sg", ""),
        item("x", 0, "is", "sg", "boss"),
        item("x", 0, "is", "sg", "Cats"),
    ]
    preds, probs = rule.predict(test)
    assert preds.tolist() == [
        GRAMMATICAL,
        UNGRAMMATICAL,
        GRAMMATICAL,
        UNGRAMMATICAL,
        UNGRAMMATICAL,
    ]  # "boss": its blind spot
    assert probs is None
    assert named_rule("prev_word", ["negative", "positive"]) is None  # not agreement's labels


def test_majority_predicts_the_training_prior():
    train = [Example("a", 1, "f"), Example("b", 1, "f"), Example("c", 0, "f")]
    preds, probs = majority(train, 2).predict([Example("z", 0, "f")] * 2)
    assert preds.tolist() == [1, 1] and probs[0] == pytest.approx([1 / 3, 2 / 3])


def test_bag_of_words_reads_two_grams_that_no_one_gram_model_can_fit():
    """good → 1, bad → 0, not good → 0, not bad → 1: no weights on single words fit all four."""
    texts = ["good", "bad", "not good", "not bad"]
    labels = [1, 0, 0, 1]
    assert ngrams("Not  good!") == ["not", "good", "!", "not good", "good !"]
    model = fit_bag_of_words(texts * 5, labels * 5, texts, labels, 2)
    assert model.probabilities(texts).argmax(1).tolist() == labels
    assert model.dev_accuracy[model.l2] == 100.0


def test_bag_of_words_chooses_its_penalty_on_dev_not_on_train():
    """Train: 'good'/'bad' decide the label, 70 % positive. A dev set that is all positive but full of 'bad'
    wants the strongest penalty (weights shrink, the unpenalised bias predicts the majority); a dev set that
    agrees with train wants a weak one."""
    train = ["good film"] * 7 + ["bad film"] * 3
    labels = [1] * 7 + [0] * 3
    contrary = fit_bag_of_words(train, labels, ["bad day"] * 4, [1] * 4, 2, grid=(10.0, 1e-4))
    agreeing = fit_bag_of_words(train, labels, ["bad day", "good day"], [0, 1], 2, grid=(10.0, 1e-4))
    assert contrary.l2 == 10.0 and contrary.dev_accuracy == {10.0: 100.0, 1e-4: 0.0}
    assert agreeing.l2 == 1e-4 and agreeing.dev_accuracy[10.0] == 50.0


def test_agreement_data_gets_all_four_baselines_and_other_data_the_two_without_columns():
    agreement = [
        item(
            f"the dog{'s' * (i % 2)} {'are' if i % 3 else 'is'} here {i}",
            i % 2,
            "are" if i % 3 else "is",
            "pl" if i % 3 else "sg",
            "dogs" if i % 2 else "dog",
        )
        for i in range(12)
    ]
    names = [b.name for b in fit_baselines(agreement, agreement[:4], list(LABEL_NAMES))]
    assert names == ["majority", "verb_form", "prev_word", "bag_of_words"]
    sentiment = [Example(f"text {i} {'good' if i % 2 else 'bad'}", i % 2, "f") for i in range(12)]
    assert [b.name for b in fit_baselines(sentiment, sentiment[:4], ["negative", "positive"])] == [
        "majority",
        "bag_of_words",
    ]
    assert not fit_baselines(agreement, agreement[:4], list(LABEL_NAMES))[1].applies_to(sentiment)
    assert np.array_equal(
        fit_baselines(sentiment, sentiment, ["negative", "positive"])[1].predict(sentiment)[0], np.arange(12) % 2
    )


def test_baselines_that_read_no_column_apply_to_examples_without_columns():
    """A user's file carries no columns at all (Example.columns is None): majority and the bag of words still apply."""
    train = [Example(f"text {i} {'good' if i % 2 else 'bad'}", i % 2, "f") for i in range(12)]
    assert all(b.applies_to(train) for b in fit_baselines(train, train[:4], ["negative", "positive"]))
    assert not verb_form([item("the dog is", 1, "is", "sg", "dog")], 2).applies_to(train)
