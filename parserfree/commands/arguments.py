"""Helpers shared by the command-line modules: argument types and options passed on by name."""

from __future__ import annotations

import argparse
from typing import Any


def positive_int(value: str) -> int:
    """An argparse type: a whole number ≥ 1, else argparse's one-line usage error."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{value} must be ≥ 1")
    return n


def options(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The parsed options ``names`` (their ``dest``), as keywords for the function a command calls."""
    return {name: getattr(args, name) for name in names}
