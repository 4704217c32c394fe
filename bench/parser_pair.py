"""Two parsers on the same held-out sentences, paired: which attaches more words correctly, with a verdict.

Each checkpoint's predictor (exported to ONNX as in ``bench.parser``) parses the same sentences of a split
of ``silver-trees`` (or ``--dataset``) (default ``dev``: parsers are chosen on dev, never on test), fed the reference's words.
For every non-punctuation word (roots included: the project's rule, ``predictor.metrics.attached_words``) each
parser's head is right or wrong (UAS), and its head and label (LAS). The difference a − b is tested as the
report tests two models (``parserfree.comparison.paired.paired_test``): the words of one sentence are one cluster, so
the bootstrap interval resamples sentences and the sign-flip test flips whole sentences; Holm over UAS and
LAS.

    python -m bench.parser_pair --a CKPT --b CKPT [--split dev] [--quick]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from parserfree.core.parse import DEFAULT_MODEL
from parserfree.export.timing import machine

from bench.lib.common import finish, parse, script_arguments
from bench.lib.held_out_trees import held_out, predict
from bench.lib.paired_words import compare, comparison_table, held_out_options, scored_words
from bench.lib.parse_speed import checkpoint_system


def word_correctness(checkpoint: str, groups: dict, threads: int) -> dict[str, np.ndarray]:
    """Per scored word (non-punctuation, in the order of ``groups``' sentences): head right (``uas``), head
    and label right (``las``); and each word's sentence (``sentence``)."""
    with tempfile.TemporaryDirectory() as folder:
        system, _ = checkpoint_system(checkpoint, threads, Path(folder))
        examples = [e for exs in groups.values() for e in exs]
        trees = predict(system, [e.words for e in examples])
    return scored_words(examples, [(t.heads, None if t.labels is None else np.array(t.labels)) for t in trees])


def run(a: str, b: str, dataset: str, split: str, cache_dir: str | None, threads: int, quick: bool) -> dict:
    """Parse the split with both checkpoints and compare them word by word (see the module docstring)."""
    import torch

    torch.set_num_threads(threads)
    groups = held_out(dataset, split, cache_dir, DEFAULT_MODEL, 200 if quick else None, 256)
    got_a, got_b = (word_correctness(c, groups, threads) for c in (a, b))
    if not np.array_equal(got_a["sentence"], got_b["sentence"]):
        raise SystemExit("the two parsers scored different words (their max_len differ?)")
    return {
        "a": a,
        "b": b,
        "dataset": dataset,
        "split": split,
        "quick": quick,
        "sentences": int(sum(len(x) for x in groups.values())),
        "words": int(got_a["uas"].size),
        "comparisons": compare(got_a, got_b),
        "machine": machine(),
    }


def tables(result: dict) -> str:
    """The comparison as a Markdown table."""
    head = f"a = {result['a']}, b = {result['b']}; {result['split']}: {result['sentences']} sentences, {result['words']} words"
    return head + "\n\n" + comparison_table(result["comparisons"])


def arguments():
    parser = script_arguments(__file__, __doc__, threads=2, quick="at most 200 sentences per corpus", cache_dir=True)
    parser.add_argument("--a", required=True, help="a checkpoint with a `heads` predictor")
    parser.add_argument("--b", required=True, help="the checkpoint it is compared with")
    held_out_options(parser)
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    result = run(args.a, args.b, args.dataset, args.split, args.cache_dir, args.threads, args.quick)
    return finish(result, args, tables)


if __name__ == "__main__":
    main()
