"""Recipes: the one table of how a model is trained, evaluated and exported.

A recipe says where the biased layers take their distances from (at training time and at inference),
whether the model has a distance predictor, which layers are biased, whether it has a task head, and
what the exported graph takes and returns. Every module reads these rows; none compares recipe names.
Adding a recipe is one row here (plus, if no existing rule fits, its distance rule in
``distill.co_training.CoTrainingModule.training_source``).

Distance sources: ``none`` (bias off), ``parser`` (the parser's tree distances D), ``predicted`` (the
predictor's D̂), ``scheduled`` (training only: D with probability p(step), decaying 1 → 0, else D̂).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SOURCES = ("none", "parser", "predicted", "scheduled")


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
            "no_syntax", "no syntax bias: the plain Transformer baseline", "none", "none", predictor=False,
            fixed={"encoder.bias.mode": "none", "encoder.predictor_layer": 0},
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
            "pretrain_predictor", "layers 1..k and the predictor on parsed text, distance loss only",
            "predicted", "predicted", predictor=True, task=False, needs_predictor_layer=True,
        ),
    )
}


def get_recipe(name: str) -> Recipe:
    """The row of ``name``; ValueError naming the known recipes otherwise."""
    try:
        return RECIPES[name]
    except KeyError:
        raise ValueError(f"recipe={name!r} must be one of {', '.join(RECIPES)}") from None


def exportable_recipes() -> tuple[str, ...]:
    """Recipes with a task graph to export."""
    return tuple(name for name, r in RECIPES.items() if r.task)
