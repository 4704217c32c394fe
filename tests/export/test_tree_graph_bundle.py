"""One bundle, two graphs: predictions without trees run the task graph alone, trees come from the tree graph
(checked against PyTorch at export like the task graph), and a bundle from before the split is refused."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import parserfree.export.builder as builder
from parserfree.export import BundleError, ExportError, ParserFreeModel
from parserfree.export.onnx_graph import graph_module
from parserfree.jobs.exporting import export_checkpoint

from damage import rewrite_manifest

TEXTS = ["The film is great, and I told my friends. The ending was dull!", "A great film.", "Dull, dull, dull."]


def test_a_bundle_whose_graph_still_returns_the_tree_is_refused_saying_to_export_again(bundle_copy, capsys):
    """A format-3 bundle (one graph computing labels for every prediction) is refused in one line naming the
    re-export command, by the runtime and by `parserfree predict` alike."""
    from parserfree.commands.cli import main

    def as_format_3(manifest: dict) -> None:
        manifest.update(format_version=3, outputs=manifest["tree_graph"]["outputs"])
        manifest.pop("tree_graph")

    rewrite_manifest(bundle_copy, as_format_3)
    with pytest.raises(
        BundleError,
        match=r"format version 3 predates the tree graph of heads and labels beside a task graph that computes "
        r"no labels \(version 4; this parserfree reads 4\); export the checkpoint again: parserfree export",
    ):
        ParserFreeModel.load(bundle_copy)
    assert main(["predict", "--model", str(bundle_copy)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "export the checkpoint again" in err


def test_predictions_without_trees_run_the_task_graph_only(smoke_bundle):
    model = ParserFreeModel.load(smoke_bundle[0], threads=1)
    plain = model.predict(TEXTS)
    assert model._tree_session is None  # never opened: nothing asked for D̂ or a tree
    assert list(model.run_outputs(model.tokenize(TEXTS))) == ["task_output"]
    trees = model.predict(TEXTS, with_tree=True)
    assert model._tree_session is not None
    for a, b in zip(plain, trees, strict=True):
        assert a["label"] == b["label"] and "heads" not in a and "labels" in b
        assert a["probabilities"] == pytest.approx(b["probabilities"], abs=1e-5)  # both graphs, one task output
    outputs = model.run_outputs([trees[0]["words"]], tree=True)
    assert trees[0]["heads"] == outputs["heads"][0].tolist()


def test_the_spacy_component_without_trees_never_opens_the_tree_graph(smoke_bundle):
    import spacy

    nlp = spacy.blank("en")
    component = nlp.add_pipe("parserfree", config={"bundle": str(smoke_bundle[0]), "threads": 1, "tree": False})
    docs = list(nlp.pipe(TEXTS))
    assert component.runtime._tree_session is None
    assert all(doc.cats for doc in docs) and not any(doc.has_annotation("DEP") for doc in docs)


def test_an_export_whose_tree_graph_gives_other_heads_than_pytorch_is_refused(smoke_checkpoint, tmp_path, monkeypatch):
    """The tree graph is parity-checked like the task graph: traced from other weights than its PyTorch
    reference, its heads differ and no bundle is written."""
    traced = builder._export_graph

    def tree_of_other_weights(trained, kind, path, graph="task", task_distances="pointer_jumps"):
        module, shape = traced(trained, kind, path, graph, task_distances)
        if graph == "tree":
            other = copy.deepcopy(trained.model)
            torch.manual_seed(0)
            with torch.no_grad():
                weight = other.predictor.arc_scorer.relative.weight
                weight += 5.0 * torch.randn_like(weight)
            module = graph_module(other, kind, "tree")
        return module, shape

    monkeypatch.setattr(builder, "_export_graph", tree_of_other_weights)
    with pytest.raises(ExportError, match=r"tree\.onnx failed the parity check .*heads differing on"):
        export_checkpoint(smoke_checkpoint, tmp_path / "bundle", threads=1)
    assert not (tmp_path / "bundle").exists()


def test_a_task_graph_with_adjacency_powers_gives_the_bundles_task_outputs(smoke_bundle, smoke_checkpoint, tmp_path):
    """The clamped D̂ changes the task graph's nodes, not what it computes: the same task outputs as the default
    export (within 1e-4) and the same exact tree graph."""
    manifest = export_checkpoint(smoke_checkpoint, tmp_path / "powers", threads=1, task_distances="adjacency_powers")
    assert manifest["task_graph"]["distances"] == "adjacency_powers" and manifest["task_graph"]["distance_cap"] == 10
    powers = ParserFreeModel.load(tmp_path / "powers", threads=1)
    default = ParserFreeModel.load(smoke_bundle[0], threads=1)
    words = default.tokenize(TEXTS * 4)
    np.testing.assert_allclose(
        powers.run_outputs(words)["task_output"], default.run_outputs(words)["task_output"], atol=1e-4, rtol=0
    )
    assert powers.predict(TEXTS, with_tree=True) == default.predict(TEXTS, with_tree=True)
    with pytest.raises(ExportError, match="task_distances='soft' must be one of pointer_jumps, adjacency_powers, auto"):
        export_checkpoint(smoke_checkpoint, tmp_path / "bad", task_distances="soft")
