"""The CLI's error contract: bad input (a ParserfreeError) is one line and exit status 2, ``--debug`` shows
its traceback, and a bug — any other exception, a stray ValueError included — keeps its traceback."""

from __future__ import annotations

import ast
import importlib

import pytest

import parserfree.commands.cli as cli
import parserfree.commands.data as data_commands
from parserfree.distill.data.readers import DataError
from parserfree.encoder.errors import ParserfreeError

from source_tree import library_files


def test_a_stray_value_error_in_a_command_keeps_its_traceback(monkeypatch, tmp_path):
    def buggy(args):
        raise ValueError("a bug, not bad input")

    monkeypatch.setattr(data_commands, "cmd_data", buggy)
    with pytest.raises(ValueError, match="a bug"):
        cli.main(["data", "--dataset", str(tmp_path / "x.csv")])


@pytest.mark.parametrize("where", ["after", "before"])
def test_debug_re_raises_bad_input_with_its_traceback(tmp_path, where):
    missing = str(tmp_path / "missing.csv")
    argv = ["data", "--dataset", missing, "--debug"] if where == "after" else ["--debug", "data", "--dataset", missing]
    with pytest.raises(DataError, match="missing.csv: no such file"):
        cli.main(argv)


def test_bad_input_without_debug_is_one_line_and_status_2(tmp_path, capsys):
    assert cli.main(["data", "--dataset", str(tmp_path / "missing.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("parserfree: error: ") and "missing.csv: no such file" in err


def _error_classes() -> list[tuple[str, str]]:
    """(module, class) of every class named *Error defined in the package sources."""
    found = []
    for module, path in library_files():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and node.name.endswith("Error"):
                found.append((module, node.name))
    return found


def test_every_error_class_of_the_package_is_a_parserfree_error():
    classes = _error_classes()
    assert len(classes) >= 9  # ConfigError, DataError, TreeError, CheckpointError, CacheError, TeacherError, ...
    not_derived = [
        f"{m}.{name}"
        for m, name in classes
        if not issubclass(getattr(importlib.import_module(m), name), ParserfreeError)
    ]
    assert not_derived == []


@pytest.mark.parametrize("placeholder", ["", "two words"])
def test_a_masked_parse_placeholder_that_is_not_one_word_is_refused_in_one_line(placeholder, tmp_path, capsys):
    # an empty placeholder would leave the hidden words in spaCy's input; one with a space, a token spaCy never makes
    argv = ["lm-compare", "--runs", str(tmp_path), "--out", str(tmp_path / "out"), "--masked-parse", placeholder]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "--masked-parse" in err and "one word" in err and len(err.strip().splitlines()) == 1


def test_every_distribution_of_the_train_extra_is_a_training_module():
    """Catches a dependency added to the `train` extra but not to ``TRAINING_MODULES``: in a serving install
    its missing import would be a traceback instead of the line that names the extra."""
    from collections import defaultdict
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    modules_of: dict[str, set[str]] = defaultdict(set)
    for module, dists in metadata.packages_distributions().items():
        for dist in dists:
            modules_of[canonicalize_name(dist)].add(module)
    extra = [
        r.name
        for r in map(Requirement, metadata.requires("parserfree") or [])
        if r.marker and r.marker.evaluate({"extra": "train"}) and not r.marker.evaluate({"extra": ""})
    ]
    assert "torch" in extra and "transformers" in extra
    uncovered = [d for d in extra if not modules_of[canonicalize_name(d)] & cli.TRAINING_MODULES]
    assert not uncovered, f"the train extra's {uncovered} have no module in TRAINING_MODULES"
