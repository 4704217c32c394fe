"""Config schema: typed dataclasses built from plain dicts, with one message style naming the key.

Every settings section of the project (the encoder's, the predictor's, and the experiment's sections
in ``distill.config``) is a dataclass whose type hints are the schema. ``build_dataclass`` turns a dict
(a YAML section) into one: unknown keys and wrong types stop with ``ConfigError`` naming the full key
(``encoder.d_ff=2.5 must be an integer``); each class's ``validate(section)`` then checks ranges with
the ``check_*`` helpers, which speak the same way. A field's meaning is the docstring written under it
(``field_docs`` reads them; editors show them on hover), the one source of ``parserfree config`` and
docs/config.md.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import math
import textwrap
import types
import typing
from typing import Any, ClassVar, Protocol, TypeVar

from .errors import ParserfreeError


class Dataclass(Protocol):
    """Any dataclass instance (what ``dataclasses.fields`` accepts)."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]


class Settings(Dataclass, Protocol):
    """A settings dataclass with its own range checks, ``validate(section)``."""

    def validate(self, section: str) -> object: ...


T = TypeVar("T", bound=Dataclass)
S = TypeVar("S", bound=Settings)


class ConfigError(ParserfreeError, ValueError):
    """An invalid setting; the message names the key."""


def check_int(key: str, value: Any, minimum: int | None = None) -> None:
    """``value`` is an integer (not a bool), ≥ ``minimum`` when given."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{key}={value!r} must be an integer")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{key}={value} must be ≥ {minimum}")


def check_number(
    key: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    high_open: bool = False,
    low_open: bool = False,
) -> None:
    """``value`` is a finite number in [low, high] (either end open with ``low_open`` / ``high_open``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{key}={value!r} must be a finite number")
    if low is not None and (value <= low if low_open else value < low):
        raise ConfigError(f"{key}={value} must be {'>' if low_open else '≥'} {low}")
    if high is not None and (value >= high if high_open else value > high):
        raise ConfigError(f"{key}={value} must be {'<' if high_open else '≤'} {high}")


def check_choice(key: str, value: Any, choices: typing.Iterable[str]) -> None:
    """``value`` is one of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ConfigError(f"{key}={value!r} must be one of {', '.join(choices)}")


def _coerce(key: str, value: Any, hint: Any) -> Any:
    """Check a value against a type hint (int → float and numeric strings → float are accepted)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _coerce(key, value, option)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError(errors[0] if errors else f"{key}={value!r} has the wrong type")
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):  # a hint is a class, never an instance
        return value if isinstance(value, hint) else build_dataclass(hint, value or {}, key)
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{key}={value!r} must be a list")
        (inner,) = typing.get_args(hint)
        return [_coerce(f"{key}[{i}]", v, inner) for i, v in enumerate(value)]
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{key} must be a mapping of settings")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key}={value!r} must be true or false")
        return value
    if hint is int:
        check_int(key, value)
        return value
    if hint is float:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise ConfigError(f"{key}={value!r} must be a number") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}={value!r} must be a number")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key}={value!r} must be a string")
        return value
    return value


def build_dataclass(cls: type[T], data: Any, prefix: str = "") -> T:
    """Instantiate a (nested) settings dataclass from a dict; unknown keys and wrong types name the key.

    Range checks are the class's own ``validate``; call it on the result (``from_settings`` does both).
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix or 'config'} must be a mapping of settings, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    unknown = sorted(set(data) - set(names))
    if unknown:
        where = f"{prefix}." if prefix else ""
        raise ConfigError(f"unknown key '{where}{unknown[0]}' (known keys here: {', '.join(sorted(names))})")
    kwargs = {name: _coerce(f"{prefix}.{name}" if prefix else name, value, hints[name]) for name, value in data.items()}
    return cls(**kwargs)


def from_settings(cls: type[S], data: Any, section: str) -> S:
    """``build_dataclass`` then the class's ``validate(section)``."""
    config = build_dataclass(cls, data, section)
    config.validate(section)
    return config


def to_settings(config: Any) -> dict[str, Any]:
    """A settings dataclass as a plain nested dict (what YAML files and checkpoints hold)."""
    return dataclasses.asdict(config)


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a settings dataclass, by field name (a field without one is absent).

    Read from the class's source: a string literal right after an annotated assignment documents it
    (the convention editors and documentation tools read as an attribute docstring).
    """
    node = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    assert isinstance(node, ast.ClassDef), cls
    body = node.body
    docs = {}
    for node, after in zip(body, body[1:], strict=False):  # each statement and the next
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = " ".join(after.value.value.split())
    return docs
