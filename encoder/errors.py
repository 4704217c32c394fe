"""Errors: the one base class of every error that means "bad input or setting", not "a bug".

Each layer names its own errors where they arise (``ConfigError`` in ``encoder.schema``, ``DataError`` in
``distill.data.readers``, ``BundleError`` in ``export.errors``, …) and derives them from ``ParserfreeError``,
defined here at the lowest layer so that every layer can. The ``parserfree`` command line prints a
``ParserfreeError`` as one line naming the file, line or setting (exit status 2; ``--debug`` shows the
traceback), while any other exception is a bug and keeps its traceback. Most of them are also
``ValueError``s (or ``RuntimeError``s), so code that caught those keeps working.
"""

from __future__ import annotations


class ParserfreeError(Exception):
    """Bad input, a bad setting or an unusable file: the message alone tells the user what to fix."""


class UsageError(ParserfreeError, ValueError):
    """A request the object or command cannot serve as asked (e.g. predicting from text with a bundle
    that needs a parser, or an option that needs another one)."""
