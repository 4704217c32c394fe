"""The parse-leak control's trees: with parse.tree_text_column every item is given the tree of its grammatical
version (its own words kept), and every distinct text — items' and grammatical versions' — is parsed once."""

import numpy as np
import pytest

from parserfree.core.parse import Parse
from parserfree.distill.data.datasets import Dataset, Example
from parserfree.distill.parsing import ParseConfig, parse_dataset
from parserfree.encoder.schema import ConfigError


class AgreeingTeacher:
    """Stand-in parser that reacts to the error: the root is the word "are" when the sentence has it, else the
    last word; every other word hangs on the root."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @property
    def fingerprint(self) -> dict:
        return {"model": "agreeing", "version": "1", "tokenizer": "split"}

    def parse(self, texts):
        for t in texts:
            self.seen.append(t)
            words = tuple(t.split())
            root = words.index("are") if "are" in words else len(words) - 1
            yield Parse(
                words,
                np.full(len(words), root, dtype=np.int64),
                np.zeros(len(words), dtype=bool),
                tuple("ROOT" if i == root else "dep" for i in range(len(words))),
            )


def pairs() -> Dataset:
    """Minimal pairs: dev holds both versions of two sentences; train the flipped version of another."""

    def item(text, label, grammatical):
        return Example(text, label, "fixture", columns={"grammatical_text": grammatical})

    dev = [
        item("the dogs are here", 1, "the dogs are here"),
        item("the dogs is here", 0, "the dogs are here"),
        item("two cats are fine today", 1, "two cats are fine today"),
        item("two cats is fine today", 0, "two cats are fine today"),
    ]
    train = [item("the keys is gone now", 0, "the keys are gone now")]
    return Dataset("pairs", "binary", {"train": train, "dev": dev, "test": []}, ["ungrammatical", "grammatical"])


def test_the_control_reads_the_grammatical_versions_tree_and_keeps_its_own_words(tmp_path):
    plain, _ = parse_dataset(pairs(), ParseConfig(), tmp_path, progress=False, teacher=AgreeingTeacher())
    control, stats = parse_dataset(
        pairs(), ParseConfig(tree_text_column="grammatical_text"), tmp_path, progress=False, teacher=AgreeingTeacher()
    )
    kept, flipped = plain["dev"][0], plain["dev"][1]
    assert list(flipped.heads) != list(kept.heads)  # the parser reacts to the error: the leak the control removes
    assert [list(p.heads) for p in control["dev"]] == [list(plain["dev"][k].heads) for k in (0, 0, 2, 2)]
    assert control["dev"][1].words == ("the", "dogs", "is", "here") and control["dev"][1].deps == kept.deps
    assert list(control["train"][0].heads) == [2, 2, 2, 2, 2] and stats["tree_text_mismatches"] == 0


def test_every_distinct_text_is_parsed_once_for_every_recipe(tmp_path):
    teacher = AgreeingTeacher()
    parse_dataset(pairs(), ParseConfig(), tmp_path, progress=False, teacher=teacher)
    distinct = {
        "the dogs are here",
        "the dogs is here",
        "two cats are fine today",
        "two cats is fine today",
        "the keys is gone now",
        "the keys are gone now",
    }  # the last: a grammatical version seen in no item
    assert sorted(teacher.seen) == sorted(distinct)
    again = AgreeingTeacher()
    parse_dataset(pairs(), ParseConfig(tree_text_column="grammatical_text"), tmp_path, progress=False, teacher=again)
    assert again.seen == []  # the control finds every parse in the same cache


def test_a_tree_text_column_the_data_lacks_is_named(tmp_path):
    with pytest.raises(ConfigError, match="parse.tree_text_column=nope: the examples of pairs have no such column"):
        parse_dataset(
            pairs(), ParseConfig(tree_text_column="nope"), tmp_path, progress=False, teacher=AgreeingTeacher()
        )
