"""Like-for-like pairs: only pairs of models that differ in exactly one thing are listed as such."""

from __future__ import annotations

from parserfree.distill.recipes import get_recipe
from parserfree.like_for_like import like_for_like


def _row(recipe: str, **training) -> tuple[dict, object]:
    experiment = {
        "recipe": recipe,
        "seed": 0,
        "threads": 2,
        "data": {"cache_dir": f"/tmp/{recipe}"},
        "training": {"lr": 0.001, "init_from": None, **training},
    }
    return experiment, get_recipe(recipe)


def test_a_different_start_is_a_difference_but_a_different_cache_is_not():
    rows = {
        "twin": _row("parser_fed_twin", init_from="pre.ckpt"),
        "free": _row("parser_free", init_from="pre.ckpt"),
        "plain": _row("plain"),
        "baseline": _row("no_syntax", init_from="pre.ckpt"),
    }
    listed = {(p.a, p.b): p.differs_in for p in like_for_like(rows)}
    assert listed[("free", "twin")].startswith(
        "distance source:"
    )  # the cache folders differ, but that is no difference
    assert ("baseline", "plain") not in listed  # no predictor *and* no pre-trained start: two things
    rows["plain"] = _row("plain", init_from="pre.ckpt")
    assert {(p.a, p.b): p.differs_in for p in like_for_like(rows)}[("baseline", "plain")] == "predictor: True vs False"
