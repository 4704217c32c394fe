"""Shortcut baselines: the cheap rules a model's accuracy must beat before it says anything about syntax.

Rows of kind "baseline" in every classification report, fitted on the training split of the dataset the
models were trained on (the same share of it) and scored on every compared domain whose examples carry
what they read. ``majority``: the most frequent training label. ``bag_of_words``: a linear model over
1–2-grams (``parserfree.comparison.bag_of_words``, λ chosen on dev over its whole grid). On agreement items (columns of
``distill/data/agreement.py``) also ``verb_form`` (grammaticality view only): the shown verb form, lower-cased, →
its majority label on train (an unseen form → the training majority); and the number rules, each a guess at
the subject's number from the surface — ``prev_word``: plural iff the word before the verb ends in "s";
``nearest_noun``: the number (spaCy's tag) of the nearest noun before the verb, the textbook heuristic;
``nearest_noun_s``: that noun is plural iff it ends in "s"; ``first_noun``: the number of the sentence's
first noun. In the number view a rule's guess is the label; in the grammaticality view a version is
judged grammatical iff its shown verb has the guessed number. The nouns' tags are those of the source
(grammatical) sentence, so in the grammaticality view a rule never sees the parser react to the error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..distill.data.agreement import (
    FIRST_NOUN_NUMBER,
    LABEL_NAMES,
    NEAREST_NOUN,
    NEAREST_NOUN_NUMBER,
    NUMBER_LABELS,
    NUMBERS,
    PREV_WORD,
    VERB,
    VERB_NUMBER,
    ends_in_s,
)
from ..distill.data.datasets import Example
from .bag_of_words import fit_bag_of_words

# examples → (class ids N, class probabilities N×C or None for a rule without probabilities)
Predict = Callable[[Sequence[Example]], tuple[np.ndarray, np.ndarray | None]]


@dataclass(frozen=True)
class Baseline:
    """A fitted shortcut baseline: its report name, what it does, the columns it reads and its predictor."""

    name: str
    description: str
    columns: tuple[str, ...]
    predict: Predict

    def applies_to(self, examples: Sequence[Example]) -> bool:
        """Every example carries the columns the baseline reads."""
        return carries(examples, self.columns)


def carries(examples: Sequence[Example], columns: Sequence[str]) -> bool:
    """There are examples and every one carries all of ``columns``."""
    return bool(examples) and all(
        not columns or (e.columns is not None and all(c in e.columns for c in columns)) for e in examples
    )


def _class_ids(examples: Sequence[Example]) -> list[int]:
    """The labels of classification examples: class ids (``Example.label`` is typed for every task)."""
    return [int(e.label) for e in examples]


def _counts(labels: Sequence[int], n_classes: int) -> np.ndarray:
    return np.bincount(np.asarray(labels, dtype=np.int64), minlength=n_classes).astype(float)


def majority(train: Sequence[Example], n_classes: int) -> Baseline:
    """The most frequent training label for every item; probabilities are the training prior."""
    prior = _counts(_class_ids(train), n_classes)
    prior /= prior.sum()
    label = int(np.argmax(prior))

    def predict(examples):
        return np.full(len(examples), label), np.tile(prior, (len(examples), 1))

    return Baseline("majority", f"the most frequent training label ({label}) for every item", (), predict)


def verb_form(train: Sequence[Example], n_classes: int) -> Baseline:
    """The shown verb form (lower-cased) → its majority training label (ties and unseen forms → the
    training majority); probabilities are the form's training label shares."""
    fallback = majority(train, n_classes)
    labels = _class_ids(train)
    prior = _counts(labels, n_classes)
    by_form: dict[str, np.ndarray] = {}
    for e, label in zip(train, labels):
        by_form.setdefault(str(e.columns[VERB]).lower(), np.zeros(n_classes))[label] += 1
    top = int(np.argmax(prior))

    def predict(examples):
        preds, probs = np.empty(len(examples), dtype=np.int64), np.empty((len(examples), n_classes))
        for i, e in enumerate(examples):
            counts = by_form.get(str(e.columns[VERB]).lower())
            if counts is None:
                preds[i], probs[i] = fallback.predict([e])[0][0], prior / prior.sum()
                continue
            best = np.flatnonzero(counts == counts.max())
            preds[i] = top if top in best else int(best[0])
            probs[i] = counts / counts.sum()
        return preds, probs

    return Baseline("verb_form", "the shown verb form → its majority label on train", (VERB,), predict)


def number_rule(
    name: str,
    description: str,
    columns: tuple[str, ...],
    number_of: Callable[[Example], str],
    label_names: Sequence[str],
) -> Baseline | None:
    """A rule guessing the subject's number ('sg' / 'pl') as a baseline of either agreement view: the guess is
    the label (number view), or grammatical iff the shown verb has that number (grammaticality view); None
    for other labels."""
    if sorted(label_names) == sorted(NUMBER_LABELS):
        ids = {n: label_names.index(NUMBER_LABELS[k]) for k, n in enumerate(NUMBERS)}

        def predict(examples):
            return np.array([ids[number_of(e)] for e in examples], dtype=np.int64), None

        return Baseline(name, description, columns, predict)
    if sorted(label_names) == sorted(LABEL_NAMES):
        grammatical, ungrammatical = label_names.index(LABEL_NAMES[1]), label_names.index(LABEL_NAMES[0])

        def judge(examples):
            rule = [number_of(e) == e.columns[VERB_NUMBER] for e in examples]
            return np.where(rule, grammatical, ungrammatical), None

        return Baseline(
            name, f"grammatical iff the verb's number is the guess: {description}", (*columns, VERB_NUMBER), judge
        )
    return None


def _plural_if_s(column: str) -> Callable[[Example], str]:
    return lambda e: "pl" if ends_in_s(str(e.columns[column])) else "sg"


def _column(column: str) -> Callable[[Example], str]:
    return lambda e: str(e.columns[column])


# name → (what it guesses, the column it reads, how): the number rules of both agreement views
NUMBER_RULES = {
    "prev_word": ('plural iff the word before the verb ends in "s"', PREV_WORD, _plural_if_s),
    "nearest_noun": ("the number (tag) of the nearest noun before the verb", NEAREST_NOUN_NUMBER, _column),
    "nearest_noun_s": ('the nearest noun before the verb is plural iff it ends in "s"', NEAREST_NOUN, _plural_if_s),
    "first_noun": ("the number (tag) of the first noun", FIRST_NOUN_NUMBER, _column),
}


def bag_of_words(train: Sequence[Example], dev: Sequence[Example], n_classes: int) -> Baseline:
    """Multinomial logistic regression over lower-cased 1–2-grams, λ chosen on dev."""
    model = fit_bag_of_words(
        [e.text for e in train], _class_ids(train), [e.text for e in dev], _class_ids(dev), n_classes
    )

    def predict(examples):
        probs = model.probabilities([e.text for e in examples])
        return probs.argmax(1), probs

    return Baseline("bag_of_words", f"logistic regression on 1–2-grams (λ {model.l2:g}, chosen on dev)", (), predict)


def named_rule(name: str, label_names: Sequence[str]) -> Baseline | None:
    """The number rule ``name`` of ``NUMBER_RULES`` for these labels (None unless they are an agreement view's)."""
    description, column, how = NUMBER_RULES[name]
    return number_rule(name, description, (column,), how(column), label_names)


BASELINE_NAMES = ("majority", "verb_form", *NUMBER_RULES, "bag_of_words")


def fit_baselines(train: Sequence[Example], dev: Sequence[Example], label_names: Sequence[str]) -> list[Baseline]:
    """Every shortcut baseline the training examples allow (those reading columns need them on every
    training example), in ``BASELINE_NAMES`` order."""
    n_classes = max(2, len(label_names))
    out = [majority(train, n_classes)]
    if carries(train, (VERB,)):
        out.append(verb_form(train, n_classes))
    for name in NUMBER_RULES:
        rule = named_rule(name, label_names)
        if rule is not None and rule.applies_to(train):
            out.append(rule)
    out.append(bag_of_words(train, dev, n_classes))
    return out
