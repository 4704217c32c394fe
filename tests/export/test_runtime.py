"""ParserFreeModel: raw text in, finite JSON-ready predictions out, in order, with no parser model loaded."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
from awkward import EMPTY_AFTER_NORMALISATION

from parserfree.export import ParserFreeModel
from parserfree.export.graph_inputs import graph_inputs
from parserfree.export.runtime import softmax, tree_edges
from parserfree.export.session import make_session


@pytest.fixture(scope="module")
def model(smoke_bundle):
    return ParserFreeModel.load(smoke_bundle[0], threads=1)


def check_item(item: dict, max_len: int) -> None:
    json.dumps(item, allow_nan=False)  # valid JSON: no NaN or infinity anywhere
    if "error" in item:
        assert item == {"error": "empty text"}
        return
    n = len(item["words"])
    assert 1 <= n <= max_len
    assert item["label"] in item["probabilities"]
    assert math.isclose(sum(item["probabilities"].values()), 1.0, rel_tol=1e-5)
    if "distances" in item:
        d = np.array(item["distances"])
        assert d.shape == (n, n) and np.isfinite(d).all() and (np.diag(d) == 0).all()
    if "tree" in item:
        assert len(item["tree"]) == n - 1 and all(0 <= i < j < n for i, j in item["tree"])
        assert len(item["heads"]) == len(item["labels"]) == n and all(0 <= h < n for h in item["heads"])
        assert all((label == "ROOT") == (h == i) for i, (h, label) in enumerate(zip(item["heads"], item["labels"])))


def test_edge_inputs_give_valid_results_in_order(model, awkward_texts):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = model.predict(list(awkward_texts.values()), batch_size=2, with_distances=True, with_tree=True)
    assert len(results) == len(awkward_texts)
    for item in results:
        check_item(item, model.max_len)
    got = dict(zip(awkward_texts, results, strict=True))
    assert {k: r.get("error") for k, r in got.items()} == {
        k: "empty text" if k in EMPTY_AFTER_NORMALISATION else None for k in awkward_texts
    }
    assert got["one_word"]["words"] == ["Wonderful"] and got["one_word"]["tree"] == []
    assert got["emoji_cjk"]["words"] == ["😀", "很好"]
    assert got["long"]["truncated"] is True and len(got["long"]["words"]) == model.max_len
    assert "truncated" not in got["two_sentences"]
    assert any("truncated" in str(w.message) for w in caught)


def test_batching_by_length_restores_input_order(model):
    texts = [f"{'really ' * (i % 7)}good film number {i}." for i in range(23)]
    one_by_one = [model.predict([t])[0] for t in texts]
    batched = model.predict(texts, batch_size=4)
    assert [r["words"] for r in batched] == [r["words"] for r in one_by_one]
    for a, b in zip(batched, one_by_one):
        assert a["label"] == b["label"]
        assert all(abs(a["probabilities"][k] - b["probabilities"][k]) < 1e-4 for k in a["probabilities"])


def test_run_words_gives_raw_outputs(model):
    words = model.tokenize(["A great film.", "Dull."])
    assert words == [["A", "great", "film", "."], ["Dull", "."]]
    task, distances = model.run_words(words)
    assert task.shape == (2, 2) and distances.shape == (2, 4, 4)
    assert (distances[1, 2:, :] == -1).all()  # pad pairs keep the pad convention


@pytest.mark.parametrize("variant", ["optimized", "int8"])
def test_variants_compute_what_the_fp32_graph_computes(smoke_bundle, sentiment_file, model, variant):
    """Measured here, not read from the manifest: the optimised graph within the fp32 tolerance of
    model.onnx, the int8 graph agreeing with its predictions on nearly every fixture sentence."""
    folder, _ = smoke_bundle
    variant_model = ParserFreeModel.load(folder, threads=1, variant=variant)
    texts = [json.loads(line)["text"] for line in sentiment_file.read_text().splitlines()[:96]]
    words = model.tokenize(texts)
    reference, got = model.run_words(words)[0], variant_model.run_words(words)[0]
    if variant == "optimized":
        np.testing.assert_allclose(got, reference, atol=1e-4, rtol=0)
    else:
        assert np.mean(got.argmax(-1) == reference.argmax(-1)) >= 0.9


@pytest.mark.parametrize("variant", ["optimized", "int8"])
def test_a_variant_serves_its_own_graph_on_the_awkward_inputs(smoke_bundle, variant, awkward_texts):
    """Each prediction is what the variant's ONNX file computes: rerun here on the served words, one text per
    run as predict(batch_size=1) does, the probabilities are its softmax and the tree is that of its D̂."""
    folder, manifest = smoke_bundle
    model = ParserFreeModel.load(folder, variant=variant, threads=1)
    predicted = model.predict(list(awkward_texts.values()), batch_size=1, with_tree=True)
    results = dict(zip(awkward_texts, predicted, strict=True))
    assert [k for k, r in results.items() if "error" in r] == list(EMPTY_AFTER_NORMALISATION)
    session = make_session(folder / manifest["tree_graph"]["models"][variant], threads=1)  # with_tree: the tree graph
    fp32 = ParserFreeModel.load(folder, threads=1)
    for name, item in results.items():
        if "error" in item:
            continue
        check_item(item, model.max_len)
        assert item["words"] == fp32.tokenize([awkward_texts[name]])[0][: model.max_len]
        logits, distances, *tree = session.run(None, graph_inputs(model.vocab, [item["words"]], model.max_len))
        if tree:  # a heads predictor's graph also returns the tree: the item's heads are the graph's
            assert item["heads"] == tree[0][0, : len(item["words"])].tolist(), name
        expected = dict(zip(model.label_names, softmax(logits[0]).tolist(), strict=True))
        assert item["probabilities"] == pytest.approx(expected, abs=1e-6), name
        assert item["tree"] == tree_edges(distances[0]), name


TRAINING_ONLY = ("torch", "lightning", "lightning_fabric", "pytorch_lightning", "onnx")


def test_serving_needs_neither_pytorch_nor_lightning_nor_the_parser_model(smoke_bundle, tmp_path):
    """Serving in a process where PyTorch and Lightning cannot be imported (as if not installed): the
    import loads onnxruntime and numpy only; load + predict add the spaCy tokenizer, never a parser model.
    (spaCy itself imports PyTorch when it is installed, so blocking it is the way to see what we need.)"""
    code = (
        "import sys, json\n"
        f"for name in {TRAINING_ONLY!r}:\n"
        "    sys.modules[name] = None  # import fails, as if not installed\n"
        "loaded = lambda: sorted(m for m, module in sys.modules.items() if module is not None)\n"
        "from parserfree.export import ParserFreeModel\n"
        "imported = loaded()\n"
        "model = ParserFreeModel.load(sys.argv[1])\n"
        "out = model.predict(['A great film.', ''], with_distances=True, with_tree=True)\n"
        "assert 'label' in out[0] and 'tree' in out[0], out\n"
        "print(json.dumps({'import': imported, 'predict': loaded()}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(smoke_bundle[0])], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    tops = {stage: {m.split(".")[0] for m in names} for stage, names in loaded.items()}
    assert "onnxruntime" in tops["import"] and "numpy" in tops["import"]
    assert not tops["import"] & {*TRAINING_ONLY, "spacy", "scipy", "yaml"}, (
        "the serving import loads more than it needs"
    )
    assert "spacy" in tops["predict"] and not any("core_web" in m for m in loaded["predict"])
