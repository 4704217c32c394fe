"""normalise_text skips str.translate when a text has no control character; the result must not change."""

from __future__ import annotations

import random

from parserfree.encoder.text import CONTROL_TO_SPACE, normalise_text


def reference(text: str) -> str:
    return " ".join(text.translate(CONTROL_TO_SPACE).split())


def test_normalise_text_without_translate_gives_the_translated_text_for_every_control_character():
    rng = random.Random(0)
    alphabet = [chr(c) for c in range(0x250)] + ["\u2028", "\u3000", "\xa0", "\u200b", "\ufeff", "é", "😀"]
    texts = [
        "".join(rng.choice(alphabet) if rng.random() < 0.3 else rng.choice("ab c.") for _ in range(rng.randint(0, 40)))
        for _ in range(5000)
    ]
    texts += [f"word{chr(c)}word" for c in (*range(0x20), *range(0x7F, 0xA0))]  # each control character alone
    assert [normalise_text(t) for t in texts] == [reference(t) for t in texts]
