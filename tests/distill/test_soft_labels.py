"""Soft labels (distill/soft_labels.py, distill/transfer_set.py): the files, their refusals, the loss, a student."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from parserfree.distill.data.readers import DataError
from parserfree.distill.shipped import SOFT_LABELS as LABELS_FILE
from parserfree.distill.shipped import shipped_names, write_readme
from parserfree.distill.soft_labels import (
    RECORD_FILE,
    SoftLabels,
    check_fits,
    distillation_loss,
    read_soft_labels,
    read_unlabelled,
    text_key,
    texts_digest,
    transfer_pool,
    write_soft_labels,
)

TRAIN = ["the film is great .", "the story is dull .", "her performance was moving ."]
LABELS = ["negative", "positive"]


def a_set(texts=TRAIN, transfer=("a new text .",), dataset="movies") -> SoftLabels:
    texts = [*texts, *transfer]
    logits = np.array([[0.5 * i, -0.25 * i] for i in range(len(texts))], dtype=np.float16)
    parts = ["train"] * (len(texts) - len(transfer)) + ["transfer"] * len(transfer)
    record = {"dataset": dataset, "label_names": LABELS, "train_digest": texts_digest(TRAIN)}
    return SoftLabels.of_texts(texts, logits, parts, record)


def test_a_written_set_reads_back_with_its_logits(tmp_path):
    write_soft_labels(tmp_path / "set", a_set())
    soft = read_soft_labels(tmp_path / "set")
    assert soft.keys[:3] == [text_key(t) for t in TRAIN] and soft.transfer_keys() == [text_key("a new  text .")]
    assert soft.logits.dtype == np.float16 and soft.by_key()[text_key("the story is dull .")].tolist() == [0.5, -0.25]
    assert b"film" not in (tmp_path / "set" / LABELS_FILE).read_bytes()  # keys, not texts


def test_a_damaged_set_is_refused_by_its_sha256(tmp_path):
    folder = write_soft_labels(tmp_path / "set", a_set())
    data = bytearray((folder / LABELS_FILE).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (folder / LABELS_FILE).write_bytes(bytes(data))
    with pytest.raises(DataError, match="sha256 .* is not the recorded"):
        read_soft_labels(folder)


def test_a_set_without_its_record_or_labels_is_refused_in_one_line(tmp_path):
    folder = write_soft_labels(tmp_path / "set", a_set())
    (folder / LABELS_FILE).unlink()
    with pytest.raises(DataError, match="missing"):
        read_soft_labels(folder)
    with pytest.raises(DataError, match="no soft-label set here"):
        read_soft_labels(tmp_path / "nothing")


def test_a_record_whose_logits_do_not_fit_its_labels_is_refused(tmp_path):
    folder = write_soft_labels(tmp_path / "set", a_set())
    record = json.loads((folder / RECORD_FILE).read_text())
    record["label_names"] = ["a", "b", "c"]
    (folder / RECORD_FILE).write_text(json.dumps(record))
    with pytest.raises(DataError, match="do not fit"):
        read_soft_labels(folder)


def test_a_set_of_another_dataset_or_label_set_is_refused():
    soft = a_set()
    with pytest.raises(DataError, match="dataset 'movies', not this run's 'tweets'"):
        check_fits(soft, "tweets", LABELS, TRAIN, [], "training.soft_labels")
    with pytest.raises(DataError, match="not this run's"):
        check_fits(soft, "movies", ["neg", "pos"], TRAIN, [], "training.soft_labels")


def test_a_set_made_for_other_training_texts_is_refused_by_its_digest():
    soft = a_set()
    check_fits(soft, "movies", LABELS, TRAIN[:2], [], "x")  # a share of the same split is covered
    with pytest.raises(DataError, match="digest .* is not the recorded"):
        check_fits(soft, "movies", LABELS, [*TRAIN, "a training text it never saw ."], [], "x")


def test_a_set_that_labels_a_dev_or_test_text_is_refused():
    soft = a_set(transfer=("a held-out  text .",))  # normalised before comparing
    check_fits(soft, "movies", LABELS, TRAIN, ["another test text ."], "x")
    with pytest.raises(DataError, match="label a dev or test text"):
        check_fits(soft, "movies", LABELS, TRAIN, ["a held-out text ."], "x")


def test_an_unlabelled_file_without_a_usable_line_is_refused(tmp_path):
    path = tmp_path / "texts.txt"
    path.write_text("\n   \n ... \n--\n")
    with pytest.raises(DataError, match=r"texts.txt: no usable line"):
        read_unlabelled(path)
    path.write_text("one  text .\n\none text .\nanother one\n")
    assert read_unlabelled(path) == ["one text .", "another one"]


def test_the_transfer_pool_leaves_out_the_tasks_own_texts():
    pool = transfer_pool(
        ["The film is great .", "the film is great .", "a fresh  text", "x y"], ["the film is great ."], None
    )
    assert sorted(pool) == ["The film is great .", "a fresh text", "x y"]  # exact text only, case kept
    assert transfer_pool(["a", "b", "c"], [], 2) == transfer_pool(["c", "b", "a"], [], 2)  # order: hash, not input


def test_distillation_loss_is_zero_only_when_the_student_matches_the_teacher():
    teacher = torch.tensor([[2.0, -1.0], [0.0, 3.0]])
    assert distillation_loss(teacher.clone(), teacher, 2.0).item() == pytest.approx(0.0, abs=1e-6)
    assert distillation_loss(torch.zeros(2, 2), teacher, 2.0).item() > 0.1


def test_a_batch_of_transfer_texts_only_gives_a_finite_loss(smoke_overrides):
    from parserfree.distill.co_training import CoTrainingModule
    from parserfree.distill.config import load_config
    from parserfree.encoder.conventions import NO_TASK_LABEL

    config = load_config("configs/smoke.yaml", [*smoke_overrides, "training.soft_labels=unused"])
    module = CoTrainingModule.__new__(CoTrainingModule)
    module.task, module.config = "binary", config
    output = torch.tensor([[1.0, -1.0], [0.0, 0.5]], requires_grad=True)
    transfer = {
        "labels": torch.tensor([NO_TASK_LABEL, NO_TASK_LABEL]),
        "soft_logits": torch.tensor([[0.0, 2.0], [1.0, 0.0]]),
        "has_soft": torch.tensor([True, True]),
    }
    loss = module.task_loss(output, transfer)
    loss.backward()
    assert torch.isfinite(loss) and loss.item() > 0 and output.grad is not None
    gold = {**transfer, "labels": torch.tensor([0, 1]), "has_soft": torch.tensor([False, False])}
    expected = 0.5 * torch.nn.functional.cross_entropy(output, torch.tensor([0, 1]))  # α = 0.5, no soft term
    assert module.task_loss(output, gold).item() == pytest.approx(expected.item())


def test_collate_marks_transfer_texts_and_adds_soft_logits_only_to_a_students_batch():
    from parserfree.distill.data_module import EncodedExample, collate
    from parserfree.encoder import Vocabulary
    from parserfree.encoder.conventions import NO_TASK_LABEL

    vocab = Vocabulary.build([["a", "b"]], min_freq=1)
    plain = EncodedExample(("a", "b"), np.array([1, 1]), np.zeros(2, dtype=bool), 1)
    assert "soft_logits" not in collate([plain, plain], vocab, 8, "binary")
    transfer = EncodedExample(
        ("b",), np.array([0]), np.zeros(1, dtype=bool), None, soft=np.array([0.5, -0.5], np.float32)
    )
    batch = collate([plain, transfer], vocab, 8, "binary")
    assert batch["labels"].tolist() == [1, NO_TASK_LABEL]
    assert batch["has_soft"].tolist() == [False, True] and batch["soft_logits"][1].tolist() == [0.5, -0.5]


def test_a_config_with_soft_labels_for_a_regression_is_refused(smoke_overrides):
    from parserfree.distill.config import ConfigError, load_config

    with pytest.raises(ConfigError, match="teach a classifier"):
        load_config("configs/smoke.yaml", [*smoke_overrides, "data.task=regression", "training.soft_labels=auto"])


# ---- with a trained teacher (the session's smoke run): the command and a student


def test_soft_labels_never_label_a_dev_or_test_text_and_a_student_trains_on_them(
    smoke_checkpoint, smoke_overrides, sentiment_file, tmp_path
):
    from parserfree.distill.config import load_config
    from parserfree.distill.data.datasets import load_dataset
    from parserfree.distill.teacher_labels import make_soft_labels
    from parserfree.distill.train import train

    config = load_config("configs/smoke.yaml", smoke_overrides)
    dataset = load_dataset(config.data)
    dev_text = dataset.splits["dev"][0].text
    unlabelled = tmp_path / "texts.txt"
    unlabelled.write_text(f"{dev_text}\na brand new sentence about the film .\n\nthe cast felt tedious .\n")
    config = load_config("configs/smoke.yaml", [*smoke_overrides, f"data.unlabelled={unlabelled}"])
    soft = make_soft_labels(smoke_checkpoint, config, tmp_path / "set", "test", progress=False)
    assert set(soft.transfer_keys()) == {
        text_key("a brand new sentence about the film ."),
        text_key("the cast felt tedious ."),
    }
    assert soft.record["n_train"] == len({e.text for e in dataset.splits["train"]})
    assert np.isfinite(soft.logits.astype(np.float32)).all() and soft.logits.shape[1] == 2

    student = load_config(
        "configs/smoke.yaml",
        [
            *smoke_overrides,
            f"data.unlabelled={unlabelled}",  # the student finds the transfer texts again by key in the same pool
            f"training.soft_labels={tmp_path / 'set'}",
            "training.max_epochs=1",
            "recipe=no_syntax",
        ],
    )
    metrics = train(student, tmp_path / "student", progress=False)
    assert metrics["n_train"] == len(dataset.splits["train"]) + 2  # the transfer texts train too
    assert np.isfinite(metrics["dev"]["metric"])
    unlabelled.write_text("a brand new sentence about the film .\n")  # the pool lost a text the set labels
    with pytest.raises(DataError, match="1 of the set's 2 transfer texts are not in this run's transfer pool"):
        train(student, tmp_path / "student-again", progress=False)


def test_a_teacher_of_another_dataset_is_refused_and_nothing_is_written(smoke_checkpoint, smoke_overrides, tmp_path):
    from parserfree.distill.config import load_config
    from parserfree.distill.teacher_labels import make_soft_labels

    other = tmp_path / "other.jsonl"
    other.write_text(
        "".join(json.dumps({"text": f"text number {i} .", "label": 1 - 2 * (i % 2)}) + "\n" for i in range(60))
    )
    config = load_config("configs/smoke.yaml", [*smoke_overrides, f"data.dataset={other}"])
    with pytest.raises(DataError, match="a teacher of dataset"):
        make_soft_labels(smoke_checkpoint, config, tmp_path / "set", "test", progress=False)
    assert not (tmp_path / "set").exists()


def test_the_teacher_of_a_task_folder_is_its_row_best_on_dev_not_on_test(tmp_path):
    """``--teacher runs/base/agreement``: the row best on dev teaches (choosing on test would leak it)."""
    from parserfree.distill.teacher_labels import choose_teacher

    for row, dev, test in (("no_syntax", 0.95, 0.97), ("parser_fed_twin", 0.96, 0.94), ("locality", 0.90, 0.99)):
        (tmp_path / row).mkdir()
        metrics = {"dev": {"metric": dev}, "test": {"metric": test}, "best_checkpoint": f"/runs/{row}/best.ckpt"}
        (tmp_path / row / "metrics.json").write_text(json.dumps(metrics))
    checkpoint, chosen_from = choose_teacher(tmp_path)
    assert str(checkpoint) == "/runs/parser_fed_twin/best.ckpt"
    assert chosen_from == {"locality": 0.9, "no_syntax": 0.95, "parser_fed_twin": 0.96}
    with pytest.raises(DataError, match="no row with a dev metric"):
        choose_teacher(tmp_path / "locality")


def test_a_shipped_soft_label_set_is_listed_apart_from_the_shipped_models(tmp_path):
    """A soft-label set in models/ is no model to load (no model.ckpt): the models' list leaves it out and the
    README lists it in its own table."""
    model = tmp_path / "parser-x"
    model.mkdir()
    (model / "record.json").write_text(
        json.dumps({"format": 1, "sha256": "0", "name": "parser-x", "bytes": 1, "command": "c"})
    )
    soft = a_set()
    soft.record.update(
        {"teacher": {"recipe": "parser_fed_twin", "encoder": "m", "dev_metric": 96.12}, "n_train": 3, "n_transfer": 1}
    )
    write_soft_labels(tmp_path / "soft-labels-movies", soft)
    assert shipped_names(tmp_path) == ["parser-x"]
    write_readme(tmp_path)
    readme = (tmp_path / "README.md").read_text()
    assert "| `soft-labels-movies` | m parser_fed_twin | 96.12 / – | 3 | 1 |" in readme


@pytest.mark.parametrize("config", ["configs/main/agreement.yaml", "configs/main/sentiment.yaml"])
def test_the_student_size_finds_a_shipped_set_that_matches_its_record(config):
    """``--size student`` reads builtin:soft-labels-<dataset> (training.soft_labels: auto): a set missing from
    models/, damaged, or made for another label set fails here, not minutes into the student job."""
    from parserfree.distill.config import load_config
    from parserfree.distill.soft_labels import resolve

    student = load_config(config, size="student")
    assert student.training.soft_labels == "auto" and student.encoder.pretrained is None
    soft = read_soft_labels(resolve(student.training.soft_labels, student.data.dataset))
    assert soft.record["dataset"] == student.data.dataset and soft.record["teacher"]["encoder"] != "64-wide"
    assert soft.record["n_transfer"] >= student.training.transfer_limit


def test_auto_for_a_dataset_without_shipped_labels_says_how_to_make_them():
    from parserfree.distill.soft_labels import resolve

    with pytest.raises(DataError, match="no shipped soft labels for dataset 'my_reviews'.*parserfree soft-labels"):
        resolve("auto", "my_reviews")


def test_the_commands_refuse_a_missing_teacher_or_student_job_in_one_line(tmp_path, capsys, smoke_overrides):
    """``parserfree soft-labels`` and ``student-report`` reach their modules (their imports are lazy) and end
    bad input in one line, writing nothing."""
    import parserfree.commands.cli as cli

    argv = ["soft-labels", "--teacher", str(tmp_path / "none"), "--config", "configs/smoke.yaml"]
    sets = [a for o in smoke_overrides for a in ("--set", o)]
    assert cli.main([*argv, *sets, "--out", str(tmp_path / "set")]) == 2
    assert cli.main(["student-report", "--student", str(tmp_path), "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "none" in err[0] and "no task with a report here" in err[1]
    assert not (tmp_path / "set").exists() and not (tmp_path / "r.json").exists()
