"""The recipe table is the one place that knows recipes: rows are consistent, and no other module
branches on a recipe name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from parserfree.distill.recipes import RECIPES, SOURCES, exportable_recipes, get_recipe
from parserfree.export.graph_inputs import input_names, output_names

ROOT = Path(__file__).resolve().parents[2]
CODE = ("distill", "encoder", "predictor", "export", "parserfree")


@pytest.mark.parametrize("name", list(RECIPES))
def test_rows_are_consistent(name):
    row = RECIPES[name]
    assert row.name == name
    assert row.train_source in SOURCES and row.eval_source in SOURCES and row.eval_source != "scheduled"
    if "predicted" in (row.train_source, row.eval_source) or row.train_source == "scheduled":
        assert row.predictor and row.needs_predictor_layer, "D̂ needs a predictor reading h_k"


@pytest.mark.parametrize("name", exportable_recipes())
def test_graph_contract_follows_the_row(name):
    row = RECIPES[name]
    assert ("distances" in input_names(name)) == (row.eval_source == "parser")
    assert ("distances" in output_names(name)) == (row.eval_source == "predicted")


def test_unknown_recipe_names_the_choices():
    with pytest.raises(ValueError, match="recipe='magic' must be one of no_syntax"):
        get_recipe("magic")


def _recipe_comparisons(path: Path) -> list[str]:
    """Lines of ``path`` that compare something with a recipe name (==, !=, in, not in)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set(RECIPES)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                if isinstance(operand, ast.Constant) and operand.value in names:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_module_but_the_table_branches_on_a_recipe_name():
    offenders = []
    for folder in CODE:
        for path in sorted((ROOT / folder).glob("*.py")):
            if path.name != "recipes.py":
                offenders += _recipe_comparisons(path)
    assert not offenders, f"recipe names compared outside distill/recipes.py: {offenders}"


def test_roles_pick_the_like_for_like_baseline_and_the_twin():
    from parserfree.distill.recipes import comparison_roles

    roles = comparison_roles(["plain", "parser_fed", "no_syntax", "locality", "parser_fed_twin", "parser_free"])
    assert (roles.parser_free, roles.reference, roles.baseline) == ("parser_free", "parser_fed_twin", "no_syntax")
    assert roles.extra == ("plain", "parser_fed", "locality")
    assert comparison_roles(["plain", "parser_fed", "parser_free"]).baseline == "plain"
