"""The ``parserfree`` spaCy component: doc.cats and the predicted tree on Docs, via nlp.pipe and spacy.load."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest
import spacy
from spacy import displacy

from parserfree.core.parse import DEFAULT_MODEL
from parserfree.export import BundleError, ParserFreeModel
from parserfree.export.predicted_tree import heads_from_distances
from parserfree.export.spacy_component import doc_words, set_tree
from parserfree.jobs.exporting import export_checkpoint


@pytest.fixture(scope="module")
def model(smoke_bundle):
    return ParserFreeModel.load(smoke_bundle[0], threads=1)


def make_nlp(bundle, **config) -> spacy.language.Language:
    nlp = spacy.blank("en")
    nlp.add_pipe("parserfree", config={"bundle": str(bundle), "threads": 1, **config})
    return nlp


@pytest.fixture(scope="module")
def nlp(smoke_bundle):
    return make_nlp(smoke_bundle[0])


def check_tree_per_sentence(doc, one_root: bool = False) -> None:
    """Every sentence is made of whole trees: each token's head in the sentence, no cycle, the roots (at
    least one; exactly one with ``one_root``) labelled "ROOT" and no other token; every label a word's."""
    sents = list(doc.sents)
    assert sum(len(s) for s in sents) == len(doc)
    for sent in sents:
        roots = [t for t in sent if t.head.i == t.i]
        assert len(roots) == 1 if one_root else len(roots) >= 1
        for token in sent:
            assert sent.start <= token.head.i < sent.end
            assert (token.dep_ == "ROOT") == (token.head.i == token.i) and token.dep_
            seen, node = set(), token
            while node.head.i != node.i:
                assert node.i not in seen
                seen.add(node.i)
                node = node.head
        assert sum(1 for t in sent for _ in t.children) == len(sent) - len(roots)


def heads(doc) -> list[int]:
    return [t.head.i for t in doc]


def test_factory_is_found_through_the_entry_point_and_loaded_only_when_used(smoke_bundle, model, tmp_path):
    code = (
        "import sys, json, spacy\n"
        "nlp = spacy.blank('en')\n"
        "assert 'parserfree.export.spacy_component' not in sys.modules  # every spaCy pipeline imports the factory\n"
        "nlp.add_pipe('parserfree', config={'bundle': sys.argv[1]})\n"
        "doc = nlp('A great film.')\n"
        "print(json.dumps(sorted(doc.cats)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(smoke_bundle[0])], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == sorted(model.label_names)


def test_pipe_over_awkward_inputs_gives_cats_and_a_tree_per_sentence_in_order(nlp, model, awkward_texts):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        docs = list(nlp.pipe(awkward_texts.values(), batch_size=3))
    assert [d.text for d in docs] == list(awkward_texts.values())
    for doc in docs:
        _, words = doc_words(doc)
        if words:
            assert set(doc.cats) == set(model.label_names)
            assert math.isclose(sum(doc.cats.values()), 1.0, rel_tol=1e-5)
        else:
            assert doc.cats == {}
        if len(doc):
            check_tree_per_sentence(doc)
            assert json.dumps(doc.to_json()["sents"])
            assert displacy.render(doc, style="dep", jupyter=False).startswith("<svg")
    got = dict(zip(awkward_texts, docs, strict=True))
    assert len(got["long"]) == 2000 and got["long"].has_annotation("DEP")
    assert any("longer than max_len" in str(w.message) for w in caught)
    assert [t.text for t in got["emoji_cjk"]] == ["😀", "很好"]


def test_component_sets_the_graphs_heads_and_labels(nlp, model):
    """token.head and token.dep_ are the graph's own heads and labels (no root guessed from D̂)."""
    texts = ["The film is great, and I told my friends. The ending was dull!", "A great film.", "Dull, dull, dull."]
    expected = model.predict(texts, with_tree=True)
    for doc, item in zip(nlp.pipe(texts), expected):
        assert doc_words(doc)[1] == item["words"] == [t.text for t in doc]
        for label, p in item["probabilities"].items():
            assert doc.cats[label] == pytest.approx(p, abs=1e-5)
        outputs = model.run_outputs([item["words"]], tree=True)
        assert heads(doc) == item["heads"] == outputs["heads"][0].tolist()
        assert [t.dep_ for t in doc] == item["labels"] == [model.dependency_labels[k] for k in outputs["dep_labels"][0]]
        check_tree_per_sentence(doc)


def test_probe_bundle_tree_is_decoded_from_distances(checkpoint_of_recipe, smoke_checkpoint, tmp_path):
    """A graph without heads (a probe) still gives a tree: the one decoded from D̂, labelled "dep"."""
    import torch

    ckpt = torch.load(smoke_checkpoint, map_location="cpu", weights_only=False)
    ckpt["parserfree"]["predictor"]["form"] = "probe"
    torch.save(ckpt, tmp_path / "smoke-probe.ckpt")
    checkpoint_of_recipe(tmp_path / "smoke-probe.ckpt", "parser_free", "binary", tmp_path / "probe.ckpt")
    export_checkpoint(tmp_path / "probe.ckpt", tmp_path / "probe", threads=1)
    model = ParserFreeModel.load(tmp_path / "probe", threads=1)
    assert "heads" not in model.tree_output_names and "distances" in model.tree_output_names
    text = "The film is great, and I told my friends. The ending was dull!"
    item = model.predict([text], with_distances=True, with_tree=True)[0]
    assert "labels" not in item and item["heads"] == heads_from_distances(np.array(item["distances"])).tolist()
    doc = make_nlp(tmp_path / "probe")(text)
    assert heads(doc) == item["heads"]
    check_tree_per_sentence(doc, one_root=True)
    assert {t.dep_ for t in doc} == {"ROOT", "dep"}


def test_whitespace_tokens_are_not_fed_and_hang_on_the_previous_word(nlp):
    spaced, plain = nlp("  A great  film.\n"), nlp("A great film.")
    assert [t.text for t in spaced] == ["  ", "A", "great", " ", "film", ".", "\n"]
    assert doc_words(spaced)[1] == doc_words(plain)[1]
    assert spaced.cats == pytest.approx(plain.cats, abs=1e-6)
    assert [spaced[i].head.i for i in (0, 3, 6)] == [1, 2, 5]
    check_tree_per_sentence(spaced)


def test_batched_pipe_equals_one_doc_at_a_time(smoke_bundle):
    nlp = make_nlp(smoke_bundle[0], buffer=8)
    texts = [f"{'really ' * (i % 7)}good film number {i}. {'It was dull.' * (i % 3)}" for i in range(23)]
    batched = list(nlp.pipe(texts, batch_size=4))
    for text, doc in zip(texts, batched):
        single = nlp(text)
        assert heads(doc) == heads(single)
        assert doc.cats == pytest.approx(single.cats, abs=1e-4)


def test_tree_false_sets_the_prediction_only(smoke_bundle, nlp):
    doc = make_nlp(smoke_bundle[0], tree=False)("A great film.")
    assert doc.cats == pytest.approx(nlp("A great film.").cats) and not doc.has_annotation("DEP")


def test_to_disk_carries_the_bundle_and_spacy_load_runs_it(smoke_bundle, tmp_path):
    bundle = tmp_path / "bundle"
    shutil.copytree(smoke_bundle[0], bundle)
    nlp = make_nlp(bundle)
    text = "The film is great, and I told my friends. The ending was dull!"
    before = nlp(text)
    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(bundle)  # the saved pipeline must not need the original folder
    loaded = spacy.load(tmp_path / "pipeline")
    after = loaded(text)
    assert after.cats == before.cats and heads(after) == heads(before)
    loaded.to_disk(tmp_path / "pipeline")  # saving onto itself keeps the bundle
    again = spacy.load(tmp_path / "pipeline")(text)
    assert again.cats == before.cats


def test_saved_bundle_that_was_altered_is_refused_at_load(smoke_bundle, tmp_path):
    make_nlp(smoke_bundle[0]).to_disk(tmp_path / "pipeline")
    vocab = tmp_path / "pipeline" / "parserfree" / "bundle" / "vocab.json"
    vocab.write_text(vocab.read_text() + " ")
    with pytest.raises(BundleError, match="vocab.json"):
        spacy.load(tmp_path / "pipeline")


def test_en_core_web_sm_without_parser_gets_sentences_from_the_component(smoke_bundle):
    nlp = spacy.load(DEFAULT_MODEL, exclude=["parser"])
    nlp.add_pipe("parserfree", config={"bundle": str(smoke_bundle[0]), "threads": 1})
    doc = nlp("The film is great, and I told my friends. The ending was dull!")
    check_tree_per_sentence(doc)
    assert doc.cats and doc[0].tag_  # the rest of the pipeline still runs


def test_deep_non_projective_trees_keep_their_sentence_starts():
    # zig-zag chains: spaCy alone derives wrong sentence starts for these (its left edges stop short)
    def zigzag(n: int) -> np.ndarray:
        order, lo, hi = [], 0, n - 1
        while lo <= hi:
            order.append(lo)
            if lo != hi:
                order.append(hi)
            lo, hi = lo + 1, hi - 1
        h = np.empty(n, dtype=np.int64)
        h[order[-1]] = order[-1]
        for a, b in zip(order, order[1:]):
            h[a] = b
        return h

    nlp = spacy.blank("en")
    for n in (30, 64):
        doc = spacy.tokens.Doc(nlp.vocab, words=["w"] * (2 * n))
        set_tree(doc, np.arange(2 * n), np.concatenate([zigzag(n), zigzag(n) + n]))
        assert [len(s) for s in doc.sents] == [n, n]
        check_tree_per_sentence(doc)


def test_pipeline_tokenizer_that_splits_differently_is_refused(smoke_bundle):
    nlp = make_nlp(smoke_bundle[0])
    nlp.tokenizer.add_special_case("filmgreat", [{"ORTH": "film"}, {"ORTH": "great"}])
    with pytest.raises(ValueError, match=r"tokenizer differs from the bundle's \(exceptions\)"):
        nlp("A filmgreat.")
    german = spacy.blank("de")
    german.add_pipe("parserfree", config={"bundle": str(smoke_bundle[0])})
    with pytest.raises(ValueError, match="tokenizer differs"):
        list(german.pipe(["Ein Film."]))


def test_tokenizer_changed_after_first_use_is_refused_at_the_next_pipe(smoke_bundle):
    nlp = make_nlp(smoke_bundle[0])
    list(nlp.pipe(["A great film."]))
    nlp.tokenizer.add_special_case("filmgreat", [{"ORTH": "film"}, {"ORTH": "great"}])
    with pytest.raises(ValueError, match="tokenizer differs"):
        list(nlp.pipe(["A great film."]))


def test_non_spacy_tokenizer_is_refused(smoke_bundle):
    nlp = make_nlp(smoke_bundle[0])
    nlp.tokenizer = lambda text: spacy.tokens.Doc(nlp.vocab, words=text.split())
    with pytest.raises(ValueError, match="not a spaCy tokenizer"):
        nlp("A great film.")


def test_missing_bundle_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="no bundle"):
        spacy.blank("en").add_pipe("parserfree")
    nlp = spacy.blank("en")
    nlp.add_pipe("parserfree", config={"bundle": str(tmp_path / "nowhere")})
    with pytest.raises(BundleError, match="nowhere"):
        nlp("A great film.")


def test_regression_bundle_sets_the_score_and_parser_fed_bundle_is_refused(recipe_checkpoint, tmp_path):
    export_checkpoint(recipe_checkpoint("no_syntax", "regression"), tmp_path / "regression", threads=1)
    doc = make_nlp(tmp_path / "regression")("A great film.")
    assert isinstance(doc._.parserfree_score, float) and math.isfinite(doc._.parserfree_score)
    assert doc.cats == {} and not doc.has_annotation("DEP")  # no distances in a no-syntax graph: no tree
    export_checkpoint(recipe_checkpoint("parser_fed"), tmp_path / "fed", threads=1)
    with pytest.raises(BundleError, match="needs a parser"):
        make_nlp(tmp_path / "fed")("A great film.")
