"""Experiment files: YAML read with ``extends:`` (a parent file merged under it) and ``--set`` overrides.

What ``load_config`` (``distill/config.py``) and the sizes (``distill/sizes.py``) read their settings with;
errors name the file and line, or the override.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from ..encoder.schema import ConfigError


def set_key(data: dict, key: str, value) -> None:
    """Set ``section.key`` (dotted) in a nested dict, creating sections as needed."""
    node = data
    parts = key.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"{key}: '{part}' is not a section")
    node[parts[-1]] = value


def apply_overrides(data: dict, overrides: list[str]) -> dict:
    """Apply ``section.key=value`` overrides (values parsed as YAML) to a nested dict."""
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set '{item}' must look like section.key=value")
        try:
            set_key(data, key, yaml.safe_load(raw))
        except ConfigError as e:
            raise ConfigError(f"--set '{item}': {e}") from None
    return data


def _merge(base: dict, top: dict) -> dict:
    """Nested dict merge: ``top`` wins, sections merge key by key."""
    out = dict(base)
    for key, value in top.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def read_yaml(path: str | Path, seen: tuple[Path, ...] = ()) -> dict:
    """A YAML experiment file as a dict; ``extends: other.yaml`` (relative to the file) is merged under it."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{p}: no such config file")
    if p.resolve() in seen:
        raise ConfigError(f"{p}: 'extends' loops back to itself")
    if p.is_file() and p.stat().st_size == 0:
        raise ConfigError(f"{p}: empty file (0 bytes), not a config")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError as e:
        raise ConfigError(f"{p}: not a YAML config (invalid UTF-8 at byte {e.start})") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise ConfigError(f"{p}{where}: invalid YAML ({getattr(e, 'problem', e)})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: expected a mapping of sections at the top level")
    parent = data.pop("extends", None)
    if parent:
        data = _merge(read_yaml(p.parent / parent, seen + (p.resolve(),)), data)
    return data
