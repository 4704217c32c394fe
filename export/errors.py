"""Errors of the export side: a checkpoint that cannot become a faithful bundle, a bundle that cannot be trusted.

They sit at the two ends of `export/`: ``ExportError`` stops ``export_bundle`` (checkpoint → bundle) before
anything is left in place, ``BundleError`` stops ``ParserFreeModel.load`` (bundle → onnxruntime session)
when a file is missing or altered or the bundle is newer than this code. Both are ``ParserfreeError``s (and
``ValueError``s), so the ``parserfree`` CLI reports them as one-line errors (exit status 2) like every other
bad input.
"""

from __future__ import annotations

from ..encoder.errors import ParserfreeError


class ExportError(ParserfreeError, ValueError):
    """The export cannot produce a faithful bundle (unsupported recipe, failed parity check, output exists)."""


class BundleError(ParserfreeError, ValueError):
    """A bundle folder is incomplete, altered, or written by a newer parserfree; the message names the file."""
