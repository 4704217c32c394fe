"""``parserfree config`` and docs/config.md: every key's meaning comes from the dataclasses, the printed
config loads back as the same config, and the committed docs/config.md is what the fields generate."""

from __future__ import annotations

from pathlib import Path

import yaml

from parserfree.commands.cli import main
from parserfree.commands.config_docs import DOCS_COMMAND, config_markdown, describe_config, settings
from parserfree.distill.config import ExperimentConfig, load_config
from parserfree.encoder.schema import build_dataclass

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_config_docs_are_what_the_fields_generate():
    committed = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    assert committed == config_markdown(), f"docs/config.md is stale: run `{DOCS_COMMAND}`"


def test_every_key_of_the_config_has_a_meaning():
    undocumented = [s.key for s in settings(ExperimentConfig(), ExperimentConfig()) if not s.meaning]
    assert undocumented == []


def test_the_printed_config_loads_back_as_the_same_resolved_config():
    overrides = ["recipe=parser_fed", "training.lr=0.0005", "data.split=[0.7, 0.2, 0.1]"]
    config = load_config("configs/smoke.yaml", overrides)
    printed = describe_config(config)
    assert build_dataclass(ExperimentConfig, yaml.safe_load(printed)) == config.resolved()


def test_config_command_shows_set_values_their_default_and_what_the_recipe_fixes(capsys):
    settings_set = ["--set", "training.lr=0.0005", "--set", "recipe=parser_fed"]
    assert main(["config", "--config", "configs/smoke.yaml", *settings_set]) == 0
    lines = {line.split(":")[0].strip(): line for line in capsys.readouterr().out.splitlines()}
    assert lines["lr"].startswith("  lr: 0.0005") and lines["lr"].endswith("(default: 0.001)")
    assert "# Peak learning rate of AdamW" in lines["lr"]
    assert lines["predictor_layer"].startswith("  predictor_layer: 0 ")  # smoke.yaml says 1; parser_fed fixes 0
    assert lines["predictor_layer"].endswith("(fixed by recipe parser_fed)")
    assert lines["max_epochs"].startswith("  max_epochs: 2") and lines["max_epochs"].endswith("(default: 5)")
    assert lines["dropout"].rstrip().endswith("task head.")  # the default value: no note
