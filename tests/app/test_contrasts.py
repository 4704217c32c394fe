"""Contrasts: only pairs of models that differ in exactly one thing are listed as such."""

from __future__ import annotations

from types import SimpleNamespace

from parserfree.compare import contrasts
from parserfree.distill.recipes import get_recipe


def _source(recipe: str, **training) -> SimpleNamespace:
    experiment = {"recipe": recipe, "seed": 0, "threads": 2, "data": {"cache_dir": f"/tmp/{recipe}"},
                  "training": {"lr": 0.001, "init_from": None, **training}}
    return SimpleNamespace(trained=SimpleNamespace(experiment=experiment), row=get_recipe(recipe))


def test_a_different_start_is_a_difference_but_a_different_cache_is_not():
    sources = {"twin": _source("parser_fed_twin", init_from="pre.ckpt"), "free": _source("parser_free", init_from="pre.ckpt"),
               "plain": _source("plain"), "baseline": _source("no_syntax", init_from="pre.ckpt")}
    listed = {(c["a"], c["b"]): c["differs_in"] for c in contrasts(sources)}
    assert listed[("free", "twin")].startswith("distance source:")  # the cache folders differ, but that is no difference
    assert ("baseline", "plain") not in listed  # no predictor *and* no pre-trained start: two things
    sources["plain"] = _source("plain", init_from="pre.ckpt")
    assert {(c["a"], c["b"]): c["differs_in"] for c in contrasts(sources)}[("baseline", "plain")] == "predictor: True vs False"
