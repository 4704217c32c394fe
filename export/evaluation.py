"""Variant evaluation: every model of a bundle on the held-out test split — task metric, agreement with fp32, speed.

The parity check holds the fp32 graphs to PyTorch within 1e-4; the int8 graph changes the numbers by
design and is exempt, so the export measures what it costs and what it gains instead, on the same
sentences for every variant: the task metric against the gold labels, the share of predictions equal to
those of the fp32 ``model.onnx`` (Pearson r of the scores for regression) and sentences per second of
the task graph alone (batch 32, length-sorted, one warm-up batch; tokenisation excluded, the same for
all variants); from a parser-free bundle's tree graph of the same variant, the shares of words whose D̂
row, predicted head and label equal fp32's ``tree.onnx``, and its sentences per second
(``tree_sentences_per_s``). The result goes into the manifest (``evaluation``), the export's output and the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core.held_out import HeldOut
from ..core.task_metrics import agreement, predictions, task_metrics
from ..core.trees import batch_tree_distances
from ..encoder.vocabulary import AnyVocabulary
from .graph_inputs import graph_inputs
from .parity import TOLERANCE, Analyse
from .session import make_session
from .timing import batches, time_calls

BATCH_SIZE = 32


@dataclass(frozen=True, kw_only=True)
class BundleGraphs:
    """The graphs of a bundle being written and how their inputs are made: ``models`` (variant → task graph
    file in ``folder``, ``default`` first), ``tree_models`` (variant → tree graph file; none without a tree
    graph), the task and its classes; the analyser of raw text, the vocabulary, the length cap and the
    session threads."""

    folder: Path
    models: dict[str, str]
    tree_models: dict[str, str] = field(default_factory=dict)
    task: str
    n_classes: int
    analyse: Analyse
    vocab: AnyVocabulary
    max_len: int
    threads: int | None


def evaluate_variants(graphs: BundleGraphs, texts: Sequence[str], gold: np.ndarray) -> dict[str, dict]:
    """Per variant: metric, agreement with ``default`` and sentences per second on ``texts``; with a tree
    graph also its D̂ rows, heads and labels as the default tree graph's, and its sentences per second."""
    folder, models, analyse, vocab = graphs.folder, graphs.models, graphs.analyse, graphs.vocab
    max_len, threads, task, n_classes = graphs.max_len, graphs.threads, graphs.task, graphs.n_classes
    analysed = [(w[:max_len], h) for w, h in analyse(texts)]
    order = sorted((i for i, (w, _) in enumerate(analysed) if w), key=lambda i: len(analysed[i][0]))
    feeds = []
    for rows in batches(order, BATCH_SIZE):
        words = [analysed[i][0] for i in rows]
        heads = [analysed[i][1] for i in rows]
        distances = (
            None
            if heads[0] is None
            else [
                batch_tree_distances([h], length=len(w))[0]  # words cut: heads too
                for h, w in zip(heads, words)
            ]
        )
        feeds.append(graph_inputs(vocab, words, max_len, distances))
    gold = gold[order]
    results: dict[str, dict] = {}
    reference, reference_distances, reference_tree = None, None, {}
    tree_models = graphs.tree_models
    for variant, name in models.items():
        timed = _timed_runs(folder / name, feeds, threads)
        pred = predictions(task, np.concatenate([r["task_output"] for r in timed["results"]]))
        tree_timed = _timed_runs(folder / tree_models[variant], feeds, threads) if variant in tree_models else None
        got = tree_timed["results"] if tree_timed is not None else timed["results"]
        distances = [r["distances"] for r in got] if "distances" in got[0] else None
        tree = {k: [r[k] for r in got] for k in ("heads", "dep_labels") if k in got[0]}
        if reference is None:
            reference, reference_distances, reference_tree = pred, distances, tree
        scores = task_metrics(task, pred, gold, n_classes)
        results[variant] = {
            "metric_name": scores["metric_name"],
            "metric": scores["metric"],
            "agreement_with_fp32": agreement(task, pred, reference),
            "distance_rows_as_fp32": _rows_as(distances, reference_distances, feeds) if distances else None,
            "heads_as_fp32": _words_as(tree["heads"], reference_tree["heads"], feeds) if "heads" in tree else None,
            "labels_as_fp32": _words_as(tree["dep_labels"], reference_tree["dep_labels"], feeds)
            if "dep_labels" in tree
            else None,
            "sentences_per_s": _rate(len(order), timed),
            "tree_sentences_per_s": _rate(len(order), tree_timed) if tree_timed is not None else None,
        }
    return results


def _timed_runs(path: Path, feeds: list[dict], threads: int | None) -> dict:
    """``time_calls`` of one graph file over ``feeds``, every output by name kept (``results``)."""
    session = make_session(path, threads)
    names = [o.name for o in session.get_outputs()]
    return time_calls(lambda f: dict(zip(names, session.run(None, f))), feeds, keep_results=True)


def _rate(sentences: int, timed: dict) -> float | None:
    return sentences / timed["seconds"] if timed["seconds"] > 0 else None


def _rows_as(distances: list[np.ndarray], reference: list[np.ndarray], feeds: list[dict]) -> float:
    """Share of words whose row of predicted distances D̂ equals the fp32 graph's (within the parity
    tolerance; padding ignored): where a variant's trees differ, these rows do."""
    same = words = 0
    for got, ref, f in zip(distances, reference, feeds):
        mask = f["mask"]
        pairs = mask[:, :, None] & mask[:, None, :]
        close = np.where(pairs, np.abs(got - ref) <= TOLERANCE, True).all(-1)
        same += int((close & mask).sum())
        words += int(mask.sum())
    return same / words if words else float("nan")


def _words_as(values: list[np.ndarray], reference: list[np.ndarray], feeds: list[dict]) -> float:
    """Share of words whose predicted head (or label; B×T per batch) equals the fp32 graph's."""
    same = sum(int(((got == ref) & f["mask"]).sum()) for got, ref, f in zip(values, reference, feeds))
    words = sum(int(f["mask"].sum()) for f in feeds)
    return same / words if words else float("nan")


def evaluation_report(graphs: BundleGraphs, held_out: HeldOut) -> dict:
    """The manifest's ``evaluation``: what was measured on which sentences (the checkpoint's labelled test
    texts, ``held_out``), or why nothing was."""
    if held_out.reason is not None:
        return {"skipped": f"the checkpoint's data is not available ({held_out.reason})"}
    if not held_out.test_texts:
        return {"skipped": f"the test split of {held_out.dataset} has no labelled examples"}
    return {
        "source": f"test split of {held_out.dataset}",
        "n_examples": len(held_out.test_texts),
        "batch_size": BATCH_SIZE,
        "threads": graphs.threads,
        "speed": "sentences/s of the task graph alone (tree_sentences_per_s: of the tree graph; tokenisation "
        "excluded), length-sorted batches",
        "variants": evaluate_variants(graphs, held_out.test_texts, np.array(held_out.test_labels)),
    }
