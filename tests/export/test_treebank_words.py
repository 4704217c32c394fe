"""A model trained on treebank (CoNLL-U) words is served with those words — "don't" stays one word — or the
export refuses, naming the sentence whose words the serving tokenizer cannot reproduce."""

from __future__ import annotations

import random

import pytest
import torch

from parserfree.distill.config import load_config
from parserfree.distill.train import train
from parserfree.export import ExportError, ParserFreeModel
from parserfree.jobs.exporting import export_checkpoint

FRAMES = [  # treebank words; the text glues the final "." to the word before, as written text does
    ["I", "{neg}", "like", "this", "film", "."],
    ["this", "movie", "{neg}", "{a}", "."],
    ["the", "story", "is", "{a}", "and", "I", "{neg}", "care", "."],
    ["her", "performance", "was", "{a}", "."],
]
NEGATIONS = ["don't", "doesn't", "can't", "isn't"]
POSITIVE = ["great", "moving", "funny", "brilliant", "charming"]
NEGATIVE = ["dull", "awful", "boring", "clumsy", "tedious"]


def write_treebank(path, n: int = 120, spell=lambda text: text) -> None:
    """CoNLL-U sentences with a ``# label``, chain trees and contracted negations as single words."""
    rng = random.Random(3)
    blocks = []
    for i in range(n):
        positive = i % 2 == 0
        words = [
            w.format(a=rng.choice(POSITIVE if positive else NEGATIVE), neg=rng.choice(NEGATIONS))
            for w in rng.choice(FRAMES)
        ]
        text = " ".join(words[:-1]) + words[-1]
        rows = [
            f"{k + 1}\t{w}\t_\t{'PUNCT' if w == '.' else 'X'}\t_\t_\t{k + 2 if k + 1 < len(words) else 0}\t_\t_\t_"
            for k, w in enumerate(words)
        ]
        blocks.append(
            "\n".join(
                [f"# sent_id = s{i}", f"# text = {spell(text)}", f"# label = {'pos' if positive else 'neg'}", *rows]
            )
        )
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def treebank_checkpoint(tmp_path_factory):
    folder = tmp_path_factory.mktemp("treebank")
    write_treebank(folder / "train.conllu")
    config = load_config(
        "configs/smoke.yaml",
        [f"data.dataset={folder / 'train.conllu'}", f"data.cache_dir={folder / 'cache'}", "training.max_epochs=1"],
    )
    train(config, folder / "run", progress=False)
    return folder / "run" / "checkpoints" / "last.ckpt"


def test_bundle_serves_the_treebank_words(treebank_checkpoint, tmp_path):
    manifest = export_checkpoint(treebank_checkpoint, tmp_path / "bundle", threads=1)
    model = ParserFreeModel.load(tmp_path / "bundle")
    assert model.tokenize(["I don't like this film.", "This movie isn't dull."]) == [
        ["I", "don't", "like", "this", "film", "."],
        ["This", "movie", "isn't", "dull", "."],
    ]
    check = manifest["tokenizer"]["training_words"]
    assert check["reference"] == "treebank words of the train split"
    assert check["identical"] == check["sentences"] > 50 and check["special_cases"] >= len(NEGATIONS)
    assert check["held_out"]["sentences"] > 0
    assert [r["words"] for r in model.predict(["I can't like this film."])] == [
        ["I", "can't", "like", "this", "film", "."]
    ]


def _pointing_at(checkpoint, dataset, path) -> None:
    """A copy of ``checkpoint`` whose experiment names another data file."""
    ckpt = torch.load(checkpoint, map_location="cpu", weights_only=True)
    ckpt["parserfree"]["experiment"]["data"]["dataset"] = str(dataset)
    torch.save(ckpt, path)


def test_words_that_do_not_spell_the_text_refuse_the_export(treebank_checkpoint, tmp_path):
    write_treebank(tmp_path / "respelt.conllu", spell=lambda text: text.replace("'", ""))  # text "dont", word "don't"
    _pointing_at(treebank_checkpoint, tmp_path / "respelt.conllu", tmp_path / "model.ckpt")
    with pytest.raises(
        ExportError,
        match=r"the tokenizer fitted to the treebank does not reproduce the training words "
        r"of \d+ of \d+ sentences .*respelt.conllu:\d+: trained on .* \(its words do "
        r"not spell its text",
    ):
        export_checkpoint(tmp_path / "model.ckpt", tmp_path / "bundle", threads=1)
    assert not (tmp_path / "bundle").exists()


def test_a_parser_fed_treebank_model_is_refused(treebank_checkpoint, checkpoint_of_recipe, tmp_path):
    checkpoint_of_recipe(treebank_checkpoint, "parser_fed", "binary", tmp_path / "fed.ckpt")
    with pytest.raises(
        ExportError,
        match=r"the spaCy parser \(a parser-fed model is served with its words\) does not "
        r"reproduce the training words of \d+ of \d+ sentences",
    ):
        export_checkpoint(tmp_path / "fed.ckpt", tmp_path / "bundle", threads=1)


def test_a_treebank_model_whose_treebank_is_gone_is_refused(treebank_checkpoint, tmp_path):
    _pointing_at(treebank_checkpoint, tmp_path / "moved.conllu", tmp_path / "model.ckpt")
    with pytest.raises(
        ExportError, match="cannot check the bundled tokenizer against the training words of .*moved.conllu"
    ):
        export_checkpoint(tmp_path / "model.ckpt", tmp_path / "bundle", threads=1)


def test_a_treebank_model_exported_without_its_held_out_data_is_refused(treebank_checkpoint, tmp_path):
    """export_bundle reads no dataset: given no held-out sentences, a treebank model's words cannot be
    checked, so it is refused rather than bundled unchecked (its treebank is still on disk here)."""
    from parserfree.export import export_bundle

    with pytest.raises(ExportError, match="no held-out data was given to the export"):
        export_bundle(treebank_checkpoint, tmp_path / "bundle", threads=1)
    assert not (tmp_path / "bundle").exists()
