"""bench.parser end to end with --quick on the smoke model and the fixture text: spaCy's scorer sees
the trees as built (gold against itself scores 100), the numbers agree with the project's own metrics on
the PyTorch predictor, and the speed section times both sides."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from parserfree.core.checkpoints import load_trained
from parserfree.predictor.metrics import DistanceMetrics, attachment

import bench.parser as parser_script


@pytest.fixture(scope="module")
def bench():
    return parser_script


@pytest.fixture(scope="module")
def result(bench, smoke_checkpoint, smoke_bundle, sentiment_file, smoke_overrides, tmp_path_factory):
    cache = next(o for o in smoke_overrides if o.startswith("data.cache_dir=")).split("=", 1)[1]
    out = tmp_path_factory.mktemp("bench") / "parser.json"
    bench.main(
        [
            "--checkpoint",
            str(smoke_checkpoint),
            "--bundle",
            str(smoke_bundle[0]),
            "--dataset",
            str(sentiment_file),
            "--cache-dir",
            cache,
            "--threads",
            "1",
            "--quick",
            "--out",
            str(out),
        ]
    )
    record = json.loads(out.read_text())
    assert record["command"].startswith("python -m bench.parser --checkpoint") and record["kind"] == "json"
    return record["payload"], cache


def test_spacy_scorer_gives_gold_trees_full_marks_and_a_flat_tree_less(bench, sentiment_file, result):
    _, cache = result
    groups = bench.held_out(str(sentiment_file), "test", cache, bench.DEFAULT_MODEL, 20, 64)
    gold = [e for exs in groups.values() for e in exs]
    perfect = bench.spacy_scores([(e, e.heads, e.deps) for e in gold])
    assert perfect["uas"] == pytest.approx(100.0) and perfect["las"] == pytest.approx(100.0)
    flat = bench.spacy_scores([(e, np.zeros(len(e.words), dtype=int), e.deps) for e in gold])  # all on word 0
    assert flat["uas"] < 50 and flat["las"] <= flat["uas"]


def test_bench_numbers_agree_with_the_projects_metrics_on_the_pytorch_predictor(
    bench, result, smoke_checkpoint, sentiment_file
):
    got, cache = result
    assert got["checks"]["predictor_onnx_as_pytorch"] == 1.0
    trained = load_trained(smoke_checkpoint)
    examples = [
        e
        for exs in bench.held_out(str(sentiment_file), "test", cache, bench.DEFAULT_MODEL, 200, 64).values()
        for e in exs
    ]
    metrics, counts = DistanceMetrics(), np.zeros(3, dtype=int)
    with torch.no_grad():
        for e in examples:
            ids = [torch.from_numpy(a) for a in trained.vocab.encode_batch([list(e.words)], 64)]
            out = trained.model.predictor(trained.model.encoder.lower(*ids), ids[2])
            labels = np.array([trained.dep_labels[k] for k in out.labels[0]])
            metrics.update(out.distances[0].numpy(), e.heads, e.punct)
            counts += attachment(out.heads[0].numpy(), e.heads, e.punct, labels, np.array(e.deps))
    overall = got["accuracy"]["predictor"]["all"]
    assert overall["sentences"] == len(examples)
    assert overall["uuas"] == pytest.approx(metrics.compute()["uuas"])
    assert overall["uas_all_words"] == pytest.approx(100 * counts[1] / counts[0])
    assert overall["las_all_words"] == pytest.approx(100 * counts[2] / counts[0])
    assert got["accuracy"]["bundle"]["all"]["uas"] == pytest.approx(overall["uas"])  # same weights, same trees
    assert sum(v["sentences"] for v in overall["by_length"].values()) == len(examples)
    assert "nsubj" in overall["relations"]


def test_speed_times_the_predictor_and_spacys_parser_on_the_same_words(result):
    speed = result[0]["speed"]
    assert speed["words"] > speed["texts"] > 0 and speed["threads"] == 1
    assert set(speed["systems"]) == {"predictor", "bundle"} and speed["spacy"]["words_per_s"] > 0
    for entry in speed["systems"].values():
        assert entry["times_spacy"] == pytest.approx(entry["words_per_s"] / speed["spacy"]["words_per_s"])
    assert result[0]["checks"]["parser_graph_as_predictor"] == 1.0


def test_speed_splits_the_tokenizer_from_the_graph_and_states_the_ratios_ceiling(result):
    speed = result[0]["speed"]
    assert speed["tokenizer_words_per_s"] > 0
    assert speed["ceiling_times_spacy"] == pytest.approx(speed["tokenizer_words_per_s"] / speed["spacy"]["words_per_s"])
    for entry in speed["systems"].values():
        assert entry["after_tokenizer_words_per_s"] > 0
    assert "the way in alone" in parser_script.tables(result[0])


def test_parse_from_text_returns_each_texts_own_tree_in_the_texts_order(smoke_checkpoint, tmp_path):
    """The batches run sorted by length; the results must come back in the order of the texts (they came
    back sorted, so a caller pairing them with its texts read another sentence's heads)."""
    from parserfree.core.parse import load_pipeline

    from bench.lib.parse_speed import checkpoint_system, ours_from_text

    system, _ = checkpoint_system(str(smoke_checkpoint), 1, tmp_path)
    tokenizer = load_pipeline(parser_script.DEFAULT_MODEL).tokenizer
    texts = [
        "The long and winding road that leads to your door will never disappear .",
        "Go .",
        "A small movie with a big heart .",
        "Yes .",
    ]
    together = ours_from_text(system, tokenizer, texts)
    assert [len(heads) for heads, _ in together] == [len(tokenizer(t)) for t in texts]
    for text, (heads, labels) in zip(texts, together):
        alone, alone_labels = ours_from_text(system, tokenizer, [text])[0]
        assert np.array_equal(heads, alone) and labels == alone_labels


def test_quantized_predictor_is_the_int8_graph_that_runs_not_the_float_one(smoke_checkpoint, tmp_path, monkeypatch):
    import parserfree.export.session as session_module

    from bench.lib.parse_speed import checkpoint_system

    opened = []
    make_session = session_module.make_session
    monkeypatch.setattr(
        session_module, "make_session", lambda path, *a, **k: opened.append(path) or make_session(path, *a, **k)
    )
    system, reference = checkpoint_system(str(smoke_checkpoint), 1, tmp_path, "int8")
    assert [p.name for p in opened] == ["predictor.int8.onnx", "parser.int8.onnx"] and "int8" in system.note
    words = [["The", "dogs", "near", "the", "house", "bark", "."], ["It", "rains", "."]]
    got, ref = system.run(words), reference(words)
    assert got["heads"].shape == ref["heads"].shape and (got["heads"][ref["heads"] < 0] == -1).all()


def test_the_timed_parser_graph_returns_the_predictors_tree_and_drops_the_distance_nodes(smoke_checkpoint, tmp_path):
    """spaCy's parser returns heads and labels; timing a graph that also builds all-pairs D̂ from them
    would charge the parser for work no parse reads, and a parser graph that computed other heads would
    time another parser."""
    import onnx

    from bench.lib.parse_speed import checkpoint_system

    system, _ = checkpoint_system(str(smoke_checkpoint), 1, tmp_path)
    nodes = {name: len(onnx.load(tmp_path / f"{name}.onnx").graph.node) for name in ("predictor", "parser")}
    assert nodes["parser"] < nodes["predictor"]
    words = [
        ["The", "dogs", "near", "the", "house", "bark", "."],
        ["It", "rains", "."],
        ["The", "keys", "to", "the", "old", "cabinet", "on", "the", "left", "of", "the", "door", "are", "lost", "."]
        * 3,
    ]
    parsed, full = system.parse(words), system.run(words)
    assert set(parsed) == {"heads", "dep_labels"} and "distances" in full
    np.testing.assert_array_equal(parsed["heads"], full["heads"])
    np.testing.assert_array_equal(parsed["dep_labels"], full["dep_labels"])
