"""A predictor with a parser tower exports: the bundle's graph (and the predictor-alone graph) compute D̂,
heads and labels as PyTorch does at batch sizes and lengths other than the trace's."""

from __future__ import annotations

import copy

import numpy as np
import onnxruntime as ort
import pytest
import torch

from parserfree.core.checkpoints import load_trained
from parserfree.encoder import EncoderConfig
from parserfree.export.builder import TRACE_WORDS, export_predictor
from parserfree.jobs.exporting import export_checkpoint
from parserfree.predictor import PredictorConfig
from parserfree.predictor.syntax_model import SyntaxModel

TOWER = {"tower_layers": 2, "tower_d_model": 24, "tower_heads": 3, "tower_d_ff": 40}


@pytest.fixture(scope="module")
def tower_checkpoint(smoke_checkpoint, tmp_path_factory):
    """The smoke run's data and labels with a tower predictor (k = 0) and random weights everywhere (no ties)."""
    ckpt = torch.load(smoke_checkpoint, map_location="cpu", weights_only=False)
    meta = copy.deepcopy(ckpt["parserfree"])
    meta["encoder"]["predictor_layer"] = 0
    meta["predictor"].update(TOWER)
    meta["experiment"]["encoder"]["predictor_layer"] = 0
    meta["experiment"]["predictor"].update(TOWER)
    model = SyntaxModel(
        EncoderConfig.from_dict(meta["encoder"]),
        PredictorConfig.from_dict(meta["predictor"]),
        meta["task"],
        2,
        seed=0,
        dep_labels=meta["dep_labels"],
    )
    torch.manual_seed(1)
    for p in model.predictor.parameters():
        torch.nn.init.normal_(p, std=0.3)
    path = tmp_path_factory.mktemp("tower") / "tower.ckpt"
    torch.save({"state_dict": {f"model.{k}": v for k, v in model.state_dict().items()}, "parserfree": meta}, path)
    return path


def _random_batches(trained, shapes):
    rng = np.random.default_rng(0)
    words = trained.vocab.words[2:]
    for batch, length in shapes:
        lengths = [length] + [int(n) for n in rng.integers(1, length + 1, batch - 1)]
        yield trained.vocab.encode_batch([list(rng.choice(words, n)) for n in lengths], trained.encoder_config.max_len)


def test_tower_bundle_matches_pytorch_at_other_shapes(tower_checkpoint, tmp_path):
    manifest = export_checkpoint(tower_checkpoint, tmp_path / "bundle", threads=1)
    tree_parity = manifest["tree_graph"]["parity"]["default"]
    assert tree_parity["heads_differing"] == 0 and tree_parity["labels_differing"] == 0
    trained = load_trained(tower_checkpoint)
    assert trained.model.predictor.tower is not None
    session = ort.InferenceSession(str(tmp_path / "bundle" / "tree.onnx"), providers=["CPUExecutionProvider"])
    for word_ids, feature_ids, mask in _random_batches(trained, [(5, 17), (1, 40), (3, 2)]):
        assert [*word_ids.shape] != manifest["trace_shape"]
        task, distances, heads, labels = session.run(
            None, {"word_ids": word_ids, "feature_ids": feature_ids, "mask": mask}
        )
        with torch.no_grad():
            ref = trained.model(*(torch.from_numpy(a) for a in (word_ids, feature_ids, mask)))
        np.testing.assert_allclose(task, ref.task.numpy(), atol=1e-4, rtol=0)
        pairs = mask[:, :, None] & mask[:, None, :]
        np.testing.assert_allclose(distances[pairs], ref.predicted.distances.numpy()[pairs], atol=1e-4, rtol=0)
        np.testing.assert_array_equal(heads, ref.predicted.heads.numpy())
        np.testing.assert_array_equal(labels, ref.predicted.labels.numpy())
        assert (heads[mask] != np.arange(heads.shape[1])[None].repeat(len(heads), 0)[mask]).any()  # a real tree


def test_predictor_alone_graph_matches_pytorch(tower_checkpoint, tmp_path):
    trained = load_trained(tower_checkpoint)
    module = export_predictor(trained, tmp_path / "predictor.onnx")
    assert module.output_names == ("distances", "heads", "dep_labels")
    session = ort.InferenceSession(str(tmp_path / "predictor.onnx"), providers=["CPUExecutionProvider"])
    trace = (len(TRACE_WORDS), max(map(len, TRACE_WORDS)))
    for word_ids, feature_ids, mask in _random_batches(trained, [(4, 11), (1, 33)]):
        assert word_ids.shape != trace
        distances, heads, labels = session.run(None, {"word_ids": word_ids, "feature_ids": feature_ids, "mask": mask})
        with torch.no_grad():
            ref = module(*(torch.from_numpy(a) for a in (word_ids, feature_ids, mask)))
        pairs = mask[:, :, None] & mask[:, None, :]
        np.testing.assert_allclose(distances[pairs], ref[0].numpy()[pairs], atol=1e-4, rtol=0)
        np.testing.assert_array_equal(heads, ref[1].numpy())
        np.testing.assert_array_equal(labels, ref[2].numpy())


def test_argmax_heads_and_bench_distances_read_the_tower_not_the_encoders_lower_layers(tower_checkpoint):
    """The report's argmax cycle rate and bench.predictor's D̂ once fed the predictor the encoder's h_0,
    which a tower model's predictor never reads (a crash, or wrong heads where the widths happen to agree)."""
    from parserfree.distill.evaluate import argmax_heads

    from bench.predictor import predicted_distances

    trained = load_trained(tower_checkpoint)
    words = [["The", "dogs", "near", "the", "house", "bark", "."], ["It", "rains", "."]]
    max_len = trained.encoder_config.max_len
    word_ids, feature_ids, mask = (torch.from_numpy(a) for a in trained.vocab.encode_batch(words, max_len))
    with torch.no_grad():
        ref = trained.model.predict(word_ids, feature_ids, mask)
    got = argmax_heads(trained.model, trained.vocab, words, max_len)
    for b, w in enumerate(words):
        np.testing.assert_array_equal(got[b], ref.argmax_heads[b, : len(w)].numpy())
        np.testing.assert_array_equal(
            predicted_distances(trained, words, max_len)[b], ref.distances[b, : len(w), : len(w)].numpy()
        )
