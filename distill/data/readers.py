"""Readers: user files → raw examples (text, label, and for CoNLL-U the gold words and heads).

The first step of the data flow for a user's own data. Every reader yields ``RawExample`` records and
reports bad input as a one-line ``DataError`` naming the file, the line and the field, never a raw
traceback. Formats: CSV / TSV / JSONL with configurable text and label columns, plain text (one example
per line, unlabeled: for predictor pre-training) and CoNLL-U (gold trees used instead of the parser).
Texts may be up to ``MAX_TEXT_CHARS`` characters (what the parser accepts; the encoder reads only the
first ``max_len`` words anyway), CSV fields of other columns up to 16 times that. A split column
(``data.split_column``; CoNLL-U: a ``# NAME = VALUE`` comment) fixes each example's split
(``RawExample.split``): train, dev or test (validation / valid mean dev).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.trees import TreeError, heads_from_one_based, validate_heads
from ...encoder.errors import ParserfreeError

FORMATS = ("csv", "tsv", "jsonl", "txt", "conllu")
MAX_TEXT_CHARS = 1_000_000  # spaCy's default nlp.max_length: the parser refuses longer texts
SPLIT_NAMES = {"train": "train", "dev": "dev", "test": "test", "validation": "dev", "valid": "dev"}
"""The values a split column (or a split file's key) may hold, case-insensitive, and the split each means."""


class DataError(ParserfreeError, ValueError):
    """Bad input data; the message names the file, line and field."""


@dataclass(frozen=True)
class RawExample:
    """One example as read: text, an optional raw label, (CoNLL-U only) gold words/heads/punct, and for
    built-in datasets a split group, a fixed split and extra per-example columns."""

    text: str
    label: str | float | None = None
    source: str = ""
    words: tuple[str, ...] | None = None
    heads: tuple[int, ...] | None = None
    punct: tuple[bool, ...] | None = None
    group: str | None = None  # examples of one group share a split (e.g. the sentences of one review)
    split: str | None = None  # a split fixed by the dataset itself (e.g. a stratified split)
    columns: Mapping[str, Any] | None = field(default=None, hash=False, compare=False)  # e.g. attractors, distance


def detect_format(path: Path) -> str:
    """Format from the file extension (.csv .tsv .jsonl/.json .txt .conllu/.conll)."""
    ext = path.suffix.lower().lstrip(".")
    ext = {"json": "jsonl", "conll": "conllu", "text": "txt"}.get(ext, ext)
    if ext not in FORMATS:
        raise DataError(f"{path}: cannot tell the format from '.{ext}'; set data.format to one of {FORMATS}")
    return ext


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """Numbered text lines of a UTF-8 file (a leading byte-order mark is dropped); invalid UTF-8 is
    reported with its line number."""
    try:
        fh = open(path, "rb")
    except OSError as e:
        raise DataError(f"{path}: cannot open ({e.strerror})") from None
    with fh:
        for number, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise DataError(f"{path}:{number}: invalid UTF-8 at byte {e.start}") from None
            if number == 1:
                line = line.removeprefix("\ufeff")
            yield number, line.rstrip("\r\n")


def split_name(value: Any, where: str, column: str) -> str:
    """The split a split column's value names (train, dev or test), or a DataError naming ``where``."""
    split = SPLIT_NAMES.get(value.strip().lower()) if isinstance(value, str) else None
    if split is None:
        raise DataError(
            f"{where}: field '{column}' value {value!r} is not a split "
            "(expected train, dev or test; validation / valid mean dev)"
        )
    return split


def _checked_text(text: str, where: str) -> str:
    """The text itself, or a DataError when the parser could not take it."""
    if len(text) > MAX_TEXT_CHARS:
        raise DataError(
            f"{where}: text of {len(text):,} characters is longer than the {MAX_TEXT_CHARS:,} "
            "the parser accepts; split it into shorter examples"
        )
    return text


def read_delimited(
    path: Path, text_column: str, label_column: str | None, delimiter: str, split_column: str | None = None
) -> Iterator[RawExample]:
    """CSV/TSV with a header row; ``text_column``, ``label_column`` and ``split_column`` name columns of
    that header."""
    kind = "TSV" if delimiter == "\t" else "CSV"
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, 16 * MAX_TEXT_CHARS))
    rows = csv.reader(
        (line + "\n" for _, line in _lines(path)), delimiter=delimiter
    )  # the "\n" keeps line breaks inside quoted fields
    try:
        yield from _delimited_rows(path, rows, text_column, label_column, split_column)
    except csv.Error as e:
        raise DataError(f"{path}:{rows.line_num}: unreadable {kind} ({e})") from None
    finally:
        csv.field_size_limit(limit)


def _delimited_rows(
    path: Path, rows, text_column: str, label_column: str | None, split_column: str | None
) -> Iterator[RawExample]:
    """The rows of a csv.reader after its header row, as raw examples."""
    try:
        header = next(rows)
    except StopIteration:
        raise DataError(f"{path}: empty file (expected a header row)") from None
    if not any(cell.strip() for cell in header):
        raise DataError(f"{path}:1: the first line is blank (expected a header row naming the columns)")
    for col, setting in _columns(text_column, label_column, split_column):
        if col not in header:
            raise DataError(f"{path}:1: no column '{col}' in header {header}; set {setting}")
    ti = header.index(text_column)
    li = header.index(label_column) if label_column else None
    si = header.index(split_column) if split_column else None
    for row in rows:
        number = rows.line_num
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise DataError(f"{path}:{number}: expected {len(header)} fields, found {len(row)}")
        text = _checked_text(row[ti], f"{path}:{number}: field '{text_column}'")
        split = split_name(row[si], f"{path}:{number}", split_column) if split_column and si is not None else None
        yield RawExample(text, row[li] if li is not None else None, f"{path}:{number}", split=split)


def _columns(text_column: str, label_column: str | None, split_column: str | None) -> list[tuple[str, str]]:
    """The columns (or fields) a row must have, each with the setting that names it."""
    named = [
        (text_column, "data.text_column"),
        (label_column, "data.label_column"),
        (split_column, "data.split_column"),
    ]
    return [(col, setting) for col, setting in named if col is not None]


def read_jsonl(
    path: Path, text_column: str, label_column: str | None, split_column: str | None = None
) -> Iterator[RawExample]:
    """JSON lines, one object per line, with the text (and label, and split) under the configured keys."""
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(f"{path}:{number}: invalid JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(obj, dict):
            raise DataError(f"{path}:{number}: expected a JSON object, found {type(obj).__name__}")
        for key, setting in _columns(text_column, label_column, split_column):
            if key not in obj:
                raise DataError(f"{path}:{number}: missing field '{key}'; set {setting}")
        text = obj[text_column]
        if not isinstance(text, str):
            raise DataError(f"{path}:{number}: field '{text_column}' must be a string")
        _checked_text(text, f"{path}:{number}: field '{text_column}'")
        split = split_name(obj[split_column], f"{path}:{number}", split_column) if split_column else None
        yield RawExample(text, obj[label_column] if label_column else None, f"{path}:{number}", split=split)


def read_plain_text(path: Path) -> Iterator[RawExample]:
    """One unlabeled example per non-blank line."""
    for number, line in _lines(path):
        if line.strip():
            yield RawExample(_checked_text(line, f"{path}:{number}"), None, f"{path}:{number}")


def read_conllu(path: Path, label_key: str = "label", split_key: str | None = None) -> Iterator[RawExample]:
    """CoNLL-U sentences with gold trees (1-based heads, 0 = root) and their DEPREL labels
    (``columns["deps"]``, when a sentence gives any: ``_`` is no label).

    Multiword-token lines (``1-2``) and empty nodes (``1.1``) are skipped. A ``# <label_key> = VALUE``
    comment gives the sentence a label; ``# text =`` its text (else the words joined by spaces); with a
    ``split_key``, every sentence needs a ``# <split_key> = train|dev|test`` comment, its split.
    Cycles and out-of-range heads are rejected naming the sentence id.
    """
    words: list[str] = []
    heads: list[int] = []
    punct: list[bool] = []
    deps: list[str] = []
    meta: dict[str, str] = {}
    start = 0

    def finish() -> RawExample:
        sent_id = meta.get("sent_id", f"starting at line {start}")
        try:
            h = validate_heads(heads_from_one_based(heads))
        except TreeError as e:
            raise DataError(f"{path}:{start}: sentence {sent_id}: {e}") from None
        text = meta.get("text", " ".join(words))
        columns = {"deps": tuple(deps)} if any(deps) else None
        split = None
        if split_key is not None:
            if split_key not in meta:
                raise DataError(
                    f"{path}:{start}: sentence {sent_id} has no '# {split_key} = ...' comment; set data.split_column"
                )
            split = split_name(meta[split_key], f"{path}:{start}: sentence {sent_id}", split_key)
        return RawExample(
            text,
            meta.get(label_key),
            f"{path}:{start}",
            tuple(words),
            tuple(int(x) for x in h),
            tuple(punct),
            split=split,
            columns=columns,
        )

    for number, line in _lines(path):
        if not line.strip():
            if words:
                yield finish()
            words, heads, punct, deps, meta = [], [], [], [], {}
            continue
        if not words and not meta:
            start = number
        if line.startswith("#"):
            key, sep, value = line[1:].partition("=")
            if sep:
                meta[key.strip()] = value.strip()
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise DataError(f"{path}:{number}: expected 10 tab-separated CoNLL-U fields, found {len(cols)}")
        if "-" in cols[0] or "." in cols[0]:
            continue
        try:
            heads.append(int(cols[6]))
        except ValueError:
            raise DataError(f"{path}:{number}: HEAD field '{cols[6]}' is not an integer") from None
        words.append(cols[1])
        punct.append(cols[3] == "PUNCT")
        deps.append("" if cols[7] == "_" else cols[7])
    if words:
        yield finish()


def read_file(
    path: str | Path,
    fmt: str | None = None,
    text_column: str = "text",
    label_column: str | None = "label",
    split_column: str | None = None,
) -> list[RawExample]:
    """Read a user file of any supported format into raw examples (an empty result is an error); with a
    ``split_column`` each example's split is the one that column (CoNLL-U: that comment) names."""
    p = Path(path)
    if not p.exists():
        raise DataError(f"{p}: no such file")
    if p.is_dir():
        raise DataError(f"{p}: is a folder; expected a data file ({', '.join(FORMATS)})")
    fmt = fmt or detect_format(p)
    if fmt == "txt" and split_column is not None:
        raise DataError(
            f"{p}: data.split_column='{split_column}' names a column, and a txt file has none "
            "(give each split its own file, or use csv, tsv, jsonl or conllu)"
        )
    if fmt == "csv":
        out = list(read_delimited(p, text_column, label_column, ",", split_column))
    elif fmt == "tsv":
        out = list(read_delimited(p, text_column, label_column, "\t", split_column))
    elif fmt == "jsonl":
        out = list(read_jsonl(p, text_column, label_column, split_column))
    elif fmt == "txt":
        out = list(read_plain_text(p))
    elif fmt == "conllu":
        out = list(read_conllu(p, split_key=split_column))
    else:
        raise DataError(f"{p}: unknown format '{fmt}', expected one of {FORMATS}")
    if not out:
        raise DataError(f"{p}: no examples (the file is empty or holds only blank lines)")
    return out
