"""Like-for-like pairs: only pairs of models that differ in exactly one thing are listed as such."""

from __future__ import annotations

from parserfree.comparison.like_for_like import like_for_like
from parserfree.core.recipes import get_recipe


def _row(recipe: str, **training) -> tuple[dict, object]:
    experiment = {
        "recipe": recipe,
        "seed": 0,
        "threads": 2,
        "data": {"cache_dir": f"/tmp/{recipe}"},
        "training": {"lr": 0.001, "init_from": None, **training},
    }
    return experiment, get_recipe(recipe)


def _masked_lm_start(settings_checkpoint, path, recipe: str, **training) -> str:
    """A masked-LM checkpoint's file, pre-trained as ``recipe`` (only its settings are read)."""
    experiment = {"recipe": recipe, "data": {"task": "masked_lm"}, "training": {"lr": 0.001, **training}}
    return settings_checkpoint(path, experiment, "masked_lm", recipe)


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


def test_rows_from_their_own_masked_lm_encoders_differ_in_the_distance_source_only(tmp_path, settings_checkpoint):
    """The main job's rows each start from the masked-LM encoder of their own row: no_syntax against the twin
    is still like for like (it once dropped out of the report as "two things"); starts pre-trained under other
    settings, or a row started from another row's encoder, are a difference of their own."""
    twin_lm = _masked_lm_start(settings_checkpoint, tmp_path / "twin.ckpt", "parser_fed_twin")
    plain_lm = _masked_lm_start(settings_checkpoint, tmp_path / "none.ckpt", "no_syntax")
    rows = {
        "twin": _row("parser_fed_twin", init_from=twin_lm),
        "free": _row("parser_free", init_from=twin_lm),
        "none": _row("no_syntax", init_from=plain_lm),
    }
    listed = {(p.a, p.b): p.differs_in for p in like_for_like(rows)}
    assert (
        listed[("none", "twin")] == "distance source: none→none vs parser→parser (each from its own masked-LM encoder)"
    )
    assert listed[("free", "none")].startswith("distance source: scheduled→predicted vs none→none")
    assert listed[("free", "twin")] == "distance source: scheduled→predicted vs parser→parser"
    longer = _masked_lm_start(settings_checkpoint, tmp_path / "none-lr.ckpt", "no_syntax", lr=0.01)
    rows["none"] = _row("no_syntax", init_from=longer)
    assert ("none", "twin") not in {(p.a, p.b) for p in like_for_like(rows)}  # the starts differ in lr too
    rows["none"] = _row("no_syntax", init_from=twin_lm)  # the twin's encoder is not no_syntax's own
    rows["twin"] = _row("parser_fed_twin", init_from=plain_lm)
    assert ("none", "twin") not in {(p.a, p.b) for p in like_for_like(rows)}


def test_a_parser_free_row_from_a_parser_fed_encoder_is_not_its_twins_start(tmp_path, settings_checkpoint):
    """parser_free's own start is its twin's encoder (a reference row with a predictor); a parser_fed encoder
    (no predictor) was once accepted as its own, so parser_free against parser_fed read as like for like."""
    fed_lm = _masked_lm_start(settings_checkpoint, tmp_path / "fed.ckpt", "parser_fed")
    twin_lm = _masked_lm_start(settings_checkpoint, tmp_path / "twin.ckpt", "parser_fed_twin")
    plain_lm = _masked_lm_start(settings_checkpoint, tmp_path / "none.ckpt", "no_syntax")
    rows = {"free": _row("parser_free", init_from=fed_lm), "none": _row("no_syntax", init_from=plain_lm)}
    assert ("free", "none") not in {(p.a, p.b) for p in like_for_like(rows)}  # the start differs too
    rows["free"] = _row("parser_free", init_from=twin_lm)
    assert {(p.a, p.b): p.differs_in for p in like_for_like(rows)}[("free", "none")] == (
        "distance source: scheduled→predicted vs none→none (each from its own masked-LM encoder)"
    )


def test_a_row_trained_before_a_setting_existed_does_not_differ_in_it_at_its_old_value():
    """The twin trained before ``encoder.bias.per_layer`` existed and a variant trained after it, per_layer
    false and another prior slope, differ in the prior slope only (the bug: in per_layer too, so they were
    not paired)."""
    old, new = _row("parser_fed_twin"), _row("parser_fed_twin")
    old[0]["encoder"] = {"bias": {"prior_slope": 0.0}}
    new[0]["encoder"] = {"bias": {"prior_slope": 0.5, "per_layer": False}}
    listed = {(p.a, p.b): p.differs_in for p in like_for_like({"twin": old, "twin_prior": new})}
    assert listed == {("twin", "twin_prior"): "setting encoder.bias.prior_slope: 0.0 vs 0.5"}
    new[0]["encoder"]["bias"]["per_layer"] = True  # at another value it is a difference: two things
    assert not like_for_like({"twin": old, "twin_prior": new})
