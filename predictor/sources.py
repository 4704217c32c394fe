"""Distance sources: where the biased layers take their distances from, one vocabulary for every layer.

``SyntaxModel`` runs with one source per call (``none``, ``parser``, ``predicted`` or ``sequential``); a
recipe row (``core.recipes``) names one for training and one for inference, and training may also be
``scheduled`` (the parser's D with probability p(step), else D̂; docs/design.md §5). A ``StrEnum``: each
member equals its string, so configs, checkpoints, logs and reports keep plain readable values.
"""

from __future__ import annotations

from enum import StrEnum


class DistanceSource(StrEnum):
    """The distances the biased layers read."""

    NONE = "none"
    """No bias (the padding mask still applies)."""
    PARSER = "parser"
    """The parser's tree distances D."""
    PREDICTED = "predicted"
    """The predictor's D̂ (what a parser-free graph computes)."""
    SEQUENTIAL = "sequential"
    """|i − j|: a relative-position bias, locality without a parser (the locality control)."""
    SCHEDULED = "scheduled"
    """Training only: D with probability p(step), decaying to training.teacher_forcing_end, else D̂."""


MODEL_SOURCES = (DistanceSource.NONE, DistanceSource.PARSER, DistanceSource.PREDICTED, DistanceSource.SEQUENTIAL)
"""The sources one forward pass of ``SyntaxModel`` takes (``scheduled`` picks one of them per step)."""
