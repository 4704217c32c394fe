"""The experiment config explained: every key with its value and its one-line meaning.

The meanings are the docstrings under the fields of the settings dataclasses (``encoder.schema.field_docs``),
so the code's defaults and their documentation have one source. ``describe_config`` is what ``parserfree
config`` prints — a resolved config as YAML, each key followed by its meaning as a comment (and by the
default where the config differs from it), loadable again as a config file; ``config_markdown`` is
docs/config.md, the table of every key, its default and its meaning (``parserfree config --markdown``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import yaml

from ..distill.config import ExperimentConfig
from ..encoder.schema import field_docs

DOCS_COMMAND = "parserfree config --markdown > docs/config.md"


@dataclasses.dataclass(frozen=True)
class Setting:
    """One key of the config: its dotted name, depth, value (None for a section), default and meaning."""

    key: str
    depth: int
    value: Any
    default: Any
    meaning: str
    section: bool


def settings(config: Any, default: Any, prefix: str = "", depth: int = 0) -> Iterator[Setting]:
    """Every field of a settings dataclass, depth first, sections before their keys."""
    docs = field_docs(type(config))
    for f in dataclasses.fields(config):
        value, base = getattr(config, f.name), getattr(default, f.name)
        key = f"{prefix}{f.name}"
        meaning = docs.get(f.name, "")
        if dataclasses.is_dataclass(value):
            yield Setting(key, depth, None, None, meaning, True)
            yield from settings(value, base, f"{key}.", depth + 1)
        else:
            yield Setting(key, depth, value, base, meaning, False)


def yaml_value(value: Any) -> str:
    """A value as it is written in a YAML config (flow style: null, true, [0.8, 0.1, 0.1], a string)."""
    return yaml.safe_dump([value], default_flow_style=True, width=10**6, allow_unicode=True).strip()[1:-1]


def describe_config(config: ExperimentConfig) -> str:
    """The resolved config as YAML with each key's meaning; keys that differ from the default say so."""
    resolved = config.resolved()
    fixed = set(config.recipe_row.fixed)
    rows = []
    for s in settings(resolved, ExperimentConfig()):
        name = s.key.rsplit(".", 1)[-1]
        text = f"{'  ' * s.depth}{name}:" if s.section else f"{'  ' * s.depth}{name}: {yaml_value(s.value)}"
        note = s.meaning
        if not s.section and s.key in fixed:
            note += f" (fixed by recipe {resolved.recipe})"
        elif not s.section and s.value != s.default:
            note += f" (default: {yaml_value(s.default)})"
        rows.append((text, note))
    width = min(max(len(text) for text, _ in rows), 48) + 2
    return "\n".join(f"{text:<{width}}# {note}" if note else text for text, note in rows)


def config_markdown() -> str:
    """docs/config.md: every key of the experiment config with its default and meaning, one table per section."""
    lines = [
        "# Configuration",
        "",
        f"Every key of an experiment config, its default and its meaning. Generated from the settings dataclasses "
        f"(the docstring under each field) by `{DOCS_COMMAND}`; do not edit by hand. A YAML config sets only what "
        "differs from these defaults (`extends: other.yaml` merges another file under it); "
        "`parserfree config --config X [--set key=value]` prints a config resolved, each key with its meaning.",
        "",
        "| key | default | meaning |",
        "|---|---|---|",
    ]
    for s in settings(ExperimentConfig(), ExperimentConfig()):
        if s.section:
            lines += ["", f"## `{s.key}`", "", s.meaning, "", "| key | default | meaning |", "|---|---|---|"]
        else:
            meaning = s.meaning.replace("|", "\\|")
            lines.append(f"| `{s.key}` | `{yaml_value(s.value)}` | {meaning} |")
    return "\n".join(lines) + "\n"
