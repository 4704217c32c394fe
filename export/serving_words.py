"""Serving words: the export's tokenizer must give the words the model was trained on, or no bundle is written.

A model only knows the words of its training data. Trained on parsed text, those came from the spaCy
pipeline's tokenizer, so the bundled (serialised) tokenizer is checked against the pipeline on the parity
texts. Trained on a treebank (CoNLL-U gold words), they follow the treebank's conventions: the bundled
tokenizer is first taught the treebank's splits (``tokenizer.fit_to_treebank``, learnt from the train
split) and must then reproduce the words of every training sentence; its agreement on the held-out
(dev + test) sentences is reported, not gated. A parser-fed model is served with the spaCy parser's words,
which cannot be re-taught, so it is checked as is. The check's result goes into the manifest
(``tokenizer.training_words``); a failure is an ``ExportError`` naming the first sentence that differs.
The whitespace tokenizer of pre-segmented treebanks (``parse.spacy_model: whitespace``) is never taught
special cases: its words must be the text's space-separated chunks, for held-out text as for training
text, so a treebank whose text is not segmented is refused rather than memorised sentence by sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core.held_out import HeldOut, Sentence
from ..core.parse import WHITESPACE
from .errors import ExportError
from .tokenizer import fit_to_treebank, load_tokenizer, save_tokenizer, training_word_check, words_of


def treebank_sentences(experiment: dict, held_out: HeldOut) -> tuple[tuple[Sentence, ...], tuple[Sentence, ...]] | None:
    """(train, held-out) sentences with their gold words when the model was trained on a treebank; None
    when it was trained on parsed text. ExportError when a treebank's words cannot be read back."""
    data = experiment["data"]
    fmt = data.get("format") or Path(str(data["dataset"])).suffix.lower().lstrip(".")
    if held_out.reason is not None and fmt in ("conllu", "conll"):
        raise ExportError(
            f"cannot check the bundled tokenizer against the training words of {data['dataset']} "
            f"({held_out.reason}); no bundle was written"
        )
    return held_out.treebank


def _difference(first: dict, whitespace: bool = False) -> str:
    """Where a tokenizer's words first depart from the training words, a few words each side."""
    a, b = first["training_words"], first["tokenizer_words"]
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    spelling = "" if first["words_spell_text"] else " (its words do not spell its text, so no tokenizer can give them)"
    if whitespace and first["words_spell_text"]:
        spelling = (
            " (the whitespace tokenizer serves pre-segmented text: the text must be its words separated by "
            "spaces, in # text or, without it, the words themselves)"
        )
    return f"{first['source']}: trained on {a[max(0, i - 1) : i + 3]} but served {b[max(0, i - 1) : i + 3]}{spelling}"


def bundle_tokenizer(
    nlp,
    folder: Path,
    served_by_bundle: bool,
    treebank: tuple[Sequence[Sentence], Sequence[Sentence]] | None,
    parity_texts: Sequence[str],
) -> tuple[object, dict]:
    """Write the serving tokenizer to ``folder / "tokenizer"`` and check it against the training words.

    served_by_bundle: the bundle's tokenizer serves the model (False: a parser-fed model, served with the
    parser's words). Returns the rebuilt tokenizer and its manifest entry; raises ExportError when the
    served words would differ from the training words."""
    whitespace = nlp.meta.get("name") == WHITESPACE
    added = fit_to_treebank(nlp.tokenizer, treebank[0]) if treebank and served_by_bundle and not whitespace else 0
    meta = save_tokenizer(nlp, folder / "tokenizer")
    tokenizer = load_tokenizer(folder / "tokenizer", meta["lang"])
    if treebank:
        serving = tokenizer if served_by_bundle else nlp.tokenizer
        held_out = training_word_check(serving, treebank[1])
        check = {
            "reference": "treebank words of the train split",
            **training_word_check(serving, treebank[0]),
            "special_cases": added,
            "held_out": {k: held_out[k] for k in ("sentences", "identical")},
        }
    else:
        pipeline_words = words_of(nlp.tokenizer, parity_texts)
        reference = [(t, w, f"parity text {i + 1}") for i, (t, w) in enumerate(zip(parity_texts, pipeline_words))]
        check = {
            "reference": "the spaCy pipeline's tokenizer, which gave the parser's training words",
            **training_word_check(tokenizer, reference),
        }
    if check["identical"] < check["sentences"]:
        how = (
            ("the whitespace tokenizer" if whitespace else "the tokenizer fitted to the treebank")
            if served_by_bundle
            else "the spaCy parser (a parser-fed model is served with its words)"
        )
        raise ExportError(
            f"{how} does not reproduce the training words of "
            f"{check['sentences'] - check['identical']} of {check['sentences']} sentences "
            f"({check['reference']}), e.g. {_difference(check['first_difference'], whitespace)}; "
            "the model would be served other words than it was trained on, so no bundle was written"
        )
    return tokenizer, {**meta, "training_words": check}
