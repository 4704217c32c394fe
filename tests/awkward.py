"""The awkward texts every serving path must survive, by name: the ``awkward_texts`` fixture (conftest.py)
hands them to a test; import the names from here (``from awkward import …``, as for damage.py)."""

from __future__ import annotations

AWKWARD_TEXTS = {
    "empty": "",
    "whitespace": "   \t  ",  # whitespace only: empty after normalisation
    "one_word": "Wonderful",
    "emoji_cjk": "😀 很好",  # an emoji and a CJK word, no spaces inside the word
    "long": " ".join(["boring"] * 2000),  # 2,000 words: longer than any max_len, truncated
    "control": "\x07\x1b",  # control characters only: empty after normalisation
    "two_sentences": "The film is great, and I told my friends.  The ending was dull!",  # two trees, a double space
    "padded": "  leading and trailing spaces \n",
}
"""Name → text; the comment says what each one is for."""
EMPTY_AFTER_NORMALISATION = ("empty", "whitespace", "control")
