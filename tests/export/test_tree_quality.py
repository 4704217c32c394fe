"""The report's parse quality: UAS and LAS of the parser-free model's own heads and labels against spaCy's
parse, the same from the bundle's graph and from the checkpoint in PyTorch, and as counted by hand."""

from __future__ import annotations

import numpy as np
import pytest

from parserfree.comparison.pipelines import ModelSource, resolve_model
from parserfree.comparison.tree_quality import tree_quality
from parserfree.distill.teacher import SpacyTeacher

TEXTS = [
    "The film is great, and I told my friends.",
    "A small movie with a big heart.",
    "It was dull!",
    "Her performance carries the whole second half of the story.",
]


def test_tree_quality_scores_the_graphs_heads_and_labels(smoke_bundle):
    source = resolve_model(smoke_bundle[0], threads=1)
    parses = list(SpacyTeacher().parse(TEXTS))
    words = [list(p.words) for p in parses]
    got = tree_quality(source, words, parses)
    predicted = source.bundle.predict(TEXTS, with_tree=True)
    scored = head_ok = both_ok = 0
    for p, item in zip(parses, predicted):
        keep = ~p.punct
        heads = np.array(item["heads"])
        scored += int(keep.sum())
        head_ok += int(((heads == p.heads) & keep).sum())
        both_ok += int(((heads == p.heads) & (np.array(item["labels"]) == np.array(p.deps)) & keep).sum())
    assert got["skipped"] == 0 and got["all"]["words"] == scored
    assert got["all"]["uas"] == pytest.approx(100 * head_ok / scored)
    assert got["all"]["las"] == pytest.approx(100 * both_ok / scored)
    in_pytorch = tree_quality(ModelSource(None, source.trained, None), words, parses)
    assert in_pytorch["all"]["uas"] == got["all"]["uas"] and in_pytorch["all"]["las"] == got["all"]["las"]
