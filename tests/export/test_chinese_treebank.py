"""A language with no spaCy parser in the registries (Chinese): a user's own CoNLL-U treebank of pre-segmented
text, trained, exported and served with the whitespace tokenizer (``parse.spacy_model: whitespace``), which
gives back exactly the treebank's words — on held-out sentences too — or the export refuses."""

from __future__ import annotations

import random

import pytest
import spacy
from spacy.tokenizer import Tokenizer

from parserfree.core.parse import WHITESPACE, TeacherError
from parserfree.distill.config import load_config
from parserfree.distill.teacher import SpacyTeacher
from parserfree.distill.train import train
from parserfree.export import ExportError, ParserFreeModel
from parserfree.jobs.exporting import export_checkpoint

SUBJECTS = ["我", "他", "她", "我们", "他们", "老师"]
ADVERBS = ["非常", "很", "真", "一直"]
POSITIVE = ["喜欢", "欣赏", "推荐"]
NEGATIVE = ["讨厌", "不喜欢", "后悔买"]
OBJECTS = [("这", "本", "书"), ("那", "部", "电影"), ("这", "张", "专辑"), ("那", "家", "餐厅")]
#   subject  adverb  verb  det  classifier  noun  。  — heads (1-based), relations of a UD-style tree
HEADS = [3, 3, 0, 6, 6, 3, 3]
DEPRELS = ["nsubj", "advmod", "root", "det", "clf", "obj", "punct"]


def write_chinese_treebank(path, n: int = 120, segmented: bool = True) -> None:
    """CoNLL-U sentences with a ``# label`` (the verb's sentiment); ``# text`` is the words separated by
    spaces (pre-segmented), or as Chinese is written, without spaces (``segmented=False``)."""
    rng = random.Random(5)
    blocks = []
    for i in range(n):
        positive = i % 2 == 0
        words = [
            rng.choice(SUBJECTS),
            rng.choice(ADVERBS),
            rng.choice(POSITIVE if positive else NEGATIVE),
            *rng.choice(OBJECTS),
            "。",
        ]
        rows = [
            f"{k + 1}\t{w}\t_\t{'PUNCT' if w == '。' else 'X'}\t_\t_\t{HEADS[k]}\t{DEPRELS[k]}\t_\t_"
            for k, w in enumerate(words)
        ]
        text = (" " if segmented else "").join(words)
        blocks.append(
            "\n".join([f"# sent_id = zh{i}", f"# text = {text}", f"# label = {'pos' if positive else 'neg'}", *rows])
        )
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def chinese_checkpoint(tmp_path_factory):
    folder = tmp_path_factory.mktemp("zh")
    write_chinese_treebank(folder / "zh.conllu")
    config = load_config(
        "configs/smoke.yaml",
        [
            f"data.dataset={folder / 'zh.conllu'}",
            f"data.cache_dir={folder / 'cache'}",
            f"parse.spacy_model={WHITESPACE}",
            "data.task=classification",
            "training.max_epochs=1",
        ],
    )
    train(config, folder / "run", progress=False)
    return folder / "run" / "checkpoints" / "last.ckpt"


@pytest.mark.slow
def test_a_chinese_treebank_model_is_served_with_the_treebank_words_and_trees(chinese_checkpoint, tmp_path):
    manifest = export_checkpoint(chinese_checkpoint, tmp_path / "bundle", threads=1)
    check = manifest["tokenizer"]["training_words"]
    assert check["identical"] == check["sentences"] > 50 and check["special_cases"] == 0
    assert (
        check["held_out"]["identical"] == check["held_out"]["sentences"] > 0
    )  # unseen sentences too: nothing memorised
    model = ParserFreeModel.load(tmp_path / "bundle")
    unseen = "老师 一直 推荐 那 部 专辑 。"  # a combination the treebank does not hold
    (result,) = model.predict([unseen], with_tree=True)
    assert result["words"] == unseen.split() and len(result["tree"]) == len(unseen.split()) - 1
    nlp = spacy.blank("xx")
    nlp.tokenizer = Tokenizer(nlp.vocab)  # the bundle's tokenizer: spaces only
    nlp.add_pipe("parserfree", config={"bundle": str(tmp_path / "bundle")})
    doc = nlp(unseen)
    assert [t.text for t in doc] == unseen.split() and sum(t.head == t for t in doc) >= 1 and doc.cats


@pytest.mark.slow
def test_an_unsegmented_chinese_treebank_is_refused_not_memorised(tmp_path):
    write_chinese_treebank(tmp_path / "raw.conllu", segmented=False)  # "我非常喜欢这本书。": one chunk per sentence
    config = load_config(
        "configs/smoke.yaml",
        [
            f"data.dataset={tmp_path / 'raw.conllu'}",
            f"data.cache_dir={tmp_path / 'cache'}",
            f"parse.spacy_model={WHITESPACE}",
            "data.task=classification",
            "training.max_steps=2",
            "training.max_epochs=1",
        ],
    )
    train(config, tmp_path / "run", progress=False)
    with pytest.raises(
        ExportError,
        match=r"the whitespace tokenizer does not reproduce the training words .* the text "
        r"must be its words separated by spaces",
    ):
        export_checkpoint(tmp_path / "run" / "checkpoints" / "last.ckpt", tmp_path / "bundle", threads=1)
    assert not (tmp_path / "bundle").exists()


def test_the_whitespace_tokenizer_is_no_parser():
    with pytest.raises(TeacherError, match="has no parser"):
        SpacyTeacher(WHITESPACE)
