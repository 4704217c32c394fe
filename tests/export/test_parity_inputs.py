"""Parity inputs: held-out sentences when the data is at hand, built-in ones (never a download) otherwise."""

from __future__ import annotations

from parserfree.core.checkpoints import load_trained
from parserfree.distill.held_out import held_out_of
from parserfree.export import ParserFreeModel
from parserfree.export.parity import FALLBACK_TEXTS, build_parity_set
from parserfree.export.parity import parity_texts as parity_texts_of


def parity_texts(experiment: dict) -> tuple[list[str], str]:
    """The parity texts an export of a checkpoint trained under ``experiment`` checks its graphs on."""
    return parity_texts_of(held_out_of(experiment))


def test_unreadable_data_falls_back_to_built_in_sentences(tmp_path):
    texts, source = parity_texts({"data": {"dataset": str(tmp_path / "gone.jsonl")}})
    assert texts == list(FALLBACK_TEXTS) and source.startswith("built-in example sentences")
    texts, source = parity_texts({"data": {"dataset": "vader-movies", "cache_dir": str(tmp_path)}})
    assert texts == list(FALLBACK_TEXTS) and "not available locally" in source
    assert not (tmp_path / "vader").exists()  # nothing was fetched


def test_a_list_dataset_is_local_data_not_an_unhashable_list_error(tmp_path):
    """data.dataset may be a list of files joined as unlabeled text (predictor pre-training): its held-out
    sentences are the parity texts, and a missing member is named, not a TypeError."""
    files = []
    for k in range(2):
        f = tmp_path / f"part{k}.txt"
        f.write_text("".join(f"Sentence number {i} of part {k} is here.\n" for i in range(30)))
        files.append(str(f))
    texts, source = parity_texts({"data": {"dataset": files, "task": "none"}})
    assert source.split(" split of ")[0] in ("dev", "test") and texts
    assert all(t.startswith("Sentence number") for t in texts)
    missing = str(tmp_path / "gone.txt")
    texts, source = parity_texts({"data": {"dataset": [files[0], missing], "task": "none"}})
    assert texts == list(FALLBACK_TEXTS) and f"{missing} is not available locally" in source


def test_fallback_sentences_make_batches_unlike_the_trace(smoke_bundle, smoke_checkpoint):
    model = ParserFreeModel.load(smoke_bundle[0])
    vocab = load_trained(smoke_checkpoint).vocab

    def analyse(texts):
        return [(w, None) for w in model.tokenize(texts)]

    parity = build_parity_set(FALLBACK_TEXTS, "built-in", analyse, vocab, 64, (2, 5))
    assert len(parity.shapes) >= 3 and [2, 5] not in parity.shapes
    assert parity.shapes[0] == [1, 64]  # the multi-sentence example fills max_len


def test_every_built_in_dataset_is_read_from_the_cache_only(tmp_path):
    for name in ("agreement", "oanc", "pl-reviews"):
        texts, source = parity_texts({"data": {"dataset": name, "cache_dir": str(tmp_path)}})
        assert texts == list(FALLBACK_TEXTS) and f"{name} is not available locally" in source
    assert not any(tmp_path.iterdir())  # nothing was downloaded, tagged or built


def test_a_graph_whose_heads_or_labels_differ_fails_the_parity_check():
    """D̂ within tolerance is not enough: one word with another head (or label) than PyTorch's fails."""
    import numpy as np
    import pytest

    from parserfree.export.errors import ExportError
    from parserfree.export.parity import ParitySet, compare_outputs, require_parity

    mask = np.array([[True, True, True], [True, True, False]])
    feeds = {"word_ids": np.ones((2, 3), dtype=np.int64), "mask": mask}
    ref = {
        "task_output": np.zeros((2, 2), dtype=np.float32),
        "distances": np.zeros((2, 3, 3), dtype=np.float32),
        "heads": np.array([[1, 1, 1], [0, 0, -1]]),
        "dep_labels": np.array([[2, 0, 3], [0, 1, -1]]),
    }
    parity = ParitySet("fixture", [feeds])
    same = compare_outputs([ref], lambda f: dict(ref), parity, "binary")
    require_parity(same, "model.onnx")
    assert same["heads_differing"] == 0 and same["labels_differing"] == 0
    for name, what in (
        ("heads", "heads differing on 20.0% of words"),
        ("dep_labels", "labels differing on 20.0% of words"),
    ):
        other = {**ref, name: ref[name].copy()}
        other[name][1, 1] = 2  # one word of five
        other[name][1, 2] = 7  # padding: not compared
        report = compare_outputs([ref], lambda f, other=other: other, parity, "binary")
        with pytest.raises(ExportError, match=what):
            require_parity(report, "model.onnx")
