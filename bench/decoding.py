"""How much a parser's trees would gain from exact decoding: the graph's cycle breaking against Eisner.

The exported graph turns a checkpoint's arc scores into a tree by taking each word's best head and
re-attaching one word of every cycle (``predictor.tree_ops.break_cycles``): a fixed number of tensor steps,
no search, and a forest may keep several roots. This bench asks what that costs. On the held-out sentences
of ``silver-trees`` (default ``dev``: decoders are chosen on dev), the PyTorch predictor's scores are
decoded twice, by the graph's own steps and by the best projective tree with one root (Eisner's algorithm on
the row-wise log-softmax of the scores, ``bench.lib.eisner``), each tree's labels read by the checkpoint's
label scorer at its heads; the two are compared word by word as two parsers are (``bench.lib.paired_words``:
UAS and LAS by the project's rule, paired by sentence, Holm). Beside them: the share of the reference trees
that are projective (what Eisner can reach) and of the graph's trees with more than one root or a crossing
arc.

    python -m bench.decoding --checkpoint models/parser-en/model.ckpt [--split dev] [--quick]
"""

from __future__ import annotations

import numpy as np

from parserfree.core.parse import DEFAULT_MODEL
from parserfree.export.timing import batches, machine

from bench.lib.common import finish, parse, script_arguments
from bench.lib.eisner import eisner_heads, is_projective, root_count
from bench.lib.held_out_trees import held_out
from bench.lib.paired_words import compare, comparison_table, held_out_options, scored_words

BATCH = 32
DECODERS = ("eisner", "graph")


def decode(checkpoint: str, examples: list) -> dict[str, list[tuple[np.ndarray, np.ndarray | None]]]:
    """Each example's (heads, labels) by the graph's decoding and by Eisner's, in input order."""
    import torch

    from parserfree.core.checkpoints import load_trained

    trained = load_trained(checkpoint)
    model, max_len = trained.model, trained.encoder_config.max_len
    names = trained.dep_labels
    out: dict[str, list] = {d: [None] * len(examples) for d in DECODERS}
    order = sorted(range(len(examples)), key=lambda i: len(examples[i].words))
    for rows in batches(order, BATCH):
        ids = [
            torch.from_numpy(a) for a in trained.vocab.encode_batch([list(examples[i].words) for i in rows], max_len)
        ]
        mask = ids[2]
        with torch.no_grad():
            got = model.predict(*ids)
            log_p = torch.log_softmax(got.arc_scores, dim=-1).numpy()
            eisner = torch.full_like(got.heads, -1)
            for b, i in enumerate(rows):
                n = len(examples[i].words)
                eisner[b, :n] = torch.from_numpy(eisner_heads(log_p[b, :n, :n]))
            scorer = model.predictor.label_scorer
            eisner_labels = (
                scorer.labels(scorer.scores(got.label_features, eisner), eisner, mask) if scorer is not None else None
            )
        for decoder, heads, labels in (("graph", got.heads, got.labels), ("eisner", eisner, eisner_labels)):
            for b, i in enumerate(rows):
                n = len(examples[i].words)
                named = None if labels is None else np.array([names[k] for k in labels[b, :n].tolist()])
                out[decoder][i] = (heads[b, :n].numpy(), named)
    return out


def _percent(flags: list[bool]) -> float:
    return 100 * float(np.mean(flags)) if flags else float("nan")


def run(checkpoint: str, dataset: str, split: str, cache_dir: str | None, threads: int, quick: bool) -> dict:
    """Decode the split both ways and compare them word by word (see the module docstring)."""
    import torch

    torch.set_num_threads(threads)
    groups = held_out(dataset, split, cache_dir, DEFAULT_MODEL, 200 if quick else None, 256)
    examples = [e for exs in groups.values() for e in exs]
    trees = decode(checkpoint, examples)
    words = {decoder: scored_words(examples, trees[decoder]) for decoder in DECODERS}
    graph = [heads for heads, _ in trees["graph"]]
    return {
        "checkpoint": checkpoint,
        "dataset": dataset,
        "split": split,
        "quick": quick,
        "sentences": len(examples),
        "words": int(words["graph"]["uas"].size),
        "reference_projective_pct": _percent([is_projective(e.heads) for e in examples]),
        "graph_several_roots_pct": _percent([root_count(h) > 1 for h in graph]),
        "graph_crossing_pct": _percent([not is_projective(h) for h in graph if root_count(h) == 1]),
        "comparisons": compare(words["eisner"], words["graph"]),
        "machine": machine(),
    }


def tables(result: dict) -> str:
    """The comparison (a = Eisner, b = the graph's decoding) and the shares of trees it depends on."""
    head = (
        f"{result['checkpoint']}: a = Eisner (projective, one root), b = the graph's cycle breaking; "
        f"{result['split']}: {result['sentences']} sentences, {result['words']} words"
    )
    shares = (
        f"reference trees projective: {result['reference_projective_pct']:.1f} %; graph trees with several roots: "
        f"{result['graph_several_roots_pct']:.1f} %, one-root graph trees with a crossing arc: {result['graph_crossing_pct']:.1f} %"
    )
    return f"{head}\n\n{comparison_table(result['comparisons'])}\n\n{shares}"


def arguments():
    parser = script_arguments(__file__, __doc__, threads=2, quick="at most 200 sentences per corpus", cache_dir=True)
    parser.add_argument("--checkpoint", required=True, help="a checkpoint with a `heads` predictor")
    held_out_options(parser)
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    result = run(args.checkpoint, args.dataset, args.split, args.cache_dir, args.threads, args.quick)
    return finish(result, args, tables)


if __name__ == "__main__":
    main()
