"""The exported graph's contract: words (+ parser distances) → the named numpy arrays it takes and gives.

Shared by the export (trace and parity inputs) and the runtime (every prediction), so both feed the graph
exactly alike. A graph's contract is decided by the recipe it was trained with (the manifest's ``kind``): its row
(``core.recipes``) decides its contract:

- every graph takes ``word_ids`` (B×T int64), ``feature_ids`` (B×T×F int64) and ``mask`` (B×T bool,
  True = real word) and returns ``task_output`` (B×C logits, or B scores for regression);
- a recipe whose inference source is the parser (``parser_fed``) also takes ``distances`` (B×T×T int64
  parser distances, −1 pad, 1000 across sentences): it needs a parser at inference (the comparison row);
- a recipe whose inference source is the predictor (``parser_free``) has two graphs. Its **task graph**
  returns ``task_output`` only: the predictor's D̂ feeds the bias inside it, and nothing the task does
  not read is computed (no label scorer). Its **tree graph** (``has_tree_graph``) returns, after
  ``task_output``, ``distances`` (B×T×T float D̂; −1 on pairs touching padding, 1000 across sentences)
  and, for a ``heads`` predictor, the tree it read them from: ``heads`` (B×T int64, 0-based, a root
  points to itself, −1 on padding; cycles broken) and, when it has a label scorer, ``dep_labels`` (B×T
  int64 ids into the bundle's ``dependency_labels``, −1 on padding). Which of these a tree graph has is
  its ``tree`` part (``tree_outputs``); the manifest records both graphs' outputs (``io_spec``).

The mask is bool because that is what the model computes with (``torch.where``); int64 would add a cast.
Batch and length are dynamic; T is the longest sentence of the batch, at most the model's ``max_len``. A
pre-trained encoder's graph (``encoder.pretrained``) takes the same three arrays from its subword
vocabulary (``encoder/subwords.py``): ``word_ids`` are then B×S subword ids and ``feature_ids`` B×S×1 the
word of each subword (−1 on special tokens and padding), over their own dynamic axis ``subwords``; the
mask, D̂ and the tree stay word-level (B×T).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.recipes import RECIPES, Recipe, exportable_recipes
from ..encoder.conventions import PAD_DISTANCE
from ..encoder.vocabulary import AnyVocabulary

WORD_INPUTS = ("word_ids", "feature_ids", "mask")
POSITION_INPUTS = ("word_ids", "feature_ids")  # over the encoder's positions: words, or a pre-trained one's subwords
TASK_OUTPUTS = ("task_output",)  # every task graph's outputs
TREE_OUTPUTS = ("heads", "dep_labels")  # the predicted tree, after D̂, in this order


def graph_recipe(recipe: str) -> Recipe:
    """The row of an exported graph's recipe; ValueError unless it is an exportable recipe."""
    if recipe not in exportable_recipes():
        raise ValueError(f"recipe {recipe!r} of a graph must be one of {', '.join(exportable_recipes())}")
    return RECIPES[recipe]


def input_names(recipe: str) -> tuple[str, ...]:
    """Graph input names of a recipe, in the order the graph takes them."""
    return WORD_INPUTS + (("distances",) if graph_recipe(recipe).needs_parser_at_inference else ())


def tree_outputs(predictor_form: str | None, labelled: bool) -> tuple[str, ...]:
    """The tree outputs of a predictor: ``heads`` (and ``dep_labels`` when ``labelled``) for the ``heads``
    form, none for the probe or without a predictor."""
    if predictor_form != "heads":
        return ()
    return TREE_OUTPUTS if labelled else TREE_OUTPUTS[:1]


def has_tree_graph(recipe: str) -> bool:
    """Whether a recipe's bundle has a tree graph beside its task graph (its inference source is the predictor)."""
    return graph_recipe(recipe).graph_returns_distances


def output_names(recipe: str, tree: Sequence[str] = ()) -> tuple[str, ...]:
    """The outputs of a recipe's tree graph, whose predictor has the ``tree`` outputs (``tree_outputs``):
    task_output, D̂ and the tree; a recipe without a tree graph has only its task graph's ``TASK_OUTPUTS``."""
    if not has_tree_graph(recipe):
        return TASK_OUTPUTS
    return (*TASK_OUTPUTS, "distances", *tree)


def manifest_outputs(manifest: dict) -> tuple[str, ...]:
    """The task graph's output names that a bundle's manifest records (``io_spec``'s outputs), in graph order."""
    return tuple(o["name"] for o in manifest["outputs"])


def manifest_tree_outputs(manifest: dict) -> tuple[str, ...]:
    """The tree graph's output names that a bundle's manifest records, in graph order; () without a tree graph."""
    tree = manifest.get("tree_graph")
    return tuple(o["name"] for o in tree["outputs"]) if isinstance(tree, dict) else ()


def position_axis(subwords: bool) -> str:
    """The symbolic length of ``POSITION_INPUTS``: ``length`` (words), or ``subwords`` for a pre-trained encoder."""
    return "subwords" if subwords else "length"


def io_spec(
    recipe: str, task: str, n_features: int, tree: Sequence[str] = (), subwords: bool = False
) -> dict[str, list[dict] | None]:
    """Names, dtypes and symbolic shapes of the inputs, of the task graph's ``outputs`` and of the tree
    graph's (``tree_outputs``; None for a recipe without one), as recorded in the manifest."""
    positions = position_axis(subwords)
    shapes = {
        "word_ids": ("int64", ["batch", positions]),
        "feature_ids": ("int64", ["batch", positions, n_features]),
        "mask": ("bool", ["batch", "length"]),
        "task_output": ("float32", ["batch"] if task == "regression" else ["batch", "classes"]),
        "distances": ("float32", ["batch", "length", "length"]),
        **{name: ("int64", ["batch", "length"]) for name in TREE_OUTPUTS},
    }
    row = graph_recipe(recipe)
    inputs = [{"name": n, "dtype": shapes[n][0], "shape": shapes[n][1]} for n in WORD_INPUTS]
    if row.needs_parser_at_inference:
        inputs.append({"name": "distances", "dtype": "int64", "shape": ["batch", "length", "length"]})

    def spec(names: Sequence[str]) -> list[dict]:
        return [{"name": n, "dtype": shapes[n][0], "shape": shapes[n][1]} for n in names]

    tree_outputs = spec(output_names(recipe, tree)) if has_tree_graph(recipe) else None
    return {"inputs": inputs, "outputs": spec(TASK_OUTPUTS), "tree_outputs": tree_outputs}


def pad_distances(distances: np.ndarray | Sequence[np.ndarray], batch: int, length: int) -> np.ndarray:
    """Parser distances → B×T×T int64 fitting the encoded batch (cropped to T, −1 on padding).

    Accepts a padded B×T'×T' array (e.g. ``core.trees.batch_tree_distances``) or one n×n matrix per
    example. Cropping keeps the distances of the kept words; pass distances of already truncated trees
    (``batch_tree_distances(heads, length=max_len)``) to match training exactly for over-long inputs.
    """
    if len(distances) != batch:
        raise ValueError(f"got distances for {len(distances)} examples, expected {batch}")
    out = np.full((batch, length, length), PAD_DISTANCE, dtype=np.int64)
    for b, matrix in enumerate(distances):
        m = np.asarray(matrix)
        if m.ndim != 2 or m.shape[0] != m.shape[1]:
            raise ValueError(f"distances of example {b} must be a square matrix, got shape {m.shape}")
        n = min(m.shape[0], length)
        out[b, :n, :n] = m[:n, :n]
    return out


def graph_inputs(
    vocab: AnyVocabulary,
    words: Sequence[Sequence[str]],
    max_len: int,
    distances: np.ndarray | Sequence[np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Word lists (+ parser distances for a parser-fed graph) → the graph's named inputs.

    Words beyond ``max_len`` are dropped by ``Vocabulary.encode_batch`` (with a warning).
    """
    word_ids, feature_ids, mask = vocab.encode_batch(words, max_len)
    feeds = {"word_ids": word_ids, "feature_ids": feature_ids, "mask": mask}
    if distances is not None:
        feeds["distances"] = pad_distances(distances, *mask.shape)
    return feeds
