"""The parse-leak control at comparison time: a model trained on the tree of each item's grammatical version
(``parse.tree_text_column``) is fed that tree in the comparison too, with its own words."""

from __future__ import annotations

import numpy as np

from parserfree.comparison.compare import tree_texts
from parserfree.comparison.pipelines import ModelSource, parser_fed_pipeline
from parserfree.core.checkpoints import load_trained
from parserfree.core.parse import Parse
from parserfree.distill.data.datasets import Example


class RootAtXTeacher:
    """Stand-in parser: whitespace words, every word headed by the first word that holds an "x" (the root)."""

    def parse(self, texts):
        for t in texts:
            words = tuple(t.split())
            root = next(i for i, w in enumerate(words) if "x" in w)
            yield Parse(words, np.full(len(words), root, dtype=np.int64), np.zeros(len(words), dtype=bool))


def test_a_tree_text_model_reads_the_grammatical_versions_tree_with_its_own_words(recipe_checkpoint):
    trained = load_trained(recipe_checkpoint("parser_fed_twin"))
    source = ModelSource(None, trained, None)
    grammatical, flipped = "the box is here", "the dogs ax here"  # the flipped version's parse would root at word 2
    examples = [
        Example(grammatical, 1, "f", columns={"grammatical_text": grammatical}),
        Example(flipped, 0, "f", columns={"grammatical_text": grammatical}),
    ]
    assert tree_texts(source, examples) is None  # a model trained on its own trees reads its own trees
    trained.experiment.setdefault("parse", {})["tree_text_column"] = "grammatical_text"
    mapping = tree_texts(source, examples)
    assert mapping == {grammatical: grammatical, flipped: grammatical}
    outputs, words, _, parses = parser_fed_pipeline(source, RootAtXTeacher(), mapping)([flipped, "a lone xylophone"])
    assert words[0] == flipped.split() and parses[0].heads.tolist() == [1, 1, 1, 1]  # the grammatical tree: root "box"
    assert parses[1].heads.tolist() == [2, 2, 2]  # not in the mapping: its own tree
    plain = parser_fed_pipeline(source, RootAtXTeacher())([flipped])
    assert plain[3][0].heads.tolist() == [2, 2, 2, 2] and not np.allclose(plain[0][0], outputs[0])
