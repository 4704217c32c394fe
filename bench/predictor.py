"""The predictor against spaCy on held-out sentences of every built-in corpus: UUAS, DSpr, relation recall.

Reads the test split of ``silver-trees`` (sentences no task and no pre-training has seen; spaCy's trees
and labels kept), runs the checkpoint's lower layers + predictor on each sentence alone, and scores the
predicted tree per corpus (movie snippets, reviews, news, product reviews, tweets, OANC, WSJ) and by
sentence length: UUAS (punctuation excluded), DSpr, and the recall of nsubj, obj, amod, prep/pobj and
relcl arcs (``predictor.metrics.RelationMetrics``). The |i − j| chain is scored on the same sentences.

    python -m bench.predictor --checkpoint runs/curve-pretrain/f1-s0/pretrain_predictor/checkpoints/best.ckpt
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import torch

from parserfree.core.checkpoints import load_trained
from parserfree.distill.data.datasets import DataConfig, load_dataset
from parserfree.predictor import DistanceMetrics, chain_baseline
from parserfree.predictor.metrics import RelationMetrics

from bench.lib.common import parse, script_arguments, write_record


@torch.no_grad()
def predicted_distances(trained, words: list[list[str]], max_len: int, batch_size: int = 64) -> list[np.ndarray]:
    """D̂ (n×n) of every word list, from the checkpoint's lower layers and predictor."""
    model, out = trained.model.eval(), []
    for i in range(0, len(words), batch_size):
        word_ids, feature_ids, mask = (
            torch.from_numpy(a) for a in trained.vocab.encode_batch(words[i : i + batch_size], max_len)
        )
        predicted = model.predict(word_ids, feature_ids, mask)  # through its tower, if any
        dist = predicted.distances.numpy()
        out += [dist[b, :n, :n] for b, n in enumerate(mask.sum(1).tolist())]
    return out


def quality(checkpoint: str, cache_dir: str | None, max_per_corpus: int | None) -> dict:
    """Per corpus (and "all"): UUAS, DSpr, chain UUAS and relation recall by length on silver-trees test."""
    trained = load_trained(checkpoint)
    max_len = trained.model.encoder.config.max_len
    test = load_dataset(DataConfig(dataset="silver-trees", task="none", cache_dir=cache_dir)).splits["test"]
    test = [e for e in test if len(e.words) <= max_len]
    by_corpus: dict[str, list] = defaultdict(list)
    for e in test:
        by_corpus[e.columns["corpus"]].append(e)
    if max_per_corpus:
        by_corpus = {c: exs[:max_per_corpus] for c, exs in by_corpus.items()}
    result = {}
    everything = {"ours": DistanceMetrics(), "chain": DistanceMetrics(), "relations": RelationMetrics()}
    for corpus, exs in sorted(by_corpus.items()):
        parts = {"ours": DistanceMetrics(), "chain": DistanceMetrics(), "relations": RelationMetrics()}
        dists = predicted_distances(trained, [list(e.words) for e in exs], max_len)
        for e, d in zip(exs, dists):
            heads, punct = np.asarray(e.heads), np.asarray(e.punct)
            for acc in (parts, everything):
                acc["ours"].update(d, heads, punct)
                acc["chain"].update(chain_baseline(len(e.words)).astype(float), heads, punct)
                acc["relations"].update(d, heads, e.columns["deps"], punct)
        result[corpus] = summary(parts)
    result["all"] = summary(everything)
    return result


def summary(parts: dict) -> dict:
    ours, chain, relations = parts["ours"].compute(), parts["chain"].compute(), parts["relations"].compute()
    return {
        "sentences": ours["n_sentences"],
        "uuas": ours["uuas"],
        "dspr": ours["dspr"],
        "chain_uuas": chain["uuas"],
        "recall": relations["all"]["recall"],
        "by_length": {k: v["uuas"] for k, v in relations.items() if k != "all"},
    }


def tables(payload: dict[str, Any]) -> str:
    """One row per corpus (and all): UUAS, DSpr, the chain's UUAS, relation recall, UUAS by length."""
    result = payload["corpora"]
    groups = list(result["all"]["recall"])
    lengths = list(result["all"]["by_length"])
    head = [
        "corpus",
        "sentences",
        "UUAS",
        "DSpr",
        "chain UUAS",
        *(f"{g} recall" for g in groups),
        *(f"UUAS {b}" for b in lengths),
    ]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    fmt = lambda v, p=1: "–" if v is None else f"{v:.{p}f}"  # noqa: E731
    for corpus, r in result.items():
        cells = [
            corpus,
            f"{r['sentences']:,}",
            fmt(r["uuas"]),
            fmt(r["dspr"], 3),
            fmt(r["chain_uuas"]),
            *(fmt(r["recall"][g]) for g in groups),
            *(fmt(r["by_length"][b]) for b in lengths),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def arguments():
    parser = script_arguments(__file__, __doc__, threads=2, quick="at most 200 sentences per corpus", cache_dir=True)
    parser.add_argument(
        "--checkpoint", required=True, help="a run's checkpoints/best.ckpt (any recipe with a predictor)"
    )
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    torch.set_num_threads(args.threads)
    result = {
        "checkpoint": args.checkpoint,
        "corpora": quality(args.checkpoint, args.cache_dir, 200 if args.quick else None),
    }
    print(tables(result))
    print(f"results: {write_record(result, args)}")
    return result


if __name__ == "__main__":
    main()
