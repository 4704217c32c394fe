"""Recipes: the one table of how a model is trained, evaluated and exported.

A recipe says where the biased layers take their distances from (at training time and at inference),
whether the model has a distance predictor, which layers are biased, whether it has a task head, and
what the exported graph takes and returns. Every module reads these rows; none compares recipe names.
Adding a recipe is one row here (plus, if no existing rule fits, its distance rule in
``distill.co_training.CoTrainingModule.training_source``).

Distance sources: ``none`` (bias off), ``parser`` (the parser's tree distances D), ``predicted`` (the
predictor's D̂), ``sequential`` (|i − j|, a relative-position bias: locality without a parser),
``scheduled`` (training only: D with probability p(step), decaying 1 → 0, else D̂).

The like-for-like comparison: ``parser_free``, ``parser_fed_twin``, ``locality`` and ``no_syntax`` share
the layers, the predictor (trained with the same distance loss in every one of them), the seed-for-seed
initialisation and any pre-trained lower layers; each pair of them differs in the distance source of the
biased layers only (``none`` for the baseline). ``parser_fed`` is the method as published (every layer biased, no predictor).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from parserfree.encoder.schema import ConfigError

SOURCES = ("none", "parser", "predicted", "sequential", "scheduled")


@dataclass(frozen=True)
class Recipe:
    """One row of the recipe table."""

    name: str
    summary: str
    train_source: str  # one of SOURCES
    eval_source: str  # one of SOURCES except "scheduled": what validation, test and the exported graph use
    predictor: bool  # the model has a distance predictor (trained with the distance loss)
    task: bool = True  # the model has a task head (False: predictor pre-training)
    fixed: dict[str, Any] = field(default_factory=dict)  # settings the recipe fixes, as "section.key": value
    needs_predictor_layer: bool = False  # encoder.predictor_layer must be ≥ 1 (the predictor reads h_k)

    @property
    def graph_takes_distances(self) -> bool:
        """The exported graph has a ``distances`` input (parser distances at inference)."""
        return self.eval_source == "parser"

    @property
    def graph_returns_distances(self) -> bool:
        """The exported graph has a ``distances`` output (the predictor's D̂)."""
        return self.eval_source == "predicted"

    @property
    def needs_parser_at_inference(self) -> bool:
        """Serving this model needs a parser."""
        return self.eval_source == "parser"


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        Recipe(
            "no_syntax", "the baseline: no attention bias; same layers, predictor (distance loss) and start as "
            "parser_free", "none", "none", predictor=True, needs_predictor_layer=True,
        ),
        Recipe(
            "plain", "no syntax at all: no bias, no predictor — the Transformer a user would train first",
            "none", "none", predictor=False,
        ),
        Recipe(
            "parser_fed", "the published method: parser distances at training and inference, every layer biased",
            "parser", "parser", predictor=False, fixed={"encoder.predictor_layer": 0},
        ),
        Recipe(
            "parser_free", "co-trained predictor: D then D̂ (teacher forcing) at training, D̂ at inference",
            "scheduled", "predicted", predictor=True, needs_predictor_layer=True,
        ),
        Recipe(
            "parser_fed_twin", "parser_free's twin: same layers, predictor and start, but the biased layers "
            "always read the parser's distances", "parser", "parser", predictor=True, needs_predictor_layer=True,
        ),
        Recipe(
            "locality", "the locality control: the biased layers read |i − j| instead of a tree (no parser "
            "at inference)", "sequential", "sequential", predictor=True, needs_predictor_layer=True,
        ),
        Recipe(
            "pretrain_predictor", "layers 1..k and the predictor on parsed text, distance loss only",
            "predicted", "predicted", predictor=True, task=False, needs_predictor_layer=True,
        ),
    )
}


def training_rule(row: Recipe, teacher_forcing_end: float) -> tuple:
    """What a recipe's training computes at every step: its effective distance source, whether it has a
    predictor and a task head, and the settings it fixes. ``scheduled`` with ``teacher_forcing_end`` = 1
    reads the parser's D at every step, so it trains exactly as a ``parser`` row does."""
    source = "parser" if row.train_source == "scheduled" and teacher_forcing_end >= 1 else row.train_source
    return source, row.predictor, row.task, tuple(sorted(row.fixed.items()))


def get_recipe(name: str) -> Recipe:
    """The row of ``name``; ConfigError naming the known recipes otherwise."""
    try:
        return RECIPES[name]
    except KeyError:
        raise ConfigError(f"recipe={name!r} must be one of {', '.join(RECIPES)}") from None


def exportable_recipes() -> tuple[str, ...]:
    """Recipes with a task graph to export."""
    return tuple(name for name, r in RECIPES.items() if r.task)


@dataclass(frozen=True)
class ComparisonRoles:
    """The parts a set of recipes plays in a comparison report."""

    parser_free: str | None  # the parser-free model (its graph returns D̂)
    reference: str | None  # the parser-fed model it is measured against: the twin (with a predictor) first
    baseline: str | None  # the model without any bias (the like-for-like one, with a predictor, first)
    extra: tuple[str, ...]  # every other recipe, an extra row


def comparison_roles(names: list[str]) -> ComparisonRoles:
    """Who is who among the recipes of a main job, from their rows."""
    rows = [get_recipe(n) for n in names]
    free = next((r.name for r in rows if r.task and r.graph_returns_distances), None)
    fed = [r for r in rows if r.needs_parser_at_inference]
    reference = next((r.name for r in fed if r.predictor), fed[0].name if fed else None)
    unbiased = [r for r in rows if r.eval_source == "none"]
    baseline = next((r.name for r in unbiased if r.predictor), unbiased[0].name if unbiased else None)  # like for like first
    extra = tuple(n for n in names if n not in (free, reference, baseline))
    return ComparisonRoles(free, reference, baseline, extra)
