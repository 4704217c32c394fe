"""`parserfree export` and `parserfree predict` end to end through the CLI's main()."""

from __future__ import annotations

import json

import pytest
from awkward import EMPTY_AFTER_NORMALISATION

from parserfree.commands.cli import main
from parserfree.export import ParserFreeModel


def test_predict_file_to_file(smoke_bundle, tmp_path, capsys, awkward_texts):
    lines = {k: t.replace("\n", " ") for k, t in awkward_texts.items()}  # one line each
    lines["crlf"] = "Bad.\r"  # a Windows line end is not part of the text
    source = tmp_path / "in.txt"
    source.write_bytes("\n".join(lines.values()).encode("utf-8") + b"\n")
    target = tmp_path / "out.jsonl"
    rc = main(
        [
            "predict",
            "--model",
            str(smoke_bundle[0]),
            "--input",
            str(source),
            "--output",
            str(target),
            "--with-tree",
            "--batch-size",
            "3",
            "--threads",
            "1",
        ]
    )
    assert rc == 0
    written = target.read_text(encoding="utf-8").splitlines()
    rows = dict(zip(lines, (json.loads(line) for line in written), strict=True))  # one output line per input line
    assert [k for k, r in rows.items() if "error" in r] == list(EMPTY_AFTER_NORMALISATION)
    assert rows["emoji_cjk"]["words"] == ["😀", "很好"] and rows["long"]["truncated"] is True
    assert rows["crlf"]["words"] == ["Bad", "."]
    assert all("tree" in r for r in rows.values() if "error" not in r)
    assert f"{len(lines)} predictions" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] != [] and not list(tmp_path.glob(".out.jsonl*"))


def test_invalid_utf8_is_a_one_line_error_with_the_line_number(smoke_bundle, tmp_path, capsys):
    source = tmp_path / "in.txt"
    source.write_bytes(b"fine\nalso fine\nbad \xff byte\n")
    target = tmp_path / "out.jsonl"
    rc = main(["predict", "--model", str(smoke_bundle[0]), "--input", str(source), "--output", str(target)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert err[0].startswith("parserfree: error:") and "in.txt:3: invalid UTF-8" in err[0]
    assert not target.exists()


def test_damaged_bundle_is_a_one_line_error(bundle_copy, tmp_path, capsys):
    (bundle_copy / "labels.json").write_text("{}")
    rc = main(["predict", "--model", str(bundle_copy), "--input", str(tmp_path / "missing.txt")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "labels.json" in err and "\n" not in err


def test_export_command_writes_a_no_syntax_regression_bundle(recipe_checkpoint, tmp_path, capsys):
    checkpoint = str(recipe_checkpoint("no_syntax", "regression"))
    out = tmp_path / "plain"
    rc = main(["export", "--checkpoint", checkpoint, "--out", str(out), "--threads", "1"])
    printed = capsys.readouterr().out
    assert rc == 0 and "no_syntax bundle" in printed and "default" in printed
    model = ParserFreeModel.load(out)
    assert model.recipe == "no_syntax" and model.task == "regression"
    assert model.manifest["outputs"] == [{"name": "task_output", "dtype": "float32", "shape": ["batch"]}]
    assert model.manifest["parity"]["default"]["prediction_agreement"] is None
    first, empty = model.predict(["Not bad at all.", ""])
    assert isinstance(first["score"], float) and "label" not in first and empty == {"error": "empty text"}
    with pytest.raises(ValueError, match="no distances"):
        model.predict(["Fine."], with_tree=True)
    assert main(["export", "--checkpoint", checkpoint, "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    (out / "stale.txt").write_text("from the old bundle")
    assert main(["export", "--checkpoint", checkpoint, "--out", str(out), "--overwrite"]) == 0
    assert not (out / "stale.txt").exists() and ParserFreeModel.load(out).recipe == "no_syntax"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]
