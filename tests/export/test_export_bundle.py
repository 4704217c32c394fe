"""Export: the smoke model becomes a bundle whose graph matches PyTorch at unseen shapes; failures leave nothing."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
import torch

from parserfree.core.checkpoints import load_trained
from parserfree.encoder.files import sha256_file
from parserfree.encoder.text import normalise_text
from parserfree.export import FORMAT_VERSION, ExportError, ParserFreeModel
from parserfree.jobs.exporting import export_checkpoint


def test_manifest_describes_the_bundle(smoke_bundle):
    folder, manifest = smoke_bundle
    assert manifest["kind"] == "parser_free" and manifest["format_version"] == FORMAT_VERSION
    assert [i["name"] for i in manifest["inputs"]] == ["word_ids", "feature_ids", "mask"]
    assert [o["name"] for o in manifest["outputs"]] == ["task_output"]  # the task graph computes nothing else
    tree = manifest["tree_graph"]  # which file is which graph
    assert [o["name"] for o in tree["outputs"]] == ["task_output", "distances", "heads", "dep_labels"]
    assert manifest["models"] == {
        "default": "model.onnx",
        "optimized": "model.optimized.onnx",
        "int8": "model.int8.onnx",
    }
    assert tree["models"] == {"default": "tree.onnx", "optimized": "tree.optimized.onnx", "int8": "tree.int8.onnx"}
    assert (
        manifest["task_graph"]["distances"] == "adjacency_powers"  # the default, auto: they apply to this model
        and "task output only" in manifest["task_graph"]["computes"]
    )
    assert tree["parity"]["default"]["heads_differing"] == 0 and tree["parity"]["default"]["labels_differing"] == 0
    assert manifest["parity"]["default"]["heads_differing"] is None  # no tree in the task graph
    assert "ROOT" in manifest["dependency_labels"] and "nsubj" in manifest["dependency_labels"]  # spaCy's labels
    assert manifest["max_len"] == 64 and manifest["opset"] == 17
    assert set(manifest["versions"]) == {"torch", "onnx", "onnxruntime", "spacy", "numpy", "parserfree"}
    assert set(manifest["files"]) == {
        "model.onnx",
        "model.optimized.onnx",
        "model.int8.onnx",
        "tree.onnx",
        "tree.optimized.onnx",
        "tree.int8.onnx",
        "vocab.json",
        "labels.json",
        "config.yaml",
        "tokenizer",
    }
    for name, digest in manifest["files"].items():
        assert sha256_file(folder / name) == digest
    default = manifest["parity"]["default"]  # its numbers are checked independently in the next test
    assert default["source"].startswith("dev split of")
    shapes = {tuple(s) for s in default["batches"]}
    assert len(shapes) >= 3 and tuple(manifest["trace_shape"]) not in shapes
    assert not list(folder.parent.glob(".smoke.*")), "temporary export folders were left behind"


def test_graph_matches_pytorch_at_other_batch_sizes_and_lengths(smoke_bundle, smoke_checkpoint):
    """The tree graph's D̂, predicted heads and labels and both graphs' task output as PyTorch computes them,
    at shapes other than the trace's."""
    folder, manifest = smoke_bundle
    trained = load_trained(smoke_checkpoint)
    session = ort.InferenceSession(str(folder / "tree.onnx"), providers=["CPUExecutionProvider"])
    task_session = ort.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    words = [w for w in trained.vocab.words[2:]]
    for batch, length in [(7, 23), (1, 64), (3, 2)]:
        assert [batch, length] != manifest["trace_shape"]
        lengths = [length] + [int(n) for n in rng.integers(1, length + 1, batch - 1)]
        sentences = [list(rng.choice(words, n)) for n in lengths]
        word_ids, feature_ids, mask = trained.vocab.encode_batch(sentences, 64)
        task, distances, heads, labels = session.run(
            None, {"word_ids": word_ids, "feature_ids": feature_ids, "mask": mask}
        )
        with torch.no_grad():
            ref = trained.model(torch.from_numpy(word_ids), torch.from_numpy(feature_ids), torch.from_numpy(mask))
        assert task.shape == (batch, 2) and distances.shape == (batch, length, length)
        np.testing.assert_allclose(task, ref.task.numpy(), atol=1e-4, rtol=0)
        (task_only,) = task_session.run(None, {"word_ids": word_ids, "feature_ids": feature_ids, "mask": mask})
        np.testing.assert_allclose(task_only, ref.task.numpy(), atol=1e-4, rtol=0)
        pairs = mask[:, :, None] & mask[:, None, :]
        np.testing.assert_allclose(distances[pairs], ref.predicted.distances.numpy()[pairs], atol=1e-4, rtol=0)
        assert heads.shape == labels.shape == (batch, length)
        np.testing.assert_array_equal(heads, ref.predicted.heads.numpy())
        np.testing.assert_array_equal(labels, ref.predicted.labels.numpy())
        assert (labels[mask] >= 0).all() and (labels[~mask] == -1).all() and (heads[~mask] == -1).all()


def test_bundled_tokenizer_splits_like_the_training_parser(smoke_bundle, sentiment_file):
    import json

    from parserfree.core.parse import DEFAULT_MODEL, load_pipeline

    texts = [json.loads(line)["text"] for line in sentiment_file.read_text().splitlines()[:40]]
    texts += ["Don't stop... U.S.A. e.g. can't!", "  😀 很好\x07 ok  ", "email me: a@b.com, http://x.org/y?z=1"]
    nlp = load_pipeline(DEFAULT_MODEL)
    want = [[t.text for t in doc] for doc in nlp.pipe(normalise_text(t) for t in texts)]
    assert ParserFreeModel.load(smoke_bundle[0]).tokenize(texts) == want


def test_failed_parity_check_leaves_no_bundle(smoke_checkpoint, tmp_path, monkeypatch):
    import parserfree.export.builder as builder

    real = builder.run_graph_module

    def off_by_a_bit(module, feeds):
        out = real(module, feeds)
        return {**out, "task_output": out["task_output"] + 1e-3}

    monkeypatch.setattr(builder, "run_graph_module", off_by_a_bit)
    out = tmp_path / "bundle"
    with pytest.raises(ExportError, match="parity"):
        export_checkpoint(smoke_checkpoint, out)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_interrupted_export_leaves_no_bundle(smoke_checkpoint, tmp_path, monkeypatch):
    import parserfree.export.builder as builder

    def interrupted(module, feeds, path):
        path.write_bytes(b"half a graph")
        raise KeyboardInterrupt

    monkeypatch.setattr(builder, "export_onnx", interrupted)
    out = tmp_path / "bundle"
    with pytest.raises(KeyboardInterrupt):
        export_checkpoint(smoke_checkpoint, out)
    assert list(tmp_path.iterdir()) == []


def test_existing_folder_is_not_replaced_without_overwrite(smoke_checkpoint, tmp_path):
    out = tmp_path / "bundle"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ExportError, match="not empty"):
        export_checkpoint(smoke_checkpoint, out)
    with pytest.raises(ExportError, match="not a bundle"):
        export_checkpoint(smoke_checkpoint, out, overwrite=True)
    assert (out / "notes.txt").read_text() == "mine"


def _parser_fed_task_outputs(checkpoint, words: list[list[str]], distances: np.ndarray) -> np.ndarray:
    """PyTorch task outputs of a checkpoint whose biased layers read the given parser distances."""
    trained = load_trained(checkpoint)
    word_ids, feature_ids, mask = trained.vocab.encode_batch(words, 64)
    with torch.no_grad():
        return trained.model(
            *(torch.from_numpy(x) for x in (word_ids, feature_ids, mask)),
            distances=torch.from_numpy(distances),
            source="parser",
        ).task.numpy()


def test_parser_fed_bundle_runs_with_parser_distances_only(recipe_checkpoint, tmp_path):
    from parserfree.core.trees import batch_tree_distances

    checkpoint = recipe_checkpoint("parser_fed")
    manifest = export_checkpoint(checkpoint, tmp_path / "fed")
    assert manifest["kind"] == "parser_fed"
    assert [i["name"] for i in manifest["inputs"]][-1] == "distances"
    assert [o["name"] for o in manifest["outputs"]] == ["task_output"]

    model = ParserFreeModel.load(tmp_path / "fed")
    with pytest.raises(ValueError, match="parser"):
        model.predict(["A fine film."])
    with pytest.raises(ValueError, match="distances"):
        model.run_words([["A", "film"]])
    words = [["The", "film", "is", "fine", "."], ["Bad", "."], ["Wow"]]
    heads = [[1, 2, 2, 2, 2], [0, 0], [0]]
    distances = batch_tree_distances(heads)
    task, predicted = model.run_words(words, distances=distances)
    assert predicted is None and task.shape == (3, 2)
    np.testing.assert_allclose(task, _parser_fed_task_outputs(checkpoint, words, distances), atol=1e-4, rtol=0)
    per_example = [distances[b, : len(w), : len(w)] for b, w in enumerate(words)]
    np.testing.assert_allclose(model.run_words(words, distances=per_example)[0], task, atol=1e-6, rtol=0)


def test_twin_bundle_takes_parser_distances_and_leaves_the_predictor_out(recipe_checkpoint, tmp_path):
    from parserfree.core.trees import batch_tree_distances

    checkpoint = recipe_checkpoint("parser_fed_twin")
    manifest = export_checkpoint(checkpoint, tmp_path / "twin")
    assert [i["name"] for i in manifest["inputs"]][-1] == "distances"
    assert [o["name"] for o in manifest["outputs"]] == ["task_output"]
    words = [["The", "film", "is", "fine", "."], ["Bad", "."], ["Wow"], ["It", "was", "dull", ",", "sadly", "."]]
    distances = batch_tree_distances([[1, 2, 2, 2, 2], [0, 0], [0], [1, 1, 1, 4, 1, 1]])
    task, _ = ParserFreeModel.load(tmp_path / "twin").run_words(words, distances=distances)
    np.testing.assert_allclose(task, _parser_fed_task_outputs(checkpoint, words, distances), atol=1e-4, rtol=0)
    graph_ops = {node.op_type for node in __import__("onnx").load(str(tmp_path / "twin" / "model.onnx")).graph.node}
    assert "ArgMax" not in graph_ops  # the predictor's decoding is not computed when the parser gives the tree


def test_locality_bundle_biases_by_sequential_distance_without_a_parser(recipe_checkpoint, tmp_path):
    from parserfree.core.trees import batch_tree_distances

    checkpoint = recipe_checkpoint("locality")
    manifest = export_checkpoint(checkpoint, tmp_path / "loc")
    assert [i["name"] for i in manifest["inputs"]] == ["word_ids", "feature_ids", "mask"]
    model = ParserFreeModel.load(tmp_path / "loc")
    assert model.predict(["A fine film ."])[0]["label"] in model.label_names  # no parser needed
    words = [["The", "film", "is", "fine", "."], ["Bad", "."], ["Wow"]]
    task, _ = model.run_words(words)
    chains = batch_tree_distances([list(range(1, len(w))) + [len(w) - 1] for w in words])  # a chain: d = |i − j|
    np.testing.assert_allclose(task, _parser_fed_task_outputs(checkpoint, words, chains), atol=1e-4, rtol=0)


def test_an_export_given_no_held_out_data_says_so_and_skips_the_evaluation(smoke_checkpoint, tmp_path):
    """The library export reads no dataset (export imports nothing from distill): without the held-out
    sentences the training side reads, parity runs on built-in sentences, the test-split evaluation is
    skipped, and the manifest says why; export_checkpoint (what ``parserfree export`` runs) passes them."""
    from parserfree.export import export_bundle

    manifest = export_bundle(smoke_checkpoint, tmp_path / "bare", threads=1)
    assert manifest["parity"]["default"]["source"] == (
        "built-in example sentences (no held-out data was given to the export)"
    )
    assert manifest["evaluation"] == {
        "skipped": "the checkpoint's data is not available (no held-out data was given to the export)"
    }
    checked = export_checkpoint(smoke_checkpoint, tmp_path / "checked", threads=1)
    assert checked["parity"]["default"]["source"].startswith("dev split of")
    assert checked["evaluation"]["source"].startswith("test split of") and checked["evaluation"]["n_examples"] > 0
