"""The recipe table is the one place that knows recipes: rows are consistent, and no other module
branches on a recipe name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from parserfree.core.recipes import RECIPES, SOURCES, Recipe, exportable_recipes, get_recipe, recipes_markdown
from parserfree.export.graph_inputs import input_names, output_names

from source_tree import ROOT, library_files

CODE = [path for _, path in library_files()]


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
    for path in CODE:
        if path != ROOT / "core" / "recipes.py":
            offenders += _recipe_comparisons(path)
    assert not offenders, f"recipe names compared outside core/recipes.py: {offenders}"


def test_roles_come_from_the_rows_not_from_the_order_of_run_recipes():
    from parserfree.core.recipes import comparison_roles

    names = ["plain", "parser_fed", "no_syntax", "locality", "parser_fed_twin", "parser_free"]
    for order in (names, names[::-1]):
        roles = comparison_roles(order)
        assert (roles.parser_free, roles.reference, roles.unbiased) == ("parser_free", "parser_fed_twin", "no_syntax")
        assert set(roles.extra) == {"plain", "parser_fed", "locality"}
    # a stand-in plays its role only when the like-for-like recipe is absent
    assert comparison_roles(["plain", "parser_fed", "parser_free"]).unbiased == "plain"
    assert comparison_roles(["plain", "parser_fed", "parser_free"]).reference == "parser_fed"
    # the parse-leak control is never the reference, wherever it stands
    assert comparison_roles(["twin_grammatical_tree", "parser_fed_twin", "parser_free"]).reference == "parser_fed_twin"
    assert comparison_roles(["twin_grammatical_tree", "parser_free"]).reference is None


def _source_comparisons(path: Path) -> list[str]:
    """Lines of ``path`` that compare a ``*source`` name or attribute with a distance source's string."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            named = [getattr(o, "id", getattr(o, "attr", "")) for o in operands]
            literal = any(isinstance(o, ast.Constant) and o.value in SOURCES for o in operands)
            if literal and any(n.endswith("source") for n in named):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_distance_sources_are_compared_as_constants_not_strings():
    offenders = [line for path in CODE for line in _source_comparisons(path)]
    assert not offenders, f"distance sources compared as strings (use DistanceSource): {offenders}"


def test_a_source_is_its_string_so_configs_and_reports_stay_readable():
    import json

    from parserfree.predictor.sources import DistanceSource

    assert DistanceSource("parser") is DistanceSource.PARSER and DistanceSource.PARSER == "parser"
    assert json.dumps({"source": RECIPES["parser_free"].eval_source}) == '{"source": "predicted"}'


ROW = dict(name="x", summary="a test row", train_source="parser", eval_source="parser", predictor=True)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"train_source": "parsed"}, "recipe 'x': train_source='parsed' must be one of none, parser, predicted"),
        ({"eval_source": "scheduled"}, "recipe 'x': eval_source='scheduled' is a training schedule"),
        ({"eval_source": "predicted", "predictor": False}, "recipe 'x': reads D̂ but has no predictor"),
    ],
)
def test_a_bad_row_fails_when_it_is_built_naming_the_row_and_field(changes, message):
    with pytest.raises(ValueError, match=message):
        Recipe(**{**ROW, **changes})


def test_rows_are_keyword_only():
    with pytest.raises(TypeError):
        Recipe("x", "a test row", "parser", "parser", True)  # positional sources were easy to swap


def test_recipe_table_markdown_has_every_row_with_its_sources():
    rows = [line.split(" | ") for line in recipes_markdown().splitlines()[2:]]
    assert [(r[0].strip("| `"), r[1], r[2]) for r in rows] == [
        (name, str(row.train_source), str(row.eval_source)) for name, row in RECIPES.items()
    ]


def test_train_help_lists_every_recipe(capsys):
    from parserfree.commands.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    listed = text[text.index("train one recipe (") + len("train one recipe (") :].split(";")[0]
    assert listed.split(", ") == list(RECIPES)


def test_every_recipe_has_a_config_and_a_test():
    """The contributing steps (docs/contributing.md, "Adding a recipe"): a config in configs/ and a test in tests/distill/."""
    from pathlib import Path

    root = Path(__file__).parents[2]
    configs = "\n".join(p.read_text() for p in (root / "configs").rglob("*.yaml"))
    tests = "\n".join(p.read_text() for p in (root / "tests" / "distill").glob("test_*.py"))
    for name in RECIPES:
        assert re.search(rf"\b{name}\b", configs), f"no config in configs/ names the recipe {name!r}"
        assert f'"{name}"' in tests, f"no test in tests/distill/ names the recipe {name!r}"
