"""The agreement dataset: verb flips, candidate extraction from hand-made tagged sentences, the split,
label balance, loading through DataConfig, and the resumable tagging cache."""

from collections import Counter

import pytest

from parserfree.distill import agreement, tagging
from parserfree.distill.agreement import Candidate, agreement_examples, assign_splits, find_candidate
from parserfree.distill.datasets import DataConfig, describe, load_dataset
from parserfree.distill.inflection import flip_verb
from parserfree.distill.tagging import TaggedSentence, tag_cached


def sentence(spec: str) -> TaggedSentence:
    """'word/TAG/dep/head ...' (head: 0-based index; the root points to itself), a space after every word."""
    parts = [t.split("/") for t in spec.split()]
    return TaggedSentence(tuple(p[0] for p in parts), tuple(True for _ in parts), tuple(p[1] for p in parts),
                          tuple(p[2] for p in parts), tuple(int(p[3]) for p in parts))


def test_flip_verb_handles_be_have_do_by_table_and_other_verbs_by_lemma():
    assert [flip_verb(w, t) for w, t in [("is", "VBZ"), ("Was", "VBD"), ("were", "VBD"), ("has", "VBZ"), ("does", "VBZ"), ("do", "VBP")]] == \
        ["are", "Were", "was", "have", "do", "does"]
    assert [flip_verb(w, t) for w, t in [("runs", "VBZ"), ("carry", "VBP"), ("goes", "VBZ"), ("SEEMS", "VBZ")]] == ["run", "carries", "go", "SEEM"]
    assert [flip_verb(w, t) for w, t in [("'s", "VBZ"), ("am", "VBP"), ("ran", "VBD"), ("be", "VBP")]] == [None, None, None, None]


def test_auxiliary_takes_the_subject_of_the_verb_it_serves():
    c = find_candidate(sentence("The/DT/det/1 dogs/NNS/nsubj/3 are/VBP/aux/3 running/VBG/ROOT/3 ./././3"), "test")
    assert (c.sentence, c.flipped, c.distance, c.attractors) == ("The dogs are running .", "The dogs is running .", 1, 0)


def test_attractors_are_nouns_of_the_other_number_between_subject_and_verb():
    s = sentence("The/DT/det/1 key/NN/nsubj/8 to/IN/prep/1 the/DT/det/5 Sports/NNPS/compound/5 cabinets/NNS/pobj/2 "
                 ",/,/punct/8 Smith/NNP/npadvmod/8 is/VBZ/ROOT/8 rusty/JJ/acomp/8")
    c = find_candidate(s, "test")
    assert c.attractors == 1  # cabinets; "Sports" only modifies it; Smith is singular like key
    assert c.distance == 6  # to the Sports cabinets Smith is — the comma is not a word
    assert c.flipped == "The key to the Sports cabinets , Smith are rusty"


def test_first_verb_with_a_preceding_noun_subject_is_taken_not_the_first_verb():
    s = sentence("He/PRP/nsubj/1 says/VBZ/ROOT/1 the/DT/det/3 dogs/NNS/nsubj/4 bark/VBP/ccomp/1")
    assert find_candidate(s, "test").flipped == "He says the dogs barks"


@pytest.mark.parametrize("spec", [
    "The/DT/det/1 cat/NN/nsubj/5 and/CC/cc/1 the/DT/det/4 dog/NN/conj/1 are/VBP/ROOT/5",  # coordinated subject
    "Here/RB/advmod/1 is/VBZ/ROOT/1 the/DT/det/3 key/NN/nsubj/1",  # subject after the verb
    "The/DT/det/1 police/NN/nsubj/2 are/VBP/ROOT/2 here/RB/advmod/2",  # tags disagree in number
    "The/DT/det/1 film/NN/nsubj/2 's/VBZ/ROOT/2 good/JJ/acomp/2",  # a clitic cannot be flipped
])
def test_sentences_without_a_reliable_agreement_verb_give_no_candidate(spec):
    assert find_candidate(sentence(spec), "test") is None


def test_sentences_longer_than_max_words_give_no_candidate():
    head = "The/DT/det/1 dogs/NNS/nsubj/2 bark/VBP/ROOT/2"
    assert find_candidate(sentence(head), "test") is not None
    tail = " ".join("loudly/RB/advmod/2" for _ in range(agreement.MAX_WORDS - 2))
    assert find_candidate(sentence(f"{head} {tail}"), "test") is None


def candidates(n0=1000, n1=100, n2=50):
    out = []
    for i in range(n0 + n1 + n2):
        attractors = 0 if i < n0 else 1 if i < n0 + n1 else 2
        out.append(Candidate(f"the dog number {i} barks", f"the dog number {i} bark", attractors, 1 + i % 9, "src"))
    return out


def test_test_split_gets_the_minimum_of_attractor_items_the_data_allows():
    cands = candidates()
    splits = assign_splits(cands, [0.8, 0.1, 0.1])
    test = Counter(agreement.attractor_bucket(c.attractors) for c, s in zip(cands, splits) if s == "test")
    assert test["1"] + test["2+"] == 75  # 10 % would be 15; 300 asked, at most half of the 150 given
    assert test["0"] == 100 and test["1"] == 50 and test["2+"] == 25  # stratified: 1 and 2+ in proportion
    assert splits == assign_splits(cands, [0.8, 0.1, 0.1])  # deterministic
    many = candidates(n0=20000, n1=3000, n2=1000)
    test_many = sum(c.attractors > 0 and s == "test" for c, s in zip(many, assign_splits(many, [0.8, 0.1, 0.1])))
    assert test_many == 400  # the proportional share when it exceeds the minimum


def test_kept_and_flipped_are_balanced_in_every_split_attractor_and_distance_cell():
    examples = agreement_examples(candidates(), [0.8, 0.1, 0.1])
    cells = Counter()
    for e in examples:
        cell = (e.split, agreement.attractor_bucket(e.columns["attractors"]), agreement.distance_bucket(e.columns["distance"]))
        cells[cell] += 1 if e.label == "grammatical" else -1
    assert all(abs(v) <= 1 for v in cells.values())
    assert all(e.text.endswith("barks") == (e.label == "grammatical") for e in examples)


def test_agreement_loads_as_binary_with_grammatical_as_label_1_and_keeps_its_columns(monkeypatch, tmp_path):
    monkeypatch.setattr(agreement, "build_candidates", lambda cache_dir=None, archive=None, progress=True: candidates())
    ds = load_dataset(DataConfig(dataset="agreement", task="binary", cache_dir=str(tmp_path)))
    assert ds.label_names == ["ungrammatical", "grammatical"]
    assert all(e.label == int(e.text.endswith("barks")) for e in ds.all_examples())
    test = ds.splits["test"]
    assert sum(e.columns["attractors"] > 0 for e in test) == 75 and all(e.columns["source"] == "src" for e in test)
    summary = describe(ds)["splits"]["test"]
    assert summary["attractors"] == {"0": 100, "1": 50, "2+": 25} and sum(summary["distance"].values()) == len(test)


class CountingPipeline:
    """A blank English pipeline with a sentencizer (no model needed) that counts the texts it sees."""

    def __init__(self):
        import spacy

        self.nlp = spacy.blank("en")
        self.nlp.add_pipe("sentencizer")
        self.seen = 0

    def pipe(self, texts, batch_size=256, n_process=1):
        for doc in self.nlp.pipe(texts, batch_size=batch_size):
            self.seen += 1
            yield doc


def test_tagging_cache_resumes_and_retags_only_a_damaged_chunk(monkeypatch, tmp_path):
    pipe = CountingPipeline()
    monkeypatch.setattr(tagging, "load_pipeline", lambda model, exclude=None: pipe)
    monkeypatch.setattr(tagging, "CHUNK_SIZE", 2)
    texts = ["One dog. Two cats.", "A b c.", "Last one here."]
    first = tag_cached(texts, tmp_path, progress=False)
    assert pipe.seen == 3 and [len(d) for d in first] == [2, 1, 1]
    assert tag_cached(texts, tmp_path, progress=False) == first and pipe.seen == 3  # all reused
    chunk = next((tmp_path / "tagged").glob("*/chunk-00001.json"))
    chunk.write_text(chunk.read_text()[:-5])  # a torn file
    assert tag_cached(texts, tmp_path, progress=False) == first and pipe.seen == 4  # only that chunk again
    assert first[0][1].text() == "Two cats."
