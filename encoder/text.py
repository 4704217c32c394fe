"""The one text normalisation of the project, at the bottom of the layers so that training (``distill``),
export and serving share it without serving loading any data code."""

from __future__ import annotations

import re

CONTROL_TO_SPACE = {
    code: " " for code in (*range(0x20), *range(0x7F, 0xA0))
}  # Unicode category Cc, as a str.translate table
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # the same characters: a text without any needs no translate


def normalise_text(text: str) -> str:
    """Control characters (category Cc) become spaces, runs of whitespace collapse to one space, ends are
    stripped. Training, splitting and inference all use it."""
    if CONTROL.search(text) is not None:  # rare; str.translate costs a dictionary look-up per character
        text = text.translate(CONTROL_TO_SPACE)
    return " ".join(text.split())
