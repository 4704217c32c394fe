"""D̂ and the parser-free graph's own trees scored against the parser's: a report domain's ``DistanceQuality``,
and the parser-free checkpoint's score on the parser's trees instead of D̂ (what the predictor costs).

``distance_quality`` scores distance matrices against the parser's trees as ``predictor.DistanceMetrics``
does (UUAS with punctuation excluded, DSpr, L1; given the predicted heads, root accuracy and the cycle rate
of those heads; given the raw argmax heads, theirs), with the |i−j| chain baseline's UUAS and DSpr on the
same sentences and UUAS and relation recall by sentence length (``RelationMetrics``).
``parser_free_quality`` does it for one parser-free row of ``compare`` from one pass of its tree graph
(``comparison.tree_quality.graph_trees``, untimed: the timed passes run the task graph): D̂ and the graph's heads,
the argmax heads of its checkpoint, and under ``tree`` the graph's directed, labelled trees
(``comparison.tree_quality.tree_quality`` on the same trees: UAS, LAS by length and relation); ``tree_pass``
is that pass. ``with_parser_distances`` runs the parser-free checkpoints in PyTorch on the parser's tree
distances (the report's ``parser_free_with_parser_distances``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.parse import Parse
from ..core.task_metrics import predictions
from ..distill.data.datasets import Example
from ..distill.evaluate import argmax_heads
from ..encoder.errors import UsageError
from ..predictor import DistanceMetrics, chain_baseline
from ..predictor.metrics import RelationMetrics
from ..reports.parts import DistanceQuality, TreeQuality, from_json
from ..reports.report import Score
from .pipelines import ModelSource, parser_distances, torch_outputs
from .scoring import row_score
from .tree_quality import PredictedTree, graph_trees, tree_quality


def distance_quality(
    dists: Sequence[np.ndarray],
    words: Sequence[Sequence[str]],
    parses: Sequence[Parse],
    argmax: Sequence[np.ndarray] | None = None,
    heads: Sequence[np.ndarray] | None = None,
) -> DistanceQuality:
    """Every D̂ metric against the parser's trees, the chain baseline's, the sentences skipped (words that
    differ from the parse's, or cut) and relation recall by length. Root accuracy and the cycle rate need the
    predicted ``heads`` and the argmax cycle rate the raw ``argmax`` heads (else None)."""
    ours, chain, relations = DistanceMetrics(), DistanceMetrics(), RelationMetrics()
    skipped = 0
    for k, (d, w, p) in enumerate(zip(dists, words, parses)):
        if list(w) != list(p.words) or len(w) > d.shape[0]:
            skipped += 1  # tokenisations differ (should not happen: same tokenizer) or truncated
            continue
        ours.update(
            d,
            p.heads,
            p.punct,
            pred_heads=heads[k] if heads is not None else None,
            argmax_heads=argmax[k] if argmax is not None else None,
        )
        chain.update(chain_baseline(len(w)).astype(float), p.heads, p.punct)
        if p.deps is not None:
            relations.update(d, p.heads, p.deps, p.punct)
    base = chain.compute()
    found = {
        "chain_uuas": base["uuas"],
        "chain_dspr": base["dspr"],
        "skipped": skipped,
        "relations": relations.compute(),
    }
    return from_json(DistanceQuality, {**ours.compute(), **found})  # a metric the type lacks is an error


def parser_free_quality(
    source: ModelSource, words: list[list[str]], trees: Sequence[PredictedTree], parses: Sequence[Parse]
) -> DistanceQuality:
    """D̂ quality of one parser-free model on ``words`` from its graph's ``trees`` of them (D̂, heads, labels:
    ``graph_trees``), with the argmax cycle rate where a checkpoint gives the raw heads, and the graph's trees
    under ``tree``."""
    trained = source.trained
    argmax = argmax_heads(trained.model, trained.vocab, words, trained.encoder_config.max_len) if trained else None
    heads = [t.heads for t in trees if t.heads is not None]  # none from a probe
    quality = distance_quality(
        [t.distances for t in trees], words, parses, argmax, heads if len(heads) == len(trees) else None
    )
    tree = tree_quality(source, words, parses, trees)
    quality.tree = TreeQuality.from_json_form(tree) if tree is not None else None
    return quality


def tree_pass(sources: Sequence[ModelSource], runs: Sequence[dict], batch_size: int) -> list[list[PredictedTree]]:
    """Per seed, the tree graph's D̂, heads and labels of a parser-free row's words (``runs``: its timed runs,
    ``run_timed``'s, words in run order): one untimed pass over the split, apart from the timed passes of the
    task graph; UsageError for a model without a tree graph."""
    passes = [graph_trees(source, run["words"], batch_size) for source, run in zip(sources, runs)]
    if any(trees is None for trees in passes):
        raise UsageError(f"{sources[0].recipe}: the parser-free model gives no D̂ (a bundle without a tree graph)")
    return [trees for trees in passes if trees is not None]


def with_parser_distances(
    sources: Sequence[ModelSource],
    parsed: dict,
    order: np.ndarray,
    examples: Sequence[Example],
    task: str,
    label_names: Sequence[str],
    batch_size: int,
) -> Score | None:
    """Task score of the parser-free checkpoints (one per seed) run in PyTorch on the parser's tree distances
    of ``parsed`` (the reference's run: words and parses in run order; ``order``: run position → item);
    None without checkpoints."""
    if sources[0].trained is None:
        return None
    per_seed = []
    for source in sources:
        max_len = source.trained.encoder_config.max_len
        sorted_out = np.concatenate(
            [
                torch_outputs(
                    source.trained,
                    parsed["words"][i : i + batch_size],
                    parser_distances(parsed["parses"][i : i + batch_size], max_len),
                    "parser",
                )
                for i in range(0, len(examples), batch_size)
            ]
        )
        ordered = np.empty_like(sorted_out)
        ordered[order] = sorted_out
        per_seed.append(predictions(task, ordered))
    n_classes = max(2, len(label_names)) if task != "regression" else 1
    return row_score(task, np.stack(per_seed), np.array([e.label for e in examples]), n_classes, None)
