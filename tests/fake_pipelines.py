"""Stand-in comparison pipelines for the report tests: scripted task outputs, chain trees, no model and no
parser. A pipeline maps texts to (task outputs, words, D̂ or None, parses or None) as
``parserfree.comparison.pipelines`` does."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from parserfree.core.parse import Parse
from parserfree.core.trees import batch_tree_distances


class NoBar:
    """A progress bar that shows nothing."""

    def update(self, n: int) -> None:
        pass


def scripted_pipeline(output_of: Mapping[str, np.ndarray] | Callable[[str], np.ndarray], with_distances: bool):
    """Task output of each text from ``output_of`` (a mapping or a function); whitespace words, each headed by
    the next; D̂ of that chain (a parser-free pipeline) or its parses (a parser-fed one)."""
    lookup = output_of if callable(output_of) else output_of.__getitem__

    def run(texts):
        words = [t.split() for t in texts]
        out = np.stack([np.asarray(lookup(t)) for t in texts])
        heads = [np.minimum(np.arange(len(w)) + 1, len(w) - 1) for w in words]
        if with_distances:
            return out, words, [batch_tree_distances([h])[0].astype(float) for h in heads], None
        return out, words, None, [Parse(tuple(w), h, np.zeros(len(w), bool)) for w, h in zip(words, heads)]

    return run
