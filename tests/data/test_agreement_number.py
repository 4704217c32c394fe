"""Agreement's number view (``agreement-number``): the number-neutral text, one item per source sentence with
the subject's number as its label, the same split and balance as the grammaticality view, and the columns the
surface heuristics read."""

from collections import Counter

import pytest
from agreement_items import candidates

from parserfree.distill.data import agreement
from parserfree.distill.data.agreement import find_candidate
from parserfree.distill.data.agreement_views import agreement_examples
from parserfree.distill.data.datasets import DataConfig, load_dataset
from parserfree.distill.data.inflection import modal_form
from parserfree.distill.data.tagging import TaggedSentence


def sentence(spec: str, spaces: str | None = None) -> TaggedSentence:
    """'word/TAG/dep/head ...' (head: 0-based; the root points to itself); ``spaces``: '0'/'1' per word."""
    parts = [t.split("/") for t in spec.split()]
    return TaggedSentence(
        tuple(p[0] for p in parts),
        tuple(c == "1" for c in spaces) if spaces else tuple(True for _ in parts),
        tuple(p[1] for p in parts),
        tuple(p[2] for p in parts),
        tuple(int(p[3]) for p in parts),
    )


@pytest.mark.parametrize(
    "word, aux, after, expected",
    [
        ("are", False, "on", {0: "will be"}),
        ("laughs", False, ".", {0: "will laugh"}),
        ("has", True, "gone", {0: "will have"}),
        ("does", False, "tricks", {0: "will do"}),  # the main verb "do" keeps its base form
        ("does", True, "n't", {0: "will ", 1: "not"}),  # do-support vanishes: "doesn't like" → "will not like"
        ("Is", False, "not", {0: "Will ", 1: "not be"}),  # the negation stays after "will"
    ],
)
def test_modal_form_drops_do_support_and_keeps_a_negation_right_after_will(word, aux, after, expected):
    assert modal_form(word, aux, after) == expected


def test_candidate_records_the_neutral_text_and_the_nearest_and_first_nouns_before_the_verb():
    """ "The keys to the cabinet are here": the nearest noun is the attractor, the first one the subject."""
    s = sentence(
        "The/DT/det/1 keys/NNS/nsubj/5 to/IN/prep/1 the/DT/det/4 cabinet/NN/pobj/2 are/VBP/ROOT/5 here/RB/advmod/5"
    )
    c = find_candidate(s, "src")
    assert c.neutral == "The keys to the cabinet will be here"
    assert (c.nearest_noun, c.nearest_noun_number, c.first_noun_number) == ("cabinet", "sg", "pl")
    negated = sentence(
        "The/DT/det/1 dog/NN/nsubj/4 does/VBZ/aux/4 n't/RB/neg/4 bark/VB/ROOT/4 ./././4", "110111"
    )  # "doesn't": no space between the verb and the clitic
    assert find_candidate(negated, "src").neutral == "The dog will not bark ."


def test_number_view_has_one_text_per_source_sentence_with_the_subjects_number_and_no_shown_verb():
    cands = candidates()
    grammaticality = agreement_examples(cands, [0.8, 0.1, 0.1])
    number = agreement_examples(cands, [0.8, 0.1, 0.1], task="number")
    for split in ("dev", "test"):
        pairs = {e.columns["pair_id"] for e in grammaticality if e.split == split}
        items = [e for e in number if e.split == split]
        assert sorted(e.columns["pair_id"] for e in items) == sorted(pairs)  # the same sentences, one item each
    for e in number:
        assert e.label == agreement.NUMBER_LABELS[agreement.NUMBERS.index(e.columns["subject_number"])]
        assert set(e.columns) == set(agreement.NUMBER_COLUMNS) and " will " in f" {e.text} "
        assert not {"is", "are", "has", "was", "were", "runs", "seems", "does"} & set(
            e.text.split()
        )  # no form marked for number
    train = [e for e in number if e.split == "train"]
    assert len(train) == sum(1 for e in grammaticality if e.split == "train")  # one per training sentence


def test_number_view_test_split_is_balanced_by_the_builder_not_by_the_fixture():
    """The fixture's subjects are 73 % singular overall and unevenly so per attractor bucket; the builder's
    dev and test splits must still hold as many singular as plural subjects in every cell (attractors ×
    distance × cue), so the label prior and the -s cue score exactly 50 %."""
    cands = candidates(singular_share=0.85)
    assert Counter(c.subject_number for c in cands)["sg"] > 0.8 * len(cands)
    number = agreement_examples(cands, [0.8, 0.1, 0.1], task="number")
    for split in ("dev", "test"):
        items = [e for e in number if e.split == split]
        cells = Counter(
            (
                agreement.attractor_bucket(e.columns["attractors"]),
                agreement.distance_bucket(e.columns["distance"]),
                agreement.ends_in_s(e.columns["prev_word"]),
                e.columns["subject_number"],
            )
            for e in items
        )
        assert cells and all(n == cells[(*key[:3], agreement.other_number(key[3]))] for key, n in cells.items())
        assert Counter(e.label for e in items)["singular"] == len(items) / 2


def test_agreement_number_loads_with_singular_as_label_0(monkeypatch, tmp_path):
    monkeypatch.setattr(
        agreement, "build_candidates", lambda cache_dir=None, archive=None, progress=True, text=None: candidates()
    )
    ds = load_dataset(DataConfig(dataset="agreement-number", task="binary", cache_dir=str(tmp_path)))
    assert ds.label_names == ["singular", "plural"]
    assert {ds.label_names[e.label] for e in ds.splits["test"]} == {"singular", "plural"}
    for e in ds.all_examples():
        assert ds.label_names[e.label] == agreement.NUMBER_LABELS[agreement.NUMBERS.index(e.columns["subject_number"])]
