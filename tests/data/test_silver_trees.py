"""Silver trees: pre-training sentences with spaCy's trees, with every task's held-out text left out
sentence by sentence, across corpora."""

from collections import Counter

import pytest

from parserfree.distill.data import agreement, builtin_text, silver_trees
from parserfree.distill.data.agreement_splits import assign_splits
from parserfree.distill.data.builtin_text import SourceText
from parserfree.distill.data.datasets import DataConfig, load_dataset
from parserfree.distill.data.readers import RawExample
from parserfree.distill.data.splits import split_of
from parserfree.distill.data.tagging import TaggedSentence

FRACTIONS = [0.8, 0.1, 0.1]


def tagged(sentence: str) -> TaggedSentence:
    """A flat tree over the words of one sentence (every word attached to the first), spaces after each word."""
    words = tuple(sentence.split())
    return TaggedSentence(
        words,
        tuple(True for _ in words),
        tuple("NN" for _ in words),
        tuple("dep" for _ in words),
        tuple(0 for _ in words),
    )


def sentences_of(text: str) -> list[str]:
    return [s.strip() + " ." for s in text.split(" .") if s.strip()]


@pytest.fixture
def corpora(monkeypatch):
    """Two corpora of multi-sentence texts. Corpus "b" repeats, as whole texts and inside longer texts, the
    sentences of corpus "a"'s held-out texts; agreement candidates come from the first sentences of "a"."""
    a = [f"sentence number {i} is here . and {i} more ." for i in range(300)]
    held_a = [t for t in a if split_of(t, FRACTIONS) != "train"]
    b = [f"other text {i} ." for i in range(300)]
    b += [sentences_of(t)[0] for t in held_a[:10]]  # a held-out text's sentence, alone, in a text of another corpus
    b += [f"prefix {k} . " + sentences_of(t)[1] for k, t in enumerate(held_a[10:20])]  # ... inside another text
    raws = {
        "a": [RawExample(t, 1.0, f"a:{i}") for i, t in enumerate(a)],
        "b": [RawExample(t, None, f"b:{i}") for i, t in enumerate(b)],
    }
    texts = tuple(SourceText(name, r.text) for name in ("a", "b") for r in raws[name])
    cands = [
        agreement.Candidate(s, s.replace(" is ", " are "), 0, 2, "a", ("sg", "pl")[i % 2], "is", "are", 3, str(i))
        for i, s in enumerate(sentences_of(t)[0] for t in a[:200])
    ]  # (the numbers only feed the balance)
    monkeypatch.setattr(builtin_text, "available_corpora", lambda cache_dir, archive, text=None: ("a", "b"))
    monkeypatch.setattr(builtin_text, "corpus_raws", lambda name, cache_dir, archive: raws[name])
    monkeypatch.setattr(builtin_text, "source_texts", lambda cache_dir, archive, text=None: texts)
    monkeypatch.setattr(
        builtin_text,
        "tagged_texts",
        lambda ts, cache, model=None, progress=True, tag_folder=None: [
            [tagged(s) for s in sentences_of(t.text)] for t in ts
        ],
    )
    monkeypatch.setattr(
        agreement, "build_candidates", lambda cache_dir=None, archive=None, progress=True, text=None: cands
    )
    return a, b, cands


def test_silver_trees_leave_out_every_sentence_of_held_out_text_in_any_corpus_and_agreement_sources(corpora, tmp_path):
    a, b, cands = corpora
    kept = {r.text for r in silver_trees.load_silver_trees(tmp_path, None, FRACTIONS, progress=False)}
    held_texts = {t for t in a + b if split_of(t, FRACTIONS) != "train"}
    held_sentences = {s for t in held_texts for s in sentences_of(t)} | held_texts
    item_held = {c.sentence for c, s in zip(cands, assign_splits(cands, FRACTIONS)) if s in ("dev", "test")}
    assert item_held - held_sentences  # the agreement rule has something of its own to leave out
    repeated = {sentences_of(t)[k] for k, t in ((0, t) for t in [x for x in a if x in held_texts][:10])}
    assert repeated & {s for t in b for s in sentences_of(t) if t not in held_texts}  # the fixture shows the risk
    assert not kept & (held_sentences | item_held)
    every = {s for t in a + b for s in sentences_of(t)}
    assert kept == every - held_sentences - item_held


def test_silver_trees_split_is_not_all_train_although_every_kept_text_lies_in_train(corpora, tmp_path):
    raws = silver_trees.load_silver_trees(tmp_path, None, FRACTIONS, progress=False)
    counts = Counter(r.split for r in raws)
    assert counts["dev"] > 0 and counts["test"] > 0 and counts["train"] >= 0.9 * len(raws)  # its own 95 / 2.5 / 2.5


def test_silver_trees_load_with_their_trees_so_pre_training_parses_nothing(corpora, tmp_path):
    ds = load_dataset(DataConfig(dataset="silver-trees", task="none", cache_dir=str(tmp_path)))
    example = ds.splits["train"][0]
    assert example.label is None and example.words == tuple(example.text.split())
    assert example.heads == tuple(0 for _ in example.words) and example.punct[-1] and not any(example.punct[:-1])
    assert example.columns == {"corpus": example.columns["corpus"], "deps": tuple("dep" for _ in example.words)}
    assert {e.columns["corpus"] for e in ds.all_examples()} == {"a", "b"}  # quality by domain


def test_french_silver_trees_leave_out_held_out_reviews_with_french_trees_and_no_english_task(monkeypatch, tmp_path):
    from parserfree.distill.data.builtin_text import FRENCH

    reviews = [[f"avis {r} phrase {k} ." for k in range(3)] for r in range(200)]
    raws = [RawExample(s, 1.0, f"fr:{r}", group=f"review{r}") for r, sentences in enumerate(reviews) for s in sentences]
    tagged_with = []

    def tag(ts, cache, model=None, progress=True, tag_folder=None):
        tagged_with.append((model, tag_folder))
        return [[tagged(t.text)] for t in ts]

    monkeypatch.setattr(
        builtin_text, "corpus_raws", lambda name, cache_dir, archive: raws if name == "fr-reviews" else ()
    )
    monkeypatch.setattr(builtin_text, "tagged_texts", tag)
    monkeypatch.setattr(
        agreement, "build_candidates", lambda *a, **k: pytest.fail("the English agreement task was built")
    )
    kept = silver_trees.load_silver_trees(tmp_path, None, FRACTIONS, progress=False, text=FRENCH)
    assert tagged_with == [(FRENCH.model, FRENCH.folder)]
    held = {s for r, sentences in enumerate(reviews) if split_of(f"review{r}", FRACTIONS) != "train" for s in sentences}
    assert held and {r.text for r in kept} == {s for sentences in reviews for s in sentences} - held
    assert {r.columns["corpus"] for r in kept} == {"fr-reviews"} and len({r.split for r in kept}) == 3
    assert silver_trees.digest(tmp_path, None, FRENCH.model, FRENCH)["text"]["tagger"]["model"] == FRENCH.model
    # the registry's silver-trees-fr is this French text, parsed by the French model
    from parserfree.distill.data.builtin import BUILTIN
    from parserfree.distill.data.datasets import DataConfig

    entry = BUILTIN["silver-trees-fr"]
    config = DataConfig(dataset="silver-trees-fr", task="none", cache_dir=str(tmp_path), split=FRACTIONS)
    assert entry.spacy_model == FRENCH.model and {r.text for r in entry.load(config)} == {r.text for r in kept}
