"""A model with the task head's n-gram term (``encoder.ngram_buckets``) exports: its checkpoint reloads with
the table, and the graph hashes word pairs as PyTorch does at batch sizes and lengths other than the trace's."""

from __future__ import annotations

import copy

import numpy as np
import onnxruntime as ort
import pytest
import torch

from parserfree.distill.checkpoints import load_trained
from parserfree.encoder import EncoderConfig
from parserfree.export import export_bundle
from parserfree.predictor import PredictorConfig
from parserfree.predictor.syntax_model import SyntaxModel

BUCKETS = 1021


@pytest.fixture(scope="module")
def ngram_checkpoint(smoke_checkpoint, tmp_path_factory):
    """The smoke run's model with an n-gram term of random weights (large, so it decides the logits)."""
    ckpt = torch.load(smoke_checkpoint, map_location="cpu", weights_only=False)
    meta = copy.deepcopy(ckpt["parserfree"])
    meta["encoder"]["ngram_buckets"] = BUCKETS
    meta["experiment"]["encoder"]["ngram_buckets"] = BUCKETS
    model = SyntaxModel(
        EncoderConfig.from_dict(meta["encoder"]),
        PredictorConfig.from_dict(meta["predictor"]),
        meta["task"],
        max(2, len(meta["label_names"])),
        dep_labels=meta["dep_labels"],
    )
    state = {k.removeprefix("model."): v for k, v in ckpt["state_dict"].items()}
    assert model.load_state_dict(state, strict=False).missing_keys == ["head.ngrams.table.weight"]
    with torch.no_grad():
        model.head.ngrams.table.weight.normal_(std=2.0, generator=torch.Generator().manual_seed(0))
    path = tmp_path_factory.mktemp("ngrams") / "ngrams.ckpt"
    torch.save({"state_dict": {f"model.{k}": v for k, v in model.state_dict().items()}, "parserfree": meta}, path)
    return path, model.head.ngrams.table.weight.detach().clone()


def test_the_graph_hashes_pairs_as_pytorch_does_at_other_shapes(ngram_checkpoint, tmp_path):
    path, table = ngram_checkpoint
    trained = load_trained(path)
    assert torch.equal(trained.model.head.ngrams.table.weight, table)
    manifest = export_bundle(path, tmp_path / "bundle", threads=1)
    assert manifest["parity"]["default"]["task_output_max_diff"] <= 1e-3
    session = ort.InferenceSession(str(tmp_path / "bundle" / "model.onnx"), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    words = trained.vocab.words[2:]
    for batch, length in [(5, 17), (1, 40), (3, 2), (2, 1)]:
        assert [batch, length] != manifest["trace_shape"]
        lengths = [length] + [int(n) for n in rng.integers(1, length + 1, batch - 1)]
        sentences = [list(rng.choice(words, n)) for n in lengths]
        word_ids, feature_ids, mask = trained.vocab.encode_batch(sentences, trained.encoder_config.max_len)
        task = session.run(["task_output"], {"word_ids": word_ids, "feature_ids": feature_ids, "mask": mask})[0]
        with torch.no_grad():
            ref = trained.model(*(torch.from_numpy(a) for a in (word_ids, feature_ids, mask)))
        np.testing.assert_allclose(task, ref.task.numpy(), atol=1e-3, rtol=1e-5)
