"""Bad input: every unusable file or setting stops with one line naming the file and line (or the key),
through the readers and through the CLI (exit status 2, no traceback); merely unusual input is read."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest

from parserfree.commands.cli import main
from parserfree.distill.data.readers import MAX_TEXT_CHARS, DataError, read_file

BIG = 1 << 20  # a 1 MiB field or line

BAD_FILES = [
    ("empty.csv", b"", r"empty.csv: empty file \(expected a header row\)"),
    ("blank.csv", b"\n\n  \n", r"blank.csv:1: the first line is blank"),
    ("blank.tsv", b"\r\n\r\n", r"blank.tsv:1: the first line is blank"),
    ("blank.jsonl", b"\n \n\n", r"blank.jsonl: no examples"),
    ("header_only.csv", b"text,label\n", r"header_only.csv: no examples"),
    ("columns.csv", b"sentence,stars\ngood,5\n", r"columns.csv:1: no column 'text' in header \['sentence', 'stars'\]"),
    ("utf8.csv", b"text,label\nfine,1\nbad \xe9t\xe9,1\n", r"utf8.csv:3: invalid UTF-8"),
    (
        "huge.csv",
        b"text,label\nfine,1\n" + b"a" * BIG + b",1\n",
        r"huge.csv:3: field 'text': text of 1,048,576 characters",
    ),
    (
        "huge.txt",
        b"fine\n" + b"a" * BIG + b"\n",
        r"huge.txt:2: text of 1,048,576 characters is longer than the 1,000,000",
    ),
    ("huge.jsonl", b'{"text": "' + b"a" * BIG + b'", "label": 1}\n', r"huge.jsonl:1: field 'text': text of 1,048,576"),
    (
        "quoted.csv",
        b'text,label\n"ok",1\n"' + b"b" * (17 * MAX_TEXT_CHARS) + b'",1\n',
        r"quoted.csv:3: unreadable CSV \(field larger",
    ),
]


@pytest.mark.parametrize("name, content, message", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_file_is_one_clear_data_error(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    limit = csv.field_size_limit()
    with pytest.raises(DataError, match=message) as caught:
        read_file(path)
    assert "\n" not in str(caught.value)
    assert csv.field_size_limit() == limit  # the reader's larger field limit does not leak


def test_folder_is_not_a_data_file(tmp_path):
    with pytest.raises(DataError, match="is a folder"):
        read_file(tmp_path)


def test_long_fields_up_to_the_parser_limit_are_read(tmp_path):
    path = tmp_path / "long.csv"
    long = "word " * 100_000  # 500,000 characters: more than csv's default field limit of 131,072
    path.write_text(f"text,label,notes\n{long},1,{'x' * 200_000}\nshort,0,\n", encoding="utf-8")
    rows = read_file(path)
    assert [len(r.text) for r in rows] == [len(long), 5] and rows[0].label == "1"


def test_byte_order_mark_is_not_part_of_the_header(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes("\ufefftext,label\ngood,1\n".encode("utf-8"))
    assert [(r.text, r.label) for r in read_file(path)] == [("good", "1")]


CLI_CASES = [
    ("utf8.csv", b"text,label\nfine,1\nbad \xff,1\n", [], "utf8.csv:3: invalid UTF-8"),
    ("columns.tsv", b"sentence\tstars\ngood\t5\n", [], "no column 'text'"),
    (
        "scores.tsv",
        b"text\tlabel\ngood\t1.5\nbad\tlots\n",
        ["--task", "regression"],
        "scores.tsv:3: field 'label' value 'lots' is not a number",
    ),
    (
        "cycle.conllu",
        b"# sent_id = loop7\n1\ta\t_\tX\t_\t_\t2\t_\t_\t_\n2\tb\t_\tX\t_\t_\t1\t_\t_\t_\n",
        ["--task", "none"],
        "sentence loop7",
    ),
    ("missing.csv", None, [], "missing.csv: no such file"),
]


@pytest.mark.parametrize("name, content, extra, message", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_data_on_a_bad_file_exits_2_with_one_line(tmp_path, capsys, name, content, extra, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    assert main(["data", "--dataset", str(path), *extra]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert captured.out == "" and "\n" not in err
    assert err.startswith("parserfree: error: ") and message in err


def test_cli_train_with_a_mistyped_key_exits_2_naming_it(tmp_path, capsys):
    config = tmp_path / "typo.yaml"
    config.write_text("recipe: parser_free\ntraining:\n  max_epoch: 3\n")
    assert main(["train", "--config", str(config), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "unknown key 'training.max_epoch'" in err
    assert not (tmp_path / "run").exists()


def test_cli_process_prints_no_traceback(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "fine", "label": 1}\n{"text": "broken", "label": \n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "parserfree.commands.cli", "data", "--dataset", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"parserfree: error: {path}:2: invalid JSON (Expecting value at column 29)"
    ]
