"""Verb number: the present-tense (and was/were) form of a verb for the other grammatical number.

Used to build the agreement dataset: a singular verb (VBZ, ``was``) becomes plural (VBP, ``were``) and
back. ``be``, ``have`` and ``do`` are irregular and handled by a table; every other verb goes through
``lemminflect`` (lemma, then the inflection of the other tag). A form that does not come back to the
original when flipped twice, or that is a clitic (``'s``, ``'re``) or not a plain word, has no flip.
``modal_form`` makes the verb number-neutral instead ("will" + its base form), for the number-prediction
view of the same items.
"""

from __future__ import annotations

SINGULAR_TAGS = ("VBZ",)
PLURAL_TAGS = ("VBP",)
IRREGULAR = {
    "is": "are",
    "are": "is",
    "was": "were",
    "were": "was",
    "has": "have",
    "have": "has",
    "does": "do",
    "do": "does",
}
NO_FLIP = {"am", "ai", "be", "'s", "'re", "'m", "'ve", "s"}  # first-person, "ain't", subjunctive "be", clitics
IRREGULAR_LEMMAS = {
    **dict.fromkeys(("is", "are", "was", "were"), "be"),
    **dict.fromkeys(("has", "have"), "have"),
    **dict.fromkeys(("does", "do"), "do"),
}
NEGATIONS = ("n't", "not")


def verb_number(word: str, tag: str) -> str | None:
    """'sg' or 'pl' for a present-tense verb (VBZ / VBP) or was / were; None for any other token."""
    low = word.lower()
    if low == "was":
        return "sg"
    if low == "were":
        return "pl"
    if tag in SINGULAR_TAGS:
        return "sg"
    if tag in PLURAL_TAGS:
        return "pl"
    return None


def _match_case(form: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return form.upper()
    if like[:1].isupper():
        return form[:1].upper() + form[1:]
    return form


def _flip_lower(low: str, number: str) -> str | None:
    if low in IRREGULAR:
        return IRREGULAR[low]
    from lemminflect import getInflection, getLemma

    lemmas = getLemma(low, upos="VERB")
    if not lemmas:
        return None
    forms = getInflection(lemmas[0], tag="VBP" if number == "sg" else "VBZ")
    return forms[0] if forms else None


def _lemma(low: str) -> str | None:
    if low in IRREGULAR_LEMMAS:
        return IRREGULAR_LEMMAS[low]
    from lemminflect import getLemma

    lemmas = getLemma(low, upos="VERB")
    return lemmas[0] if lemmas else None


def modal_form(word: str, aux: bool, next_word: str) -> dict[int, str] | None:
    """The verb made number-neutral with "will" + its base form, as word replacements at offsets 0 (the verb)
    and 1 (the word after it): "are" → "will be", "laughs" → "will laugh", "has" → "will have"; do-support
    vanishes ("does not like" → "will not like"); a negation stays right after "will" ("isn't" → "will not
    be"). None when the verb has no known base form."""
    low = word.lower()
    do_support = aux and IRREGULAR_LEMMAS.get(low) == "do"  # "does not like": the auxiliary goes
    lemma = None if do_support else _lemma(low)
    if lemma is None and not do_support:
        return None
    will = _match_case("will", word)
    if next_word.lower() in NEGATIONS:
        return {0: will + " ", 1: "not" + (f" {lemma}" if lemma else "")}
    return {0: will + (f" {lemma}" if lemma else "")}


def flip_verb(word: str, tag: str) -> str | None:
    """The same verb in the other number (case kept), or None when it cannot be flipped reliably."""
    number = verb_number(word, tag)
    low = word.lower()
    if number is None or low in NO_FLIP or not low.isalpha():
        return None
    flipped = _flip_lower(low, number)
    if not flipped or flipped == low or not flipped.isalpha():
        return None
    other = "pl" if number == "sg" else "sg"
    if low not in IRREGULAR and _flip_lower(flipped, other) != low:  # e.g. an ambiguous lemma
        return None
    return _match_case(flipped, word)
