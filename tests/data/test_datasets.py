import hashlib
import tarfile

import pytest

from parserfree.distill.data.datasets import DataConfig, apply_labels, describe, load_dataset
from parserfree.distill.data.readers import DataError, RawExample
from parserfree.distill.data.splits import split_of
from parserfree.distill.data.vader import ARCHIVE_SHA256, fetch_archive, read_ground_truth
from parserfree.encoder.text import normalise_text


def test_normalise_text():
    assert normalise_text("  a\tb\x07c\n\n d ") == "a b c d"


def test_normalise_text_turns_exactly_the_unicode_control_characters_into_spaces():
    import unicodedata

    controls = "".join(chr(i) for i in range(0x110000) if unicodedata.category(chr(i)) == "Cc")
    others = "".join(
        chr(i) for i in range(0x20, 0x3000) if unicodedata.category(chr(i)) != "Cc" and not chr(i).isspace()
    )
    assert normalise_text(f"a{controls}b") == "a b"
    assert normalise_text(others) == others


def test_split_is_deterministic_and_duplicates_stay_together():
    fractions = [0.8, 0.1, 0.1]
    texts = [f"sentence number {i}" for i in range(2000)]
    first = [split_of(t, fractions) for t in texts]
    assert first == [split_of(t, fractions) for t in texts]
    counts = {s: first.count(s) for s in ("train", "dev", "test")}
    assert 1500 < counts["train"] < 1700 and 120 < counts["dev"] < 280
    # the same sentence, differently spaced or cased, lands in the same split
    assert all(split_of(f"  SENTENCE   number {i} ", fractions) == first[i] for i in range(200))


def test_binary_view_drops_zero_scores_and_keeps_split_by_text():
    raws = [RawExample(f"text {i}", s, f"f:{i}") for i, s in enumerate([1.5, -0.2, 0.0, 3.0] * 50)]
    raws.append(RawExample("text 0", 1.5, "dup"))
    splits, names = apply_labels(raws, "binary", "score", [0.8, 0.1, 0.1])
    assert names == ["negative", "positive"]
    kept = [e for s in splits.values() for e in s]
    assert len(kept) == 151  # the 50 zero scores are dropped
    where = {s for s, exs in splits.items() for e in exs if e.text == "text 0"}
    assert len(where) == 1


def test_classification_label_only_in_test_is_an_error():
    raws = [RawExample(f"t{i}", "pos" if i % 2 else "neg", f"f:{i}") for i in range(300)]
    test_text = next(f"x{i}" for i in range(1000) if split_of(f"x{i}", [0.8, 0.1, 0.1]) == "test")
    raws.append(RawExample(test_text, "neutral", "f:999"))
    with pytest.raises(DataError, match="f:999: label 'neutral' appears in test but never in train"):
        apply_labels(raws, "classification", "label", [0.8, 0.1, 0.1])


def test_regression_needs_numbers(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("text,label\ngood,1.5\nbad,lots\n")
    with pytest.raises(DataError, match="r.csv:3: field 'label' value 'lots' is not a number"):
        load_dataset(DataConfig(dataset=str(p), task="regression"))


def test_user_file_dataset_and_describe(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text("".join(f'{{"text": "example {i} words", "label": {i % 3 - 1}}}\n' for i in range(200)))
    ds = load_dataset(DataConfig(dataset=str(p), task="binary"))
    report = describe(ds)
    assert report["read"] == 200 and report["kept"] == sum(len(v) for v in ds.splits.values())
    assert report["kept"] < 200  # label 0 rows dropped
    assert report["splits"]["train"]["length_p50"] == 3


def test_config_validation_names_the_field():
    with pytest.raises(ValueError, match="data.task"):
        DataConfig(task="ranking").validate()
    with pytest.raises(ValueError, match="data.split"):
        DataConfig(split=[0.5, 0.5, 0.5]).validate()


def test_ground_truth_reader(tmp_path):
    p = tmp_path / "movieReviewSnippets_GroundTruth.txt"
    p.write_bytes(b"1\t2.5\tA fine &amp; funny film\r\n2\t-1\tDull\r\n")
    rows = read_ground_truth(p)
    assert [(r.text, r.label) for r in rows] == [("A fine & funny film", 2.5), ("Dull", -1.0)]


def test_archive_with_wrong_checksum_is_refused(tmp_path):
    fake = tmp_path / "vaderSentiment-3.3.2.tar.gz"
    with tarfile.open(fake, "w:gz"):
        pass
    assert hashlib.sha256(fake.read_bytes()).hexdigest() != ARCHIVE_SHA256
    with pytest.raises(DataError, match="sha256 does not match"):
        fetch_archive(tmp_path / "cache", archive=fake)
