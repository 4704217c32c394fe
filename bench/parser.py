"""The predictor as a parser, scored by spaCy's own scorer against en_core_web_sm, and timed against it.

On held-out sentences of every built-in corpus (the test split of ``silver-trees``, grouped by
``columns["corpus"]``; whose trees are en_core_web_sm's) — or of any dataset given with ``--dataset``
(parsed by the teacher through the parse cache, gold trees for CoNLL-U) — the predicted tree of each
sentence (fed the reference's words) is scored:

- UUAS of D̂'s minimum spanning tree (punctuation excluded by the words' punctuation flags,
  ``predictor.metrics``), and UAS and LAS of the predicted heads and labels from
  ``spacy.scorer.Scorer.score_deps`` with spaCy's own parser settings (labels lower-cased, arcs labelled
  "punct"/"p" ignored on either side — so its UAS is an F-score of the arcs both sides keep); beside
  them UAS/LAS by the project's rule (every non-punctuation word, roots included);
- by sentence length (≤10, 11–20, 21–40, >40 words) and by relation (spaCy's per-label LAS p/r/f).

In the same run, the words/s of the predictor alone — a checkpoint's embeddings, the layers or tower it
reads and its scorers, exported to ONNX as a parser (``export.builder.export_predictor`` with ``parse``:
heads and labels, without D̂, as spaCy's parser returns; its heads and labels checked against the
predictor graph's, and those against PyTorch, on these sentences), or a bundle's tree graph (the whole model with its label scorer: ``tree.onnx``) — from raw text (spaCy tokenizer, encoding, onnxruntime with
``--threads`` intra-op threads, label names) against spaCy's tok2vec + parser (the teacher pipeline,
``distill.teacher.load_pipeline``) on the same texts, with ``n_process`` 1 and ``--threads`` (the better
warm rate counts: worker start-up subtracted). Words are the spaCy tokens of the texts, counted once.

    python -m bench.parser --checkpoint runs/predictor/checkpoints/best.ckpt [--bundle B] [--quick]
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from parserfree.core.parse import DEFAULT_MODEL, load_pipeline
from parserfree.distill.parsing import ParsedExample
from parserfree.encoder.text import normalise_text
from parserfree.export.timing import batches, machine
from parserfree.export.tokenizer import words_of
from parserfree.export.variants import QUANTIZE_CHOICES
from parserfree.predictor.metrics import LENGTH_BINS, DistanceMetrics, attachment, length_bin

from bench.lib.common import format_table, parse, script_arguments, write_record
from bench.lib.held_out_trees import Tree, held_out, predict
from bench.lib.parse_speed import (
    BATCH,
    System,
    bundle_system,
    checkpoint_system,
    ours_from_text,
    ours_from_words,
    spacy_seconds,
    timed,
)

PUNCT_LABELS = ("p", "punct")  # what spaCy's parser scorer ignores
RELATIONS = (
    "nsubj",
    "nsubjpass",
    "dobj",
    "pobj",
    "prep",
    "amod",
    "advmod",
    "det",
    "compound",
    "conj",
    "cc",
    "ccomp",
    "xcomp",
    "advcl",
    "relcl",
    "acl",
    "aux",
    "root",
)  # shown in the table (all are in the JSON)


# ----------------------------------------------------------------------------------------------- scores
def spacy_scores(pairs: Sequence[tuple[ParsedExample, Sequence[int], Sequence[str]]]) -> dict:
    """``Scorer.score_deps`` of predicted (heads, labels) against the reference trees, as spaCy's parser
    scores itself: {uas, las (percent), per_type: {label: {p, r, f} percent}}."""
    from spacy.scorer import Scorer
    from spacy.tokens import Doc
    from spacy.training import Example
    from spacy.vocab import Vocab

    vocab = Vocab()
    examples = []
    for gold, heads, labels in pairs:
        words = list(gold.words)
        reference = Doc(vocab, words=words, heads=[int(h) for h in gold.heads], deps=list(gold.deps))
        predicted = Doc(vocab, words=words, heads=[int(h) for h in heads], deps=[str(x) for x in labels])
        examples.append(Example(predicted, reference))
    if not examples:
        return {"uas": None, "las": None, "per_type": {}}
    got = Scorer.score_deps(examples, "dep", getter=lambda token, attr: token.dep_.lower(), ignore_labels=PUNCT_LABELS)
    per_type = {label: {k: 100 * v for k, v in prf.items()} for label, prf in (got["dep_las_per_type"] or {}).items()}
    return {"uas": _percent(got["dep_uas"]), "las": _percent(got["dep_las"]), "per_type": per_type}


def _percent(value: float | None) -> float | None:
    return None if value is None else 100 * value


def score_group(examples: Sequence[ParsedExample], trees: Sequence[Tree]) -> dict:
    """UUAS, spaCy's UAS/LAS, the project's UAS/LAS, by length and by relation, for one group of sentences."""
    distances = DistanceMetrics()
    counts = np.zeros(3, dtype=np.int64)  # words scored, heads right, heads and labels right (project rule)
    pairs, by_length = [], defaultdict(list)
    for gold, tree in zip(examples, trees):
        distances.update(tree.distances, gold.heads, gold.punct)
        labels = tree.labels or ("dep",) * len(gold.words)
        counts += attachment(tree.heads, gold.heads, gold.punct, np.array(labels), np.array(gold.deps))
        pairs.append((gold, tree.heads, labels))
        by_length[length_bin(len(gold.words))].append(pairs[-1])
    overall = spacy_scores(pairs)
    return {
        "sentences": len(examples),
        "words": int(sum(len(e.words) for e in examples)),
        "uuas": distances.compute()["uuas"],
        "uas": overall["uas"],
        "las": overall["las"],
        "uas_all_words": 100 * counts[1] / counts[0] if counts[0] else None,
        "las_all_words": 100 * counts[2] / counts[0] if counts[0] else None,
        "by_length": {
            name: {
                "sentences": len(by_length[name]),
                **{k: v for k, v in spacy_scores(by_length[name]).items() if k != "per_type"},
            }
            for name, _, _ in LENGTH_BINS
        },
        "relations": overall["per_type"],
    }


def accuracy(system: System, groups: dict[str, list[ParsedExample]]) -> dict:
    """score_group per corpus and over all of them."""
    result, everything = {}, ([], [])
    for group, examples in groups.items():
        trees = predict(system, [e.words for e in examples])
        result[group] = score_group(examples, trees)
        everything[0].extend(examples)
        everything[1].extend(trees)
    result["all"] = score_group(*everything)
    return result


def agreement(run: Callable, reference: Callable, words: Sequence[Sequence[str]]) -> float:
    """Share of words whose head and label from ``run`` equal ``reference``'s: the ONNX graph against
    PyTorch (the exported graph computes the model), the timed parser graph against the predictor graph."""
    same = total = 0
    for rows in batches(list(words), BATCH):
        got, ref = run([list(w) for w in rows]), reference([list(w) for w in rows])
        mask = ref["heads"] >= 0
        agree = got["heads"] == ref["heads"]
        if "dep_labels" in ref:
            agree &= got["dep_labels"] == ref["dep_labels"]
        same += int((agree & mask).sum())
        total += int(mask.sum())
    return same / total if total else float("nan")


# ----------------------------------------------------------------------------------------------- speed
def speed(systems: list[System], nlp, texts: list[str], threads: int, repeats: int) -> dict:
    """words/s from raw text of every system and of spaCy's tok2vec + parser (best of ``repeats`` passes,
    after one warm-up; spaCy's best setting of n_process ∈ {1, threads}).

    Where the time goes: the words/s of the way in alone (``words_of``: the text's normalisation and spaCy's
    tokenizer, which spaCy's pipeline runs too) and of each system after it (encoding, graph, names).
    ``ceiling_times_spacy`` = the way in's words/s over spaCy's: the ratio a system that tokenizes with spaCy
    could not pass even if its graph took no time at all.
    """
    n_words = sum(len(doc) for doc in nlp.tokenizer.pipe(texts))
    words_of(nlp.tokenizer, texts[:BATCH])  # warm-up
    tokenizer_seconds = min(timed(lambda: words_of(nlp.tokenizer, texts)) for _ in range(repeats))
    words = words_of(nlp.tokenizer, texts)
    result = {
        "texts": len(texts),
        "words": n_words,
        "threads": threads,
        "tokenizer_words_per_s": n_words / tokenizer_seconds,
        "systems": {},
    }
    for system in systems:
        ours_from_text(system, nlp.tokenizer, texts[:BATCH])  # warm-up
        seconds = min(timed(lambda: ours_from_text(system, nlp.tokenizer, texts)) for _ in range(repeats))  # noqa: B023 (called within the iteration)
        after = min(timed(lambda: ours_from_words(system, words)) for _ in range(repeats))  # noqa: B023
        result["systems"][system.name] = {
            "note": system.note,
            "words_per_s": n_words / seconds,
            "after_tokenizer_words_per_s": n_words / after,
        }
    settings = {}
    for n_process in sorted({1, threads}):
        spacy_seconds(nlp, texts[:BATCH], 1, 256)  # warm-up
        best = min(spacy_seconds(nlp, texts, n_process, 256) for _ in range(repeats))
        settings[f"n_process={n_process}"] = n_words / best
    result["spacy"] = {"pipeline": "tok2vec + parser", "settings": settings, "words_per_s": max(settings.values())}
    for entry in result["systems"].values():
        entry["times_spacy"] = entry["words_per_s"] / result["spacy"]["words_per_s"]
    result["ceiling_times_spacy"] = result["tokenizer_words_per_s"] / result["spacy"]["words_per_s"]
    return result


# ----------------------------------------------------------------------------------------------- report
def tables(result: dict) -> str:
    """The accuracy tables (by corpus, by length, by relation) and the speed table of one run."""
    out = []
    for name, groups in result["accuracy"].items():
        out.append(f"{name}: {result['systems'][name]} — against {result['reference']}")
        rows = [{"group": g, **r} for g, r in groups.items()]
        out.append(
            format_table(
                rows,
                [
                    ("group", "sentences", ""),
                    ("sentences", "n", ",d"),
                    ("uuas", "UUAS", ".1f"),
                    ("uas", "UAS (spaCy)", ".1f"),
                    ("las", "LAS (spaCy)", ".1f"),
                    ("uas_all_words", "UAS (all words)", ".1f"),
                    ("las_all_words", "LAS (all words)", ".1f"),
                ],
            )
        )
        lengths = [{"length": k, **v} for k, v in groups["all"]["by_length"].items()]
        out.append(
            format_table(
                lengths,
                [("length", "words", ""), ("sentences", "n", ",d"), ("uas", "UAS", ".1f"), ("las", "LAS", ".1f")],
            )
        )
        relations = groups["all"]["relations"]
        shown = [{"label": label, **relations[label]} for label in RELATIONS if label in relations]
        out.append(
            format_table(
                shown, [("label", "relation", ""), ("p", "LAS p", ".1f"), ("r", "LAS r", ".1f"), ("f", "LAS F", ".1f")]
            )
        )
    s = result["speed"]
    rows = [
        {"what": f"{name}: {v['note']}", "wps": v["words_per_s"], "x": v["times_spacy"]}
        for name, v in s["systems"].items()
    ]
    rows.append(
        {
            "what": f"spaCy tok2vec + parser ({', '.join(f'{k}: {v:,.0f}' for k, v in s['spacy']['settings'].items())})",
            "wps": s["spacy"]["words_per_s"],
            "x": 1.0,
        }
    )
    spacy_wps = s["spacy"]["words_per_s"]
    for name, v in s["systems"].items():
        if "after_tokenizer_words_per_s" in v:  # records before the split have the totals only
            wps = v["after_tokenizer_words_per_s"]
            rows.append(
                {"what": f"{name} after the tokenizer (encoding, graph, names)", "wps": wps, "x": wps / spacy_wps}
            )
    if "tokenizer_words_per_s" in s:
        rows.append(
            {
                "what": "the way in alone: normalisation + spaCy's tokenizer (the ceiling of the ratio)",
                "wps": s["tokenizer_words_per_s"],
                "x": s["ceiling_times_spacy"],
            }
        )
    out.append(f"speed from raw text, {s['texts']:,} texts, {s['words']:,} words, {s['threads']} threads")
    out.append(format_table(rows, [("what", "", ""), ("wps", "words/s", ",.0f"), ("x", "× spaCy", ".2f")]))
    if "predictor_onnx_as_pytorch" in result["checks"]:
        share = result["checks"]["predictor_onnx_as_pytorch"]
        graph = f"ONNX ({result['quantize']})" if result.get("quantize") else "ONNX"
        out.append(f"The predictor's {graph} heads and labels are PyTorch's on {share:.2%} of the words.")
    if "parser_graph_as_predictor" in result["checks"]:
        share = result["checks"]["parser_graph_as_predictor"]
        out.append(f"The timed parser graph's heads and labels are the predictor graph's on {share:.2%} of the words.")
    return "\n\n".join(out)


def run(
    checkpoint: str | None,
    bundle: str | None,
    dataset: str,
    split: str,
    cache_dir: str | None,
    threads: int,
    quick: bool,
    spacy_model: str = DEFAULT_MODEL,
    quantize: str | None = None,
) -> dict:
    """The whole benchmark (see the module docstring); returns the result written to JSON."""
    import torch

    torch.set_num_threads(threads)
    with tempfile.TemporaryDirectory() as folder:
        systems, checks = [], {}
        if checkpoint:
            system, reference = checkpoint_system(checkpoint, threads, Path(folder), quantize)
            systems.append(system)
        if bundle:
            systems.append(bundle_system(bundle, threads))
        if not systems:
            raise SystemExit("give --checkpoint and/or --bundle")
        groups = held_out(
            dataset, split, cache_dir, spacy_model, 200 if quick else None, min(s.max_len for s in systems)
        )
        every = [e for exs in groups.values() for e in exs]
        if checkpoint:
            words = [e.words for e in every]
            checks["predictor_onnx_as_pytorch"] = agreement(systems[0].run, reference, words)
            checks["parser_graph_as_predictor"] = agreement(systems[0].parse, systems[0].run, words)
        result = {
            "dataset": dataset,
            "split": split,
            "reference": f"{spacy_model} (the trees of the data)",
            "checkpoint": checkpoint,
            "quantize": quantize,
            "bundle": bundle,
            "quick": quick,
            "checks": checks,
            "systems": {s.name: s.note for s in systems},
            "accuracy": {s.name: accuracy(s, groups) for s in systems},
        }
        texts = [normalise_text(e.text) for e in every]
        nlp = load_pipeline(spacy_model)
        result["speed"] = speed(systems, nlp, texts, threads, 1 if quick else 3)
    result["machine"] = machine()
    return result


def arguments():
    parser = script_arguments(
        __file__, __doc__, threads=2, quick="at most 200 sentences per corpus, one timed pass", cache_dir=True
    )
    parser.add_argument(
        "--checkpoint", help="a run's checkpoint with a `heads` predictor (a pretrain_predictor run too)"
    )
    parser.add_argument("--bundle", help="a parser-free bundle with a tree graph that returns heads")
    parser.add_argument(
        "--dataset", default="silver-trees", help="held-out sentences with trees (default silver-trees)"
    )
    parser.add_argument("--split", default="test")
    parser.add_argument("--spacy-model", default=DEFAULT_MODEL)
    parser.add_argument(
        "--quantize",
        choices=QUANTIZE_CHOICES,
        help="time and score the checkpoint's predictor dynamically quantised (int8 weights, as a bundle's int8 variant)",
    )
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    result = run(
        args.checkpoint,
        args.bundle,
        args.dataset,
        args.split,
        args.cache_dir,
        args.threads,
        args.quick,
        args.spacy_model,
        args.quantize,
    )
    print(tables(result))
    print(f"results: {write_record(result, args)}")
    return result


if __name__ == "__main__":
    main()
