"""A model with the task head's n-gram term (``encoder.ngram_buckets``) exports: its checkpoint reloads with
the table, and the graph hashes word pairs as PyTorch does at batch sizes and lengths other than the trace's."""

from __future__ import annotations

import pytest
import torch
from checkpoint_edits import edited_meta, model_of, save_checkpoint
from graph_checks import assert_task_output_matches

from parserfree.core.checkpoints import load_trained
from parserfree.jobs.exporting import export_checkpoint

BUCKETS = 1021


@pytest.fixture(scope="module")
def ngram_checkpoint(smoke_checkpoint, tmp_path_factory):
    """The smoke run's model with an n-gram term of random weights (large, so it decides the logits)."""
    state, meta = edited_meta(smoke_checkpoint, ngram_buckets=BUCKETS)
    model = model_of(meta)
    assert model.load_state_dict(state, strict=False).missing_keys == ["head.ngrams.table.weight"]
    with torch.no_grad():
        model.head.ngrams.table.weight.normal_(std=2.0, generator=torch.Generator().manual_seed(0))
    path = tmp_path_factory.mktemp("ngrams") / "ngrams.ckpt"
    save_checkpoint(model, meta, path)
    return path, model.head.ngrams.table.weight.detach().clone()


def test_the_graph_hashes_pairs_as_pytorch_does_at_other_shapes(ngram_checkpoint, tmp_path):
    path, table = ngram_checkpoint
    trained = load_trained(path)
    assert torch.equal(trained.model.head.ngrams.table.weight, table)
    manifest = export_checkpoint(path, tmp_path / "bundle", threads=1)
    assert manifest["parity"]["default"]["task_output_max_diff"] <= 1e-3
    shapes = [(5, 17), (1, 40), (3, 2), (2, 1)]
    graph = tmp_path / "bundle" / "model.onnx"
    assert_task_output_matches(graph, trained, manifest["trace_shape"], shapes, atol=1e-3, rtol=1e-5)
