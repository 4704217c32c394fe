"""Dependency labels travel from the data to the batch: CoNLL-U DEPREL and gold-tree columns survive
parsing (``parse_dataset`` used to drop them), the inventory comes from the training split, and the
collate's ``dep_labels`` are label ids with −1 on padding, unknown labels and words cut with their head."""

from __future__ import annotations

import numpy as np

from parserfree.distill.config import load_config
from parserfree.distill.data.datasets import DataConfig, load_dataset
from parserfree.distill.data_module import SyntaxDataModule, collate, truncate
from parserfree.distill.parsing import ParseConfig, ParsedExample, parse_dataset
from parserfree.encoder.conventions import NO_LABEL

TEMPLATES = [  # (words, 1-based heads, DEPREL)
    (["The", "film", "is", "good", "."], [2, 3, 0, 3, 3], ["det", "nsubj", "ROOT", "acomp", "punct"]),
    (["I", "saw", "a", "dog"], [2, 0, 4, 2], ["nsubj", "ROOT", "det", "dobj"]),
    (["Rain", "fell"], [2, 0], ["nsubj", "ROOT"]),
]


def write_treebank(path, n: int = 30) -> None:
    """n CoNLL-U sentences made from the templates (a number word keeps their texts apart)."""
    blocks = []
    for k in range(n):
        words, heads, deps = TEMPLATES[k % len(TEMPLATES)]
        words = [*words[:-1], f"{words[-1]}{k}"]
        lines = [
            f"{i + 1}\t{w}\t_\t{'PUNCT' if w.startswith('.') else 'X'}\t_\t_\t{h}\t{d}\t_\t_"
            for i, (w, h, d) in enumerate(zip(words, heads, deps))
        ]
        blocks.append("\n".join([f"# sent_id = s{k}", *lines]))
    path.write_text("\n\n".join(blocks) + "\n")


def test_conllu_labels_reach_the_batch_as_ids_of_the_training_inventory(tmp_path):
    write_treebank(tmp_path / "tb.conllu")
    config = load_config(
        "configs/smoke.yaml",
        [
            f"data.dataset={tmp_path / 'tb.conllu'}",
            "data.task=none",
            "recipe=pretrain_predictor",
            f"data.cache_dir={tmp_path}",
            "data.max_examples=null",
            "vocab.min_freq=1",
        ],
    )
    data = SyntaxDataModule(config, progress=False)
    data.setup()
    assert data.dep_labels == ("ROOT", "acomp", "det", "dobj", "nsubj", "punct")
    batch = collate(data.splits["train"][:3], data.vocab, data.max_len, "none")
    for b, example in enumerate(data.splits["train"][:3]):
        n = len(example.words)
        template = next(t for t in TEMPLATES if len(t[0]) == n)
        assert [data.dep_labels[k] for k in batch["dep_labels"][b, :n].tolist()] == template[2]
        assert (batch["dep_labels"][b, n:] == NO_LABEL).all()


def test_gold_tree_columns_keep_their_labels_through_parse_dataset(tmp_path):
    write_treebank(tmp_path / "tb.conllu", n=6)
    dataset = load_dataset(DataConfig(dataset=str(tmp_path / "tb.conllu"), task="none"))
    parsed, stats = parse_dataset(dataset, ParseConfig(), tmp_path, progress=False)
    assert stats["gold_trees"] == 6
    for examples in parsed.values():
        for e in examples:
            assert e.deps == tuple(next(t for t in TEMPLATES if len(t[0]) == len(e.words))[2])


def test_unknown_labels_and_words_cut_from_their_head_get_no_label():
    example = ParsedExample(
        ("a", "b", "c", "d"),
        np.array([1, 3, 3, 3]),
        np.zeros(4, dtype=bool),
        None,
        "a b c d",
        ("det", "relcl", "ROOT", "nsubj"),
    )
    cut = truncate(example, 2, ("ROOT", "det", "nsubj"))
    assert cut.heads.tolist() == [1, 1] and cut.dep_labels.tolist() == [1, NO_LABEL]  # relcl unknown; b cut: a root
    assert (
        truncate(ParsedExample(("a",), np.array([0]), np.zeros(1, dtype=bool), None, "a"), 5, ("ROOT",)).dep_labels
        is None
    )
    batch = collate([cut, truncate(example, 4, ())], _Vocab(), 8, "none")
    assert batch["dep_labels"].tolist() == [[1, NO_LABEL, NO_LABEL, NO_LABEL], [NO_LABEL] * 4]


class _Vocab:
    """The one method of a vocabulary the collate calls."""

    def encode_batch(self, words, max_len):
        t = max(len(w) for w in words)
        mask = np.array([[i < len(w) for i in range(t)] for w in words])
        return mask.astype(np.int64), np.zeros((len(words), t, 3), dtype=np.int64), mask
