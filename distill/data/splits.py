"""The split rule of every dataset without a fixed split: a text's split is a hash of its normalised form.

So a text lands in the same split in every dataset that holds it (a built-in corpus, the agreement items
built from it, a user's file), and a review's sentences go where their review goes (``RawExample.group``).
"""

from __future__ import annotations

import hashlib

from ...encoder.text import normalise_text
from .readers import RawExample


def split_of(text: str, fractions: list[float]) -> str:
    """Deterministic split of a text: sha256 of its lower-cased normalised form mapped to [0, 1)."""
    key = normalise_text(text).lower().encode("utf-8")
    u = int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2**64
    if u < fractions[0]:
        return "train"
    return "dev" if u < fractions[0] + fractions[1] else "test"


def raw_split(raw: RawExample, fractions: list[float]) -> str:
    """The split of a raw example: its own fixed one, else that of its group (or text) by hash."""
    return raw.split or split_of(raw.group or raw.text, fractions)
