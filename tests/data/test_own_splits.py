"""A user's own splits: a file per split (``data.dataset: {train: …, dev: …, test: …}``) or a split column
(``data.split_column``) keep a benchmark's fixed split instead of re-splitting it by the hash of the text;
bad settings and values are one-line errors naming the setting, or the file, line and value; the data
digest covers every split file."""

from __future__ import annotations

import json

import pytest

from parserfree.commands import cli
from parserfree.distill.config import load_config
from parserfree.distill.data.datasets import SPLITS, DataConfig, load_dataset
from parserfree.distill.data.readers import DataError, read_file
from parserfree.distill.data.splits import split_of
from parserfree.distill.fingerprints import changes, data_digest
from parserfree.distill.held_out import held_out_of
from parserfree.encoder.schema import ConfigError
from parserfree.export.parity import parity_texts

FRACTIONS = [0.8, 0.1, 0.1]


def texts_of(split: str, n: int) -> list[str]:
    return [f"{split} sentence number {i} of the benchmark" for i in range(n)]


def write_csv(path, texts: list[str], extra: dict[str, list[str]] | None = None) -> None:
    extra = extra or {}
    header = ["text", "label", *extra]
    rows = [[t, "pos" if i % 2 else "neg", *(values[i] for values in extra.values())] for i, t in enumerate(texts)]
    path.write_text("\n".join(",".join(row) for row in [header, *rows]) + "\n", encoding="utf-8")


def split_texts(dataset) -> dict[str, set[str]]:
    return {s: {e.text for e in dataset.splits[s]} for s in SPLITS}


@pytest.fixture
def split_files(tmp_path, monkeypatch):
    """train.csv / dev.csv / test.csv with several rows each, named relative to the working directory (as a
    single file's path is read)."""
    monkeypatch.chdir(tmp_path)
    own = {"train": texts_of("train", 40), "dev": texts_of("dev", 12), "test": texts_of("test", 12)}
    for split, texts in own.items():
        write_csv(tmp_path / f"{split}.csv", texts)
    return own


def test_separate_split_files_keep_their_own_splits_not_a_hash_resplit(split_files):
    every = [t for texts in split_files.values() for t in texts]
    assert {split_of(t, FRACTIONS) for t in split_files["test"]} != {"test"}  # a hash re-split would move some
    assert sum(split_of(t, FRACTIONS) != "train" for t in every) > 5
    config = DataConfig(dataset={"train": "train.csv", "dev": "dev.csv", "test": "test.csv"}, task="classification")
    dataset = load_dataset(config)
    assert split_texts(dataset) == {s: set(texts) for s, texts in split_files.items()}
    assert dataset.n_read == len(every) and dataset.label_names == ["neg", "pos"]


def test_split_files_without_dev_carve_dev_from_the_train_file_and_leave_test_whole(split_files):
    dataset = load_dataset(DataConfig(dataset={"train": "train.csv", "test": "test.csv"}, task="classification"))
    got = split_texts(dataset)
    assert got["test"] == set(split_files["test"])
    assert got["train"] | got["dev"] == set(split_files["train"]) and not got["train"] & got["dev"]
    ninth = [8 / 9, 1 / 9, 0.0]  # data.split's train:dev ratio, 8:1, by the same hash of the text
    assert got["dev"] == {t for t in split_files["train"] if split_of(t, ninth) != "train"}
    assert 0 < len(got["dev"]) < len(got["train"])
    no_dev = load_dataset(
        DataConfig(dataset={"train": "train.csv", "test": "test.csv"}, task="classification", split=[0.9, 0.0, 0.1])
    )
    assert split_texts(no_dev)["train"] == set(split_files["train"]) and not no_dev.splits["dev"]


def test_a_validation_split_file_is_the_dev_split(split_files):
    config = DataConfig(dataset={"TRAIN": "train.csv", "validation": "dev.csv", "test": "test.csv"}, task="none")
    assert split_texts(load_dataset(config))["dev"] == set(split_files["dev"])


def test_split_files_set_on_the_command_line_load_as_a_mapping(split_files):
    config = load_config(None, ["data.dataset={train: train.csv, dev: dev.csv, test: test.csv}", "data.task=none"])
    assert split_texts(load_dataset(config.data))["test"] == set(split_files["test"])


@pytest.mark.parametrize(
    "dataset, split_column, message",
    [
        ({"train": "train.csv"}, None, r"data.dataset names no test file \(a file per split needs train and test"),
        ({"train": "a.csv", "tst": "b.csv"}, None, r"data.dataset: unknown split 'tst'"),
        ({"train": "a.csv", "dev": "b.csv", "valid": "c.csv", "test": "d.csv"}, None, r"names the dev file twice"),
        ({"train": "a.csv", "test": "a.csv"}, None, r"data.dataset.test='a.csv' is the train file too"),
        ({"train": "vader-movies", "test": "b.csv"}, None, r"data.dataset.train='vader-movies' is a built-in"),
        ({"train": ["a.csv"], "test": "b.csv"}, None, r"data.dataset.train=\['a.csv'\] must be a file path"),
        ({"train": "a.csv", "test": "b.csv"}, "split", r"data.split_column='split' .* already names a file per split"),
        ("vader-movies", "split", r"data.split_column='split' .* built-in dataset 'vader-movies' has its own splits"),
        ("a.csv", " ", r"data.split_column=' ' must name a column"),
    ],
)
def test_impossible_own_split_settings_are_one_line_config_errors_naming_the_setting(dataset, split_column, message):
    with pytest.raises(ConfigError, match=message) as caught:
        DataConfig(dataset=dataset, split_column=split_column).validate()
    assert "\n" not in str(caught.value)


def test_split_column_keeps_each_rows_split_not_a_hash_resplit(tmp_path):
    texts = texts_of("row", 30)
    values = ["train", "Validation", " TEST ", "valid", "dev", "train"] * 5
    want = {"train": "train", "validation": "dev", "test": "test", "valid": "dev", "dev": "dev"}
    expected = {s: {t for t, v in zip(texts, values, strict=True) if want[v.strip().lower()] == s} for s in SPLITS}
    assert any(split_of(t, FRACTIONS) != s for s in SPLITS for t in expected[s])  # a hash re-split would move some
    csv_path, jsonl_path = tmp_path / "rows.csv", tmp_path / "rows.jsonl"
    write_csv(csv_path, texts, {"fold": values})
    jsonl_path.write_text(
        "".join(json.dumps({"text": t, "fold": v}) + "\n" for t, v in zip(texts, values, strict=True))
    )
    for path, task in ((csv_path, "classification"), (jsonl_path, "none")):
        dataset = load_dataset(DataConfig(dataset=str(path), task=task, split_column="fold"))
        assert split_texts(dataset) == expected, path.name


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("rows.csv", "text,split\none,train\ntwo,dev\nthree,holdout\n", r"rows.csv:4: field 'split' value 'holdout'"),
        ("rows.tsv", "text\tsplit\none\ttrain\ntwo\t\n", r"rows.tsv:3: field 'split' value ''"),
        ("rows.jsonl", '{"text": "one", "split": "test"}\n{"text": "two", "split": 2}\n', r"rows.jsonl:2: .*value 2 "),
    ],
)
def test_split_column_with_an_unknown_value_names_the_file_line_and_value(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DataError, match=message + r".*is not a split \(expected train, dev or test") as caught:
        load_dataset(DataConfig(dataset=str(path), task="none", split_column="split"))
    assert "\n" not in str(caught.value)


def test_a_missing_split_column_or_field_names_the_setting(tmp_path):
    (tmp_path / "rows.csv").write_text("text,label\none,a\n")
    with pytest.raises(DataError, match=r"rows.csv:1: no column 'split' in header .*; set data.split_column"):
        read_file(tmp_path / "rows.csv", split_column="split")
    (tmp_path / "rows.jsonl").write_text('{"text": "one", "split": "dev"}\n{"text": "two"}\n')
    with pytest.raises(DataError, match=r"rows.jsonl:2: missing field 'split'; set data.split_column"):
        read_file(tmp_path / "rows.jsonl", label_column=None, split_column="split")
    (tmp_path / "rows.txt").write_text("one\ntwo\n")
    with pytest.raises(DataError, match=r"rows.txt: data.split_column='split' names a column, and a txt file has none"):
        read_file(tmp_path / "rows.txt", split_column="split")


def conllu(sent_id: str, words: list[str], split: str | None) -> str:
    comments = [f"# sent_id = {sent_id}", *([f"# split = {split}"] if split is not None else [])]
    lines = [f"{i}\t{w}\t_\tX\t_\t_\t{0 if i == len(words) else i + 1}\tdep\t_\t_" for i, w in enumerate(words, 1)]
    return "\n".join([*comments, *lines]) + "\n\n"


def test_conllu_split_comment_fixes_each_sentence_split(tmp_path):
    splits = ["train", "dev", "test", "validation"] * 4
    words = [["sentence", str(i), "here"] for i in range(len(splits))]
    path = tmp_path / "tb.conllu"
    path.write_text("".join(conllu(f"s{i}", w, s) for i, (w, s) in enumerate(zip(words, splits, strict=True))))
    dataset = load_dataset(DataConfig(dataset=str(path), task="none", split_column="split"))
    got = {e.text: s for s in SPLITS for e in dataset.splits[s]}
    assert got == {" ".join(w): ("dev" if s == "validation" else s) for w, s in zip(words, splits, strict=True)}
    path.write_text(conllu("s0", ["one"], "train") + conllu("s1", ["two"], None))
    with pytest.raises(DataError, match=r"tb.conllu:5: sentence s1 has no '# split = \.\.\.' comment"):
        read_file(path, split_column="split")
    path.write_text(conllu("s0", ["one"], "train") + conllu("s1", ["two"], "heldout"))
    with pytest.raises(DataError, match=r"tb.conllu:5: sentence s1: field 'split' value 'heldout' is not a split"):
        read_file(path, split_column="split")


def test_changing_the_dev_file_changes_the_data_digest(split_files, tmp_path):
    from parserfree.distill.config import ExperimentConfig
    from parserfree.jobs.stage_records import training_fingerprint

    config = ExperimentConfig(data=DataConfig(dataset={"train": "train.csv", "dev": "dev.csv", "test": "test.csv"}))
    before, fingerprint = data_digest(config.data), training_fingerprint(config)
    assert isinstance(before, dict) and set(before) == {"train", "dev", "test"}
    write_csv(tmp_path / "dev.csv", [*split_files["dev"], "one more dev sentence"])
    after = data_digest(config.data)
    assert isinstance(after, dict) and after["dev"] != before["dev"]
    assert after["train"] == before["train"] and after["test"] == before["test"]
    assert [line.split()[0] for line in changes(fingerprint, training_fingerprint(config))] == ["inputs.data.dev"]


def test_data_command_prints_the_splits_of_a_file_per_split_and_of_a_split_column(split_files, tmp_path, capsys):
    assert cli.main(["data", "--dataset", "{train: train.csv, dev: dev.csv, test: test.csv}", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {s: report["splits"][s]["examples"] for s in SPLITS} == {"train": 40, "dev": 12, "test": 12}
    write_csv(tmp_path / "rows.csv", texts_of("row", 6), {"split": ["train", "train", "train", "dev", "test", "test"]})
    assert (
        cli.main(["data", "--dataset", "rows.csv", "--split-column", "split", "--task", "classification", "--json"])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert {s: report["splits"][s]["examples"] for s in SPLITS} == {"train": 3, "dev": 1, "test": 2}
    assert cli.main(["data", "--dataset", "{train: train.csv}"]) == 2
    assert "data.dataset names no test file" in capsys.readouterr().err


def test_parity_check_reads_the_dev_file_of_a_file_per_split(split_files):
    data = DataConfig(dataset={"train": "train.csv", "dev": "dev.csv", "test": "test.csv"}, task="classification")
    texts, source = parity_texts(held_out_of({"data": data.__dict__}))
    assert sorted(texts) == sorted(split_files["dev"]) and source == "dev split of train.csv+dev.csv+test.csv"
