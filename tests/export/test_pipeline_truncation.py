"""Inputs longer than the encoder's max_len: the parser-fed comparison pipeline must feed the model the
distances training feeds it (the tree cut to max_len words, words whose head was cut re-rooted), not the
full tree's distances cropped (issue 21 item 6)."""

from __future__ import annotations

import numpy as np
import torch

from parserfree.comparison.pipelines import ModelSource, parser_fed_pipeline
from parserfree.core.checkpoints import load_trained
from parserfree.core.parse import Parse
from parserfree.distill.data_module import collate, truncate
from parserfree.distill.parsing import ParsedExample


class StarTeacher:
    """Stand-in parser: whitespace words, every word headed by the last one (the root)."""

    def parse(self, texts):
        for t in texts:
            words = tuple(t.split())
            heads = np.full(len(words), len(words) - 1, dtype=np.int64)
            yield Parse(words, heads, np.zeros(len(words), dtype=bool))


def test_parser_fed_pipeline_feeds_an_over_long_input_the_distances_training_feeds_it(recipe_checkpoint):
    trained = load_trained(recipe_checkpoint("parser_fed_twin"))  # random weights, a bias table that matters
    max_len = trained.encoder_config.max_len
    words = [f"w{i % 7}" for i in range(max_len + 9)]  # the root lies past max_len: cropping keeps paths through it
    short = words[:5]  # fits: nothing to cut
    texts = [" ".join(words), " ".join(short)]
    outputs, _, _, parses = parser_fed_pipeline(ModelSource(None, trained, None), StarTeacher())(texts)

    examples = [truncate(ParsedExample(p.words, p.heads, p.punct, 0, t), max_len) for p, t in zip(parses, texts)]
    batch = collate(examples, trained.vocab, max_len, trained.task)  # exactly what training and validation feed
    with torch.no_grad():
        expected = trained.model(
            batch["word_ids"], batch["feature_ids"], batch["mask"], batch["distances"], source="parser"
        ).task.numpy()
    assert np.abs(expected[1] - outputs[1]).max() < 1e-5  # the short input was right all along
    assert np.abs(expected[0] - outputs[0]).max() < 1e-5
