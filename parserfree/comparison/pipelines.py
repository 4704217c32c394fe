"""Inference pipelines: raw text → model outputs, as a user of each kind of model would run them.

A pipeline maps a batch of raw texts to (task outputs, words, D̂ per text or None, parses or None). The
parser-fed pipeline parses with spaCy, builds tree distances and runs the model (onnxruntime when a
parser-fed bundle is given, else PyTorch); the tokenizer pipeline runs the parser-free graph or the
no-syntax baseline on tokenised words only (``model_pipeline``, what a user runs: a bundle's task graph,
never its tree graph). ``resolve_model`` turns a bundle, run folder or checkpoint
path into a ``ModelSource``; ``run_timed`` and ``latency_ms`` time a pipeline. Used by ``parserfree
compare`` and by the inference benchmark.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..core.checkpoints import TrainedModel, load_trained
from ..core.parse import Parse
from ..core.recipes import Recipe, get_recipe
from ..core.trees import batch_tree_distances, truncate_heads
from ..distill.parsing import tree_of
from ..distill.teacher import SpacyTeacher
from ..encoder.text import normalise_text
from ..export.runtime import SPINNING, ParserFreeModel
from ..export.timing import batches, time_calls
from ..export.tokenizer import words_of

# a pipeline maps raw texts to (task outputs, words, D̂ per text or None, parses or None)
Pipeline = Callable[[Sequence[str]], tuple[np.ndarray, list[list[str]], list[np.ndarray] | None, list[Parse] | None]]


@dataclass
class ModelSource:
    """A model to compare: a bundle (ONNX) and/or a trained checkpoint (PyTorch)."""

    bundle: ParserFreeModel | None
    trained: TrainedModel | None
    run_dir: Path | None

    @property
    def recipe(self) -> str:
        """The recipe the model was trained with (a bundle's manifest names it ``kind``)."""
        return self.bundle.recipe if self.bundle is not None else self.trained.recipe

    @property
    def row(self) -> Recipe:
        """The model's row of the recipe table."""
        return get_recipe(self.recipe)


def resolve_model(path: str | Path, threads: int, spinning: bool | None = SPINNING) -> ModelSource:
    """A bundle folder, a run folder (checkpoints/best.ckpt) or a .ckpt file → ModelSource (a bundle's
    session with ``threads`` and ``spinning`` as in ``ParserFreeModel.load``)."""
    p = Path(path)
    if (p / "manifest.json").exists():
        bundle = ParserFreeModel.load(p, threads=threads, spinning=spinning)
        ckpt = Path(bundle.manifest.get("checkpoint", {}).get("path", ""))
        trained = load_trained(ckpt) if ckpt.is_file() else None
        return ModelSource(bundle, trained, ckpt.parent.parent if trained else None)
    if p.is_dir():
        ckpt = p / "checkpoints" / "best.ckpt"
        if not ckpt.exists():
            raise FileNotFoundError(f"{p}: neither a bundle (manifest.json) nor a run folder (checkpoints/best.ckpt)")
        return ModelSource(None, load_trained(ckpt), p)
    if p.suffix == ".ckpt" and p.exists():
        return ModelSource(None, load_trained(p), p.parent.parent)
    raise FileNotFoundError(f"{p}: no such bundle, run folder or checkpoint")


def torch_outputs(
    trained: TrainedModel, words: list[list[str]], distances: np.ndarray | None, source: str
) -> np.ndarray:
    """Task outputs of a trained PyTorch model on a batch of word lists, with the given distance source
    ("parser" needs ``distances`` B×T×T; "predicted" uses the model's own D̂; "none" no bias)."""
    max_len = trained.encoder_config.max_len
    word_ids, feature_ids, mask = trained.vocab.encode_batch(words, max_len)
    d = torch.from_numpy(distances[:, : word_ids.shape[1], : word_ids.shape[1]]) if distances is not None else None
    with torch.no_grad():
        out = trained.model(
            torch.from_numpy(word_ids), torch.from_numpy(feature_ids), torch.from_numpy(mask), d, source=source
        )
    return out.task.numpy()


def parser_distances(parses: Sequence[Parse], max_len: int) -> np.ndarray:
    """The parser distances a model of ``max_len`` words reads for these parses (B×T×T int64): each tree
    cut to its first ``max_len`` words as in training (``core.trees.truncate_heads``), not cropped."""
    return batch_tree_distances([truncate_heads(p.heads, max_len) for p in parses])


def model_max_len(model: ModelSource) -> int:
    """The longest input, in words, the model reads."""
    return model.bundle.max_len if model.bundle is not None else model.trained.encoder_config.max_len


def parser_fed_pipeline(
    model: ModelSource, teacher: SpacyTeacher, tree_text_of: Mapping[str, str] | None = None
) -> Pipeline:
    """spaCy parse → tree distances → model (ORT when a parser-fed bundle is given, else PyTorch). With
    ``tree_text_of`` (text → the text whose tree it reads, as ``parse.tree_text_column`` says in training),
    a text found there keeps its words but takes that text's tree (``distill.parsing.tree_of``)."""
    max_len = model_max_len(model)

    def run(texts):
        parses = list(teacher.parse([normalise_text(t) for t in texts]))
        if tree_text_of:
            others = [tree_text_of.get(t) for t in texts]
            trees = iter(teacher.parse([normalise_text(o) for o in others if o]))
            parses = [tree_of(p, next(trees))[0] if o else p for p, o in zip(parses, others)]
        words = [list(p.words) for p in parses]
        distances = parser_distances(parses, max_len)
        if model.bundle is not None:
            out, _ = model.bundle.run_words(words, distances)
        else:
            out = torch_outputs(model.trained, words, distances, "parser")
        return out, words, None, parses

    return run


def model_pipeline(
    model: ModelSource, teacher: SpacyTeacher, tree_text_of: Mapping[str, str] | None = None
) -> Pipeline:
    """The pipeline a user of this model runs: behind the parser when its recipe needs parser distances at
    inference (``tree_text_of``: see ``parser_fed_pipeline``), else behind its tokenizer (the bundle's, or
    the teacher's for a checkpoint) — a bundle's task graph, the task output only (no D̂: a parser-free
    bundle's trees come from its tree graph, ``comparison.tree_quality.graph_trees``)."""
    if model.row.needs_parser_at_inference:
        return parser_fed_pipeline(model, teacher, tree_text_of)
    tokenize = model.bundle.tokenize if model.bundle is not None else functools.partial(words_of, teacher.nlp.tokenizer)
    return tokenizer_pipeline(model, tokenize, distances=False)


def tokenizer_pipeline(
    model: ModelSource, tokenize: Callable[[Sequence[str]], list[list[str]]], distances: bool = True
) -> Pipeline:
    """Tokenizer only → model: a graph that needs no parser, from a bundle or a checkpoint run in PyTorch
    with its recipe's inference source. A parser-free bundle runs its tree graph, which also gives D̂ —
    or, with ``distances`` False, its task graph alone (the task output only; no D̂)."""

    def run(texts):
        words = tokenize(texts)
        if model.bundle is not None and not distances:
            return model.bundle.run_outputs(words)["task_output"], words, None, None
        if model.bundle is not None:
            out, dist = model.bundle.run_words(words)
            lengths = [min(len(w), model.bundle.max_len) for w in words]
            return out, words, ([dist[b, :n, :n] for b, n in enumerate(lengths)] if dist is not None else None), None
        return torch_outputs(model.trained, words, None, model.row.eval_source), words, None, None

    return run


def run_timed(pipeline: Pipeline, texts: list[str], batch_size: int) -> dict:
    """All texts in batches (after one warm-up batch, ``time_calls``): outputs, words, D̂, parses and the
    seconds spent in the timed calls."""
    timed = time_calls(pipeline, batches(texts, batch_size), keep_results=True)
    outputs: list[np.ndarray] = []
    words: list[list[str]] = []
    dists: list[np.ndarray] = []
    parses: list[Parse] = []
    for out, w, d, h in timed["results"]:
        outputs.append(out)
        words += w
        dists += d or []
        parses += h or []
    return {
        "outputs": np.concatenate(outputs),
        "words": words,
        "distances": dists or None,
        "parses": parses or None,
        "seconds": timed["seconds"],
    }


def latency_ms(pipeline: Pipeline, texts: list[str]) -> tuple[float, float]:
    """p50 and p95 milliseconds of single-text calls (after one warm-up call, ``time_calls``)."""
    timed = time_calls(lambda text: pipeline([text]), texts)
    return timed["p50_ms"], timed["p95_ms"]
