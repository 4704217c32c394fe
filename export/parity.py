"""Parity check: the exported graph must compute what the trained PyTorch model computes.

The gate between tracing and writing a bundle. Inputs are real held-out sentences — the dev split of the
checkpoint's own data, as the training side reads it (``core.held_out.HeldOut``), tokenised exactly as at
inference — arranged in batches whose sizes and lengths differ from the trace (one multi-sentence
example near ``max_len``, the shortest sentences, a spread of lengths with much padding, the longest
sentences). When the data cannot be read here (a built-in corpus not in the cache, a moved file, none
given), built-in example sentences are used instead and the report says so. Every output is compared: ``task_output`` everywhere, D̂ on
non-padding pairs only, the predicted heads and labels on words exactly. The predictor's argmax heads make
D̂ discrete, so a near-tie flipping a head would show as a whole row differing: the report gives the max
difference and the fraction of words whose D̂ row, head or label differs. A fp32 graph fails above
``TOLERANCE`` or on any differing head or label; a quantised graph is only reported on (max difference,
task-prediction agreement, heads and labels as PyTorch's).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..core.held_out import HeldOut
from ..core.trees import batch_tree_distances
from ..encoder.vocabulary import AnyVocabulary
from .errors import ExportError
from .graph_inputs import graph_inputs

TOLERANCE = 1e-4
log = logging.getLogger(__name__)

# Used only when the checkpoint's data cannot be read; varied lengths, punctuation, several sentences.
FALLBACK_TEXTS = (
    "Good.",
    "A quiet, lovely film.",
    "The plot is thin but the acting is superb.",
    "I did not expect to like it, yet I laughed from start to finish.",
    "Nothing works here: the jokes fall flat and the ending drags on forever.",
    "It's a mess.",
    "Her performance, subtle and brave, carries the whole second half of the story.",
    "Too long, too loud, and far too pleased with itself.",
    "A charming, funny and surprisingly moving portrait of a family that never quite fits together.",
    "Skip it.",
    "The director knows exactly what he wants, and the cast delivers it with real conviction and warmth.",
    "Dull. Lifeless. Boring!",
)

# (words, parser heads or None) of each text, as the export analyses them.
Analyse = Callable[[Sequence[str]], list[tuple[list[str], np.ndarray | None]]]


@dataclass
class ParitySet:
    """Graph input batches for the parity check and where their sentences came from."""

    source: str
    batches: list[dict[str, np.ndarray]] = field(default_factory=list)

    @property
    def shapes(self) -> list[list[int]]:
        """(batch, length) of every batch."""
        return [list(b["word_ids"].shape) for b in self.batches]


def parity_texts(held_out: HeldOut) -> tuple[list[str], str]:
    """The held-out texts of the checkpoint's data and where they come from, or the built-in FALLBACK_TEXTS
    when there are none (the data could not be read here, or holds no held-out example)."""
    if held_out.parity_texts:
        return list(held_out.parity_texts), held_out.parity_source
    reason = held_out.reason or "no held-out examples"
    log.warning("parity check uses built-in example sentences (%s)", reason)
    return list(FALLBACK_TEXTS), f"built-in example sentences ({reason})"


def _example_distances(heads: np.ndarray | None, n: int) -> np.ndarray | None:
    """Parser distances of the first n words (heads beyond n become roots, as in training)."""
    return None if heads is None else batch_tree_distances([heads], length=n)[0]


def build_parity_set(
    texts: Sequence[str], source: str, analyse: Analyse, vocab: AnyVocabulary, max_len: int, trace_shape: Sequence[int]
) -> ParitySet:
    """Batches of other sizes and lengths than ``trace_shape`` (batch, length) from ``texts``.

    With fewer than 8 usable texts the FALLBACK_TEXTS are added. Parser heads (parser-fed graphs) become
    the ``distances`` input.
    """
    texts = list(texts)
    analysed = [(w, h) for w, h in analyse(texts) if 0 < len(w) <= max_len]
    if len(analysed) < 8:
        analysed += [(w, h) for w, h in analyse(FALLBACK_TEXTS) if 0 < len(w) <= max_len]
    analysed.sort(key=lambda wh: len(wh[0]))
    joined = " ".join(texts + list(FALLBACK_TEXTS))
    long_words, long_heads = analyse([joined])[0]  # several sentences: a forest, cut to max_len
    n_long = min(len(long_words), max_len)
    examples = [(long_words[:n_long], _example_distances(long_heads, n_long))]
    examples += [(w, _example_distances(h, len(w))) for w, h in analysed]
    k = len(analysed)
    spread = sorted({1 + round(i * (k - 1) / 5) for i in range(6)})  # up to 6 indices across the lengths
    groups = [[0], list(range(1, 4)), spread, list(range(max(1, k + 1 - 4), k + 1))]
    batches = []
    for group in groups:
        group = [i for i in group if i < len(examples)]
        if not group:
            continue
        words = [examples[i][0] for i in group]
        distances = [examples[i][1] for i in group] if examples[0][1] is not None else None
        feeds = graph_inputs(vocab, words, max_len, distances)
        if list(feeds["word_ids"].shape) != list(trace_shape):
            batches.append(feeds)
    if len(batches) < 3:
        raise ExportError(f"could not build 3 parity batches from {source} (got {len(batches)})")
    return ParitySet(source, batches)


def compare_outputs(
    references: Sequence[dict[str, np.ndarray]],
    run: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]],
    parity: ParitySet,
    task: str,
) -> dict:
    """Run a graph on every parity batch against the PyTorch outputs ``references`` (one per batch): max
    |difference| of task_output and of D̂ (non-pad pairs), the fraction of words whose D̂ row differs,
    the fractions of words whose predicted head and label differ (None without those outputs),
    task-prediction agreement (classification), and whether every output is finite."""
    task_diff, dist_diff, finite = 0.0, None, True
    rows_differing, words, agree, n = 0, 0, 0, 0
    tree_differing: dict[str, int] = {}
    for feeds, ref in zip(parity.batches, references, strict=True):
        got = run(feeds)
        finite &= all(bool(np.isfinite(v).all()) for v in got.values())
        task_diff = max(task_diff, float(np.abs(got["task_output"] - ref["task_output"]).max()))
        if task != "regression":
            agree += int((got["task_output"].argmax(-1) == ref["task_output"].argmax(-1)).sum())
        n += len(feeds["mask"])
        if "distances" in ref:  # the parser-free graph's D̂ output
            mask = feeds["mask"]
            pairs = mask[:, :, None] & mask[:, None, :]  # B×T×T, both ends real words
            diff = np.where(pairs, np.abs(got["distances"] - ref["distances"]), 0.0)
            dist_diff = max(dist_diff or 0.0, float(diff.max()))
            rows_differing += int(((diff > TOLERANCE).any(-1) & mask).sum())
            words += int(mask.sum())
        for name in ("heads", "dep_labels"):  # the predicted tree: equal or not, word by word
            if name in ref:
                tree_differing[name] = tree_differing.get(name, 0) + int(
                    ((got[name] != ref[name]) & feeds["mask"]).sum()
                )
    share = {name: count / words if words else None for name, count in tree_differing.items()}
    return {
        "source": parity.source,
        "batches": parity.shapes,
        "task_output_max_diff": task_diff,
        "distances_max_diff": dist_diff,
        "distance_rows_differing": rows_differing / words if words else None,
        "heads_differing": share.get("heads"),
        "labels_differing": share.get("dep_labels"),
        "prediction_agreement": agree / n if task != "regression" else None,
        "finite": finite,
        "tolerance": TOLERANCE,
    }


def require_parity(report: dict, what: str) -> None:
    """Raise ExportError unless ``report`` (from compare_outputs) is finite, within TOLERANCE and has the
    same heads and labels as PyTorch."""
    if not report["finite"]:
        raise ExportError(f"{what}: onnxruntime produced non-finite outputs on the parity set ({report['source']})")
    worst = {"task_output": report["task_output_max_diff"], "distances": report["distances_max_diff"] or 0.0}
    bad = {k: v for k, v in worst.items() if not v <= TOLERANCE}
    tree = {k: report.get(f"{k}_differing") for k in ("heads", "labels")}
    tree = {k: v for k, v in tree.items() if v}  # any word whose head or label differs
    if bad or tree:
        details = ", ".join(
            [
                *(f"max |ORT − PyTorch| of {k} = {v:.3g}" for k, v in bad.items()),
                *(f"{k} differing on {v:.1%} of words" for k, v in tree.items()),
            ]
        )
        rows = report["distance_rows_differing"]
        extra = f"; D̂ rows differing: {rows:.1%}" if rows else ""
        raise ExportError(
            f"{what} failed the parity check (tolerance {TOLERANCE:g}): {details}{extra} "
            f"on batches {report['batches']} from {report['source']}; no bundle was written"
        )
