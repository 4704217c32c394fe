"""Recipes: the one table of how a model is trained, evaluated and exported.

A recipe says where the biased layers take their distances from (at training time and at inference),
whether the model has a distance predictor, which layers are biased, whether it has a task head, and
what the exported graph takes and returns. Every module reads these rows; none compares recipe names.
Adding a recipe is one row here (plus, if no existing rule fits, its distance rule in
``distill.co_training.CoTrainingModule.training_source``).

Distance sources (``predictor.sources.DistanceSource``): ``none`` (bias off), ``parser`` (the parser's tree
distances D), ``predicted`` (the predictor's D̂), ``sequential`` (|i − j|, a relative-position bias: locality
without a parser), ``scheduled`` (training only: D with probability p(step), decaying from 1 to
``training.teacher_forcing_end`` — 1 by default, so D throughout — else D̂).

The like-for-like comparison: ``parser_free``, ``parser_fed_twin``, ``locality`` and ``no_syntax`` share
the layers, the predictor (trained with the same distance loss in every one of them), the seed-for-seed
initialisation and any pre-trained lower layers; each pair of them differs in the distance source of the
biased layers only (``none`` for the baseline). ``parser_fed`` is the method as published (every layer biased, no predictor).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..encoder.schema import ConfigError
from ..predictor.sources import DistanceSource

SOURCES = tuple(DistanceSource)  # every source a recipe row may name (predictor/sources.py)


class Role(StrEnum):
    """The part a recipe plays in a comparison (``comparison_roles``); "baseline" is kept for the shortcut
    baselines of the report (majority, bag of words, …), never a recipe."""

    PARSER_FREE = "parser_free"  # the model the comparison is about: no parser at inference
    REFERENCE = "reference"  # the parser-fed model it is measured against
    UNBIASED = "unbiased"  # the same model without any bias (the no_syntax row)
    CONTROL = "control"  # another row: a control or another source, compared with the reference too


@dataclass(frozen=True, kw_only=True)
class Recipe:
    """One row of the recipe table; fields by name only, checked when the row is built (at import)."""

    name: str
    summary: str  # one line: what the row trains and serves (the train help and the recipe table show it)
    train_source: DistanceSource  # what the biased layers read in training
    eval_source: DistanceSource  # what validation, test and the exported graph use (never SCHEDULED)
    predictor: bool  # the model has a distance predictor (trained with the distance loss)
    task: bool = True  # the model has a task head (False: predictor pre-training)
    fixed: dict[str, Any] = field(default_factory=dict)  # settings the recipe fixes, as "section.key": value
    needs_predictor_layer: bool = False  # encoder.predictor_layer must be ≥ 1 (the predictor reads h_k)
    role: Role = Role.CONTROL  # its part in a comparison
    stand_in: bool = False  # plays its role only when no like-for-like recipe of that role is in the run

    def __post_init__(self) -> None:
        for name in ("train_source", "eval_source"):
            value = getattr(self, name)
            if value not in SOURCES:
                raise ValueError(f"recipe {self.name!r}: {name}={value!r} must be one of {', '.join(SOURCES)}")
            object.__setattr__(self, name, DistanceSource(value))
        if self.eval_source == DistanceSource.SCHEDULED:
            raise ValueError(
                f"recipe {self.name!r}: eval_source='scheduled' is a training schedule; inference reads one source"
            )
        reads_prediction = (
            DistanceSource.PREDICTED in (self.train_source, self.eval_source)
            or self.train_source == DistanceSource.SCHEDULED
        )
        if reads_prediction and not self.predictor:
            raise ValueError(f"recipe {self.name!r}: reads D̂ but has no predictor (set predictor=True)")

    @property
    def graph_returns_distances(self) -> bool:
        """The exported graph has a ``distances`` output (the predictor's D̂)."""
        return self.eval_source == DistanceSource.PREDICTED

    @property
    def needs_parser_at_inference(self) -> bool:
        """Serving this model needs a parser: its exported graph has a ``distances`` input."""
        return self.eval_source == DistanceSource.PARSER


def _reads(source: DistanceSource) -> dict[str, Any]:
    """The sources of a row that reads ``source`` both in training and at inference."""
    return {"train_source": source, "eval_source": source}


def _with_predictor(**fields: Any) -> Recipe:
    """A row whose model has the predictor reading h_k: the like-for-like rows and pre-training share the
    lower layers 1..k and the distance loss."""
    return Recipe(predictor=True, needs_predictor_layer=True, **fields)


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        _with_predictor(
            name="no_syntax",
            summary="the unbiased row: no attention bias; same layers, predictor (distance loss) and start as parser_free",
            **_reads(DistanceSource.NONE),
            role=Role.UNBIASED,
        ),
        Recipe(
            name="plain",
            summary="no syntax at all: no bias, no predictor — the Transformer a user would train first",
            **_reads(DistanceSource.NONE),
            predictor=False,
            role=Role.UNBIASED,
            stand_in=True,
        ),
        Recipe(
            name="parser_fed",
            summary="the published method: parser distances at training and inference, every layer biased, no "
            "predictor",
            **_reads(DistanceSource.PARSER),
            predictor=False,
            fixed={"encoder.predictor_layer": 0},
            role=Role.REFERENCE,
            stand_in=True,
        ),
        _with_predictor(
            name="parser_free",
            summary="co-trained predictor: the parser's D in training (D with probability p, else D̂, when "
            "training.teacher_forcing_end < 1), D̂ at inference: no parser",
            train_source=DistanceSource.SCHEDULED,
            eval_source=DistanceSource.PREDICTED,
            role=Role.PARSER_FREE,
        ),
        _with_predictor(
            name="parser_fed_twin",
            summary="parser_free's twin: same layers, predictor and start, but the biased layers always read the "
            "parser's distances",
            **_reads(DistanceSource.PARSER),
            role=Role.REFERENCE,
        ),
        _with_predictor(
            name="twin_grammatical_tree",
            summary="the parse-leak control: parser_fed_twin reading, for both versions of an agreement item, the "
            "parser's tree of the grammatical version (so it cannot learn how the parser reacts to the error)",
            **_reads(DistanceSource.PARSER),
            fixed={"parse.tree_text_column": "grammatical_text"},
        ),
        _with_predictor(
            name="locality",
            summary="the locality control: the biased layers read |i − j| instead of a tree (no parser at inference)",
            **_reads(DistanceSource.SEQUENTIAL),
        ),
        _with_predictor(
            name="pretrain_predictor",
            summary="layers 1..k and the predictor on parsed text, distance loss only (a start for init_from)",
            **_reads(DistanceSource.PREDICTED),
            task=False,
        ),
    )
}


def training_rule(row: Recipe, teacher_forcing_end: float) -> tuple:
    """What a recipe's training computes at every step: its effective distance source, whether it has a
    predictor and a task head, and the settings it fixes. ``scheduled`` with ``teacher_forcing_end`` = 1
    reads the parser's D at every step, so it trains exactly as a ``parser`` row does."""
    scheduled_as_parser = row.train_source == DistanceSource.SCHEDULED and teacher_forcing_end >= 1
    source = DistanceSource.PARSER if scheduled_as_parser else row.train_source
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
    """The parts a set of recipes plays in a comparison report (each recipe's ``role``)."""

    parser_free: str | None  # the parser-free model (its graph returns D̂)
    reference: str | None  # the parser-fed model it is measured against
    unbiased: str | None  # the model without any bias
    extra: tuple[str, ...]  # every other recipe, an extra row


def comparison_roles(names: list[str]) -> ComparisonRoles:
    """Who is who among the recipes of a main job, read from each row's ``role``: the recipe of a role, or
    its stand-in when the run has none (``parser_fed`` for the reference, ``plain`` for the unbiased row).
    Two recipes in one role are refused, naming them; the order of ``names`` decides nothing."""
    rows = [get_recipe(n) for n in names]
    chosen: dict[Role, str | None] = {}
    for role in (Role.PARSER_FREE, Role.REFERENCE, Role.UNBIASED):
        playing = [r.name for r in rows if r.role == role and not r.stand_in]
        playing = playing or [r.name for r in rows if r.role == role and r.stand_in]
        if len(playing) > 1:
            raise ConfigError(f"run.recipes: {' and '.join(playing)} would both be the {role}; keep one")
        chosen[role] = playing[0] if playing else None
    taken = set(chosen.values())
    extra = tuple(n for n in names if n not in taken)
    return ComparisonRoles(chosen[Role.PARSER_FREE], chosen[Role.REFERENCE], chosen[Role.UNBIASED], extra)


def recipes_markdown() -> str:
    """The recipe table as Markdown, one row per recipe, in table order (``parserfree config --recipes``;
    docs/usage.md and docs/design.md embed it between ``<!-- generated: … -->`` markers, checked by
    tests/test_generated_docs.py)."""
    lines = [
        "| recipe | training source | inference source | predictor | task head | role | what it is |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in RECIPES.values():
        yes = {True: "yes", False: "–"}
        summary = r.summary.replace("|", "\\|")  # |i − j| inside a table cell
        role = f"{r.role} (stand-in)" if r.stand_in else str(r.role)
        lines.append(
            f"| `{r.name}` | {r.train_source} | {r.eval_source} | {yes[r.predictor]} | {yes[r.task]} | {role} "
            f"| {summary} |"
        )
    return "\n".join(lines) + "\n"
