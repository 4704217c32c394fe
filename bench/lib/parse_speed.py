"""A graph that parses, timed from raw text against spaCy's parser: shared by bench.parser and bench.parser_sizes.

``System`` is a graph that returns distances, heads and labels for word lists: a checkpoint's predictor
alone, exported to ONNX (``checkpoint_system``: its embeddings, the layers or tower it reads and its
scorers, ``export.builder.export_predictor``), or a parser-free bundle's tree graph (``bundle_system``).
Its ``parse`` is what is timed: for a checkpoint, the same predictor exported as a parser (heads and
labels, no D̂, as spaCy's parser returns); for a bundle, its tree graph itself, whose task output needs D̂.
``ours_from_text`` runs ``parse`` from raw text (spaCy tokenizer, encoding, onnxruntime, label names) in
length-sorted batches, ``ours_from_words`` the same after the tokenizer; ``spacy_seconds`` times spaCy's
pipeline on the same texts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from parserfree.export.timing import batches
from parserfree.export.tokenizer import words_of

BATCH = 32


@dataclass
class System:
    """A graph that parses: its name, words → outputs (distances, heads, dep_labels), label names, max_len,
    and ``parse``: words → heads (and dep_labels), the graph that is timed (None: ``run`` itself)."""

    name: str
    run: Callable[[list[list[str]]], dict[str, np.ndarray]]
    labels: tuple[str, ...]
    max_len: int
    note: str
    parse: Callable[[list[list[str]]], dict[str, np.ndarray]] | None = None


def checkpoint_system(
    checkpoint: str, threads: int, folder: Path, quantize: str | None = None
) -> tuple[System, Callable]:
    """The predictor of a checkpoint as an ONNX graph of its own, with its parser graph (heads and labels
    alone) as ``parse`` (``quantize="int8"``: their dynamically quantised copies,
    ``export.variants.quantize_model``, as a bundle's int8 variant); also returns the PyTorch reference."""
    from parserfree.core.checkpoints import load_trained
    from parserfree.export.builder import export_predictor
    from parserfree.export.graph_inputs import graph_inputs
    from parserfree.export.onnx_graph import PredictorGraph, run_graph_module
    from parserfree.export.session import make_session
    from parserfree.export.variants import quantize_model

    trained = load_trained(checkpoint)
    max_len = trained.encoder_config.max_len

    def graph(name: str, parse: bool) -> tuple[Callable[[list[list[str]]], dict[str, np.ndarray]], PredictorGraph]:
        path = folder / f"{name}.onnx"
        graph_module = export_predictor(trained, path, parse)
        if quantize:
            path, source = folder / f"{name}.{quantize}.onnx", path
            quantize_model(source, path, quantize)
        session = make_session(path, threads)

        def run(words: list[list[str]]) -> dict[str, np.ndarray]:
            feeds = graph_inputs(trained.vocab, words, max_len)
            return dict(zip(graph_module.output_names, session.run(None, feeds)))

        return run, graph_module

    run, module = graph("predictor", parse=False)
    parse, _ = graph("parser", parse=True)

    def reference(words: list[list[str]]) -> dict[str, np.ndarray]:
        return run_graph_module(module, graph_inputs(trained.vocab, words, max_len))

    note = f"{trained.recipe} checkpoint's predictor alone (ONNX{', ' + quantize if quantize else ''})"
    return System("predictor", run, trained.dep_labels, max_len, note, parse), reference


def bundle_system(bundle: str, threads: int) -> System:
    """A parser-free bundle's tree graph (its predictor, its label scorer and the task layers)."""
    from parserfree.export.runtime import ParserFreeModel

    model = ParserFreeModel.load(bundle, threads=threads)
    if "heads" not in model.tree_output_names:
        raise SystemExit(f"{bundle}: it has no tree graph that returns heads (a probe or a bundle without a predictor)")

    def run(words: list[list[str]]) -> dict[str, np.ndarray]:
        return model.run_outputs(words, tree=True)

    return System("bundle", run, model.dependency_labels, model.max_len, f"{model.recipe} bundle's tree graph")


def ours_from_words(system: System, words: Sequence[Sequence[str]]) -> list[tuple[np.ndarray, list[str] | None]]:
    """Tokenised texts → the system's heads and label names per text, in the texts' order (encoding, its
    ``parse`` graph, names; run in length-sorted batches of BATCH): what ``ours_from_text`` runs after the
    tokenizer."""
    out: list[tuple[np.ndarray, list[str] | None]] = [(np.zeros(0, dtype=np.int64), None)] * len(words)
    for rows in batches(sorted(range(len(words)), key=lambda i: len(words[i])), BATCH):
        batch = [list(words[i][: system.max_len]) for i in rows]
        got = (system.parse or system.run)(batch)
        for b, (i, w) in enumerate(zip(rows, batch)):
            labels = [system.labels[k] for k in got["dep_labels"][b, : len(w)]] if "dep_labels" in got else None
            out[i] = (got["heads"][b, : len(w)], labels)
    return out


def ours_from_text(system: System, tokenizer, texts: Sequence[str]) -> list[tuple[np.ndarray, list[str] | None]]:
    """Raw text → the system's heads and label names per text (tokenizer, then ``ours_from_words``)."""
    return ours_from_words(system, words_of(tokenizer, texts))


def spacy_seconds(nlp, texts: Sequence[str], n_process: int, batch_size: int) -> float:
    """Seconds of ``nlp.pipe`` over the texts with ``n_process`` workers, less their start-up (timed alone)."""
    startup = 0.0
    if n_process > 1:
        start = time.perf_counter()
        list(nlp.pipe(["a"] * n_process, batch_size=1, n_process=n_process))
        startup = time.perf_counter() - start
    start = time.perf_counter()
    for _ in nlp.pipe(texts, batch_size=batch_size, n_process=n_process):
        pass
    return max(time.perf_counter() - start - startup, 1e-9)


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start
