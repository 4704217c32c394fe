"""Two parsers' trees of the same sentences compared word by word, with a verdict: shared by
``bench.parser_pair`` (two checkpoints) and ``bench.decoding`` (two decoders of one checkpoint's scores).

Each side gives, per scored word (non-punctuation, roots included: ``predictor.metrics.attached_words``),
whether its head is right (``uas``) and whether its head and label are (``las``), and each word's sentence
(``sentence``). The difference a − b is tested as the report tests two models (``parserfree.comparison.paired``): the
words of one sentence are one cluster, so the bootstrap interval resamples sentences and the sign-flip
test flips whole sentences; Holm over UAS and LAS.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

from parserfree.comparison.paired import Resampler, holm, paired_test, verdict
from parserfree.predictor.metrics import attached_words

from bench.lib.common import format_table

METRICS = ("uas", "las")


def held_out_options(parser: argparse.ArgumentParser) -> None:
    """The held-out sentences both sides parse: ``--dataset`` (default silver-trees) and ``--split`` (dev)."""
    parser.add_argument(
        "--dataset", default="silver-trees", help="held-out sentences with trees (default silver-trees)"
    )
    parser.add_argument("--split", default="dev")


def scored_words(examples: Sequence, trees: Sequence[tuple[np.ndarray, np.ndarray | None]]) -> dict[str, np.ndarray]:
    """One side's words: given each example's predicted (heads, labels), per scored word whether its head
    is right (``uas``), whether its head and label are (``las``), and its sentence (``sentence``)."""
    head, labelled, sentence = [], [], []
    for i, (gold, (heads, labels)) in enumerate(zip(examples, trees, strict=True)):
        head_ok, both_ok = attached_words(heads, gold.heads, gold.punct, labels, np.array(gold.deps))
        head.append(head_ok)
        labelled.append(both_ok)
        sentence.append(np.full(head_ok.size, i))
    return {"uas": np.concatenate(head), "las": np.concatenate(labelled), "sentence": np.concatenate(sentence)}


def compare(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> list[dict]:
    """Paired tests of a against b on each metric (clusters: sentences), Holm over the metrics."""
    clusters = a["sentence"]
    resampler = Resampler(clusters, seeds=1)
    tests = [(m, paired_test(a[m][None], b[m][None], clusters, resampler)) for m in METRICS]
    rows = []
    for (metric, t), p_holm in zip(tests, holm([t.p for _, t in tests]), strict=True):
        rows.append(
            {
                "metric": metric,
                "a": 100 * float(a[metric].mean()),
                "b": 100 * float(b[metric].mean()),
                "difference": t.difference,
                "ci95": t.ci95,
                "p_holm": p_holm,
                "detectable": t.detectable,
                "verdict": verdict(t.difference, t.ci95, p_holm),
            }
        )
    return rows


def comparison_table(comparisons: list[dict]) -> str:
    """``compare``'s rows as a Markdown table."""
    rows = [{**r, "metric": r["metric"].upper(), "ci": "[{:+.2f}, {:+.2f}]".format(*r["ci95"])} for r in comparisons]
    columns = [
        ("metric", "", ""),
        ("a", "a", ".2f"),
        ("b", "b", ".2f"),
        ("difference", "a − b", "+.2f"),
        ("ci", "95 % CI (sentences)", ""),
        ("p_holm", "p (Holm)", ".2g"),
        ("verdict", "verdict", ""),
    ]
    return format_table(rows, columns)
