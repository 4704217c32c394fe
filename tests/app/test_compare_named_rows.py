"""An extra row of a recipe already compared (a setting's variant beside its row) must be named, and then is a
row of its own with a like-for-like verdict against the row it varies. (The bug: rows were named by recipe
only, so a twin with another bias setting could not stand beside the twin it varies.)"""

from __future__ import annotations

import pytest
import torch

from parserfree.commands.cli import named_row
from parserfree.comparison.compare import ComparedModels, CompareOptions, compare
from parserfree.encoder.errors import UsageError


def variant_of(checkpoint, path, **settings) -> str:
    """A copy of ``checkpoint`` whose recorded training settings differ in ``settings`` (same weights)."""
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    state["parserfree"]["experiment"]["training"].update(settings)
    torch.save(state, path)
    return str(path)


def test_an_extra_row_of_the_twins_recipe_is_refused_unnamed_and_compared_when_named(
    smoke_bundle, recipe_checkpoint, sentiment_file, tmp_path
):
    twin = recipe_checkpoint("parser_fed_twin")
    variant = variant_of(twin, tmp_path / "variant.ckpt", bias_lr_multiplier=7.0)
    options = CompareOptions(max_examples=20, latency_examples=2, threads=1, progress=False, baselines=False)
    unnamed = ComparedModels(parser_free=[smoke_bundle[0]], reference=[twin], extra=[[variant]])
    with pytest.raises(UsageError, match="two rows named parser_fed_twin.*--extra NAME=PATH"):
        compare(unnamed, [str(sentiment_file)], tmp_path / "unnamed", options)

    name, path = named_row(f"twin_fast_bias={variant}")
    named = ComparedModels([smoke_bundle[0]], [twin], extra=[[path]], extra_names=[name])
    report = compare(named, [str(sentiment_file)], tmp_path / "named", options)
    assert {"parser_free", "parser_fed_twin", "twin_fast_bias"} <= set(report.models)
    pair = [c for c in report.contrasts if {c.a, c.b} == {"parser_fed_twin", "twin_fast_bias"}]
    assert pair and "training.bias_lr_multiplier" in pair[0].differs_in


def test_a_bare_extra_path_keeps_its_recipes_name():
    assert named_row("runs/a=b/best.ckpt") == (None, "runs/a=b/best.ckpt")  # "runs/a" is no name
    assert named_row("runs/locality") == (None, "runs/locality")
    assert named_row("v1=runs/v/{seed}/best.ckpt") == ("v1", "runs/v/{seed}/best.ckpt")
