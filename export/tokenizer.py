"""The bundled tokenizer: the training parser's spaCy tokenizer, serialised so inference needs no parser model.

Training words come from ``nlp.pipe`` of the normalised text with the configured spaCy model
(distill.teacher); the tokenizer alone decides those words. The export writes that tokenizer to the
bundle (``Tokenizer.to_disk``, one file) with the language code; the runtime rebuilds it on a blank
pipeline of that language (``spacy.blank(lang).tokenizer.from_disk``), so it needs the ``spacy`` package
but never loads the parser model. ``words_of`` applies the project's one normalisation first.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from parserfree.distill.datasets import normalise_text


def save_tokenizer(nlp, path: str | Path) -> dict:
    """Write ``nlp``'s tokenizer to ``path``; return what rebuilding it needs (file name, language) and the source pipeline."""
    nlp.tokenizer.to_disk(Path(path))
    meta = nlp.meta
    return {"path": Path(path).name, "lang": nlp.lang, "pipeline": f"{meta.get('lang')}_{meta.get('name')}",
            "pipeline_version": meta.get("version")}


def load_tokenizer(path: str | Path, lang: str):
    """Rebuild a saved tokenizer on a blank spaCy pipeline of language ``lang`` (no trained components)."""
    import spacy

    nlp = spacy.blank(lang)
    nlp.tokenizer.from_disk(Path(path))
    return nlp.tokenizer


def words_of(tokenizer, texts: Sequence[str]) -> list[list[str]]:
    """Texts → words as the training parser saw them: ``normalise_text`` then the tokenizer."""
    return [[t.text for t in tokenizer(normalise_text(text))] for text in texts]
