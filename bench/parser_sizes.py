"""Parser capacity: predictor sizes pre-trained on one budget, scored on dev, against their speed (a Pareto table).

Each size is a set of ``--set`` overrides of a task config's predictor (the shared layer 1 as today, or a parser
tower of L layers × width d with its own embeddings); each is pre-trained with ``parserfree pretrain``'s code
(``main_job.pretrain_stage``, so a size trained once is read from the cache on the next run) for the same
budget — ``--epochs`` over ``--fraction`` of the silver-trees training sentences — and scored on the
silver-trees dev split (UUAS, UAS, LAS from its metrics.json: choose on dev, never on test). Its speed is the
words/s of the predictor alone from raw text (its ONNX graph, ``bench.lib.parse_speed.checkpoint_system``) on dev
texts, beside spaCy's tok2vec + parser on the same texts and threads. The table marks the Pareto front (no
other size both more accurate on dev LAS and faster); its record, and a plot beside it.

    python -m bench.parser_sizes [--fraction 0.25 --epochs 1 --threads 1] [--sizes NAME,...] [--quick]
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from parserfree.core.parse import DEFAULT_MODEL, load_pipeline
from parserfree.distill.config import load_config
from parserfree.distill.data.datasets import DataConfig, load_dataset
from parserfree.encoder.text import normalise_text
from parserfree.export.timing import machine
from parserfree.jobs.stages import pretrain_stage

from bench.lib.common import format_table, parse, script_arguments, write_record
from bench.lib.parse_speed import checkpoint_system, ours_from_text, spacy_seconds, timed


def tower(layers: int, width: int, heads: int, arc: int = 128, labels: int = 64) -> list[str]:
    """Overrides of a parser tower of ``layers`` × ``width`` (feed-forward 4 × width)."""
    return [
        "encoder.predictor_layer=0",
        f"predictor.tower_layers={layers}",
        f"predictor.tower_d_model={width}",
        f"predictor.tower_heads={heads}",
        f"predictor.tower_d_ff={4 * width}",
        f"predictor.arc_dim={arc}",
        f"predictor.label_dim={labels}",
    ]


SIZES = {
    "shared 1 × 64": [],  # the main job's encoder layer 1, read by the predictor (no tower)
    "tower 2 × 128": tower(2, 128, 4),
    "tower 4 × 128": tower(4, 128, 4),
    "tower 3 × 192": tower(3, 192, 6),
}


def pareto(rows: list[dict], accuracy: str, speed: str) -> None:
    """Mark each row whose no other row is both at least as accurate and at least as fast (one strictly)."""
    for r in rows:
        r["pareto"] = not any(
            o is not r
            and o[accuracy] >= r[accuracy]
            and o[speed] >= r[speed]
            and (o[accuracy] > r[accuracy] or o[speed] > r[speed])
            for o in rows
        )


def plot(rows: list[dict], spacy_wps: float, path: Path) -> None:
    """Dev LAS against predictor words/s, one point per size, the front joined, spaCy's speed as a line."""
    import matplotlib.pyplot as plt

    from parserfree.reports.figures import save_figure  # the Agg backend, atomic writes

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for r in rows:
        ax.scatter(r["words_per_s"], r["dev_las"], color="#4c72b0" if r["pareto"] else "#999999")
        ax.annotate(r["size"], (r["words_per_s"], r["dev_las"]), fontsize=8, xytext=(4, 4), textcoords="offset points")
    front = sorted((r for r in rows if r["pareto"]), key=lambda r: r["words_per_s"])
    ax.plot([r["words_per_s"] for r in front], [r["dev_las"] for r in front], color="#4c72b0", lw=1)
    ax.axvline(spacy_wps, color="#dd8452", ls="--", lw=1, label="spaCy tok2vec + parser")
    ax.axvline(10 * spacy_wps, color="#dd8452", ls=":", lw=1, label="10 × spaCy")
    ax.set_xscale("log")
    ax.set_xlabel("words/s of the predictor alone (ONNX, from raw text)")
    ax.set_ylabel("dev LAS against en_core_web_sm")
    ax.set_title("Parser capacity: accuracy against speed (one pre-training budget)")
    ax.legend(fontsize=8)
    save_figure(fig, path, dpi=120)


def run(
    config_path: str,
    sizes: dict[str, list[str]],
    fraction: float,
    epochs: int,
    threads: int,
    texts: int,
    cache_dir: str | None,
    quick: bool,
) -> dict:
    """Pre-train (or read from the cache) every size, score it on dev and time it; returns the result."""
    import torch

    torch.set_num_threads(threads)
    budget = [f"run.pretrain_epochs={epochs}", f"run.pretrain_fraction={fraction}", f"threads={threads}"]
    if quick:
        budget += ["training.max_steps=20", "training.limit_train_batches=0.01"]
    dev = load_dataset(DataConfig(dataset="silver-trees", task="none", cache_dir=cache_dir)).splits["dev"]
    sample = [normalise_text(e.text) for e in dev[:: max(1, len(dev) // texts)][:texts]]
    nlp = load_pipeline(DEFAULT_MODEL)
    n_words = sum(len(doc) for doc in nlp.tokenizer.pipe(sample))
    spacy_seconds(nlp, sample[:32], 1, 256)  # warm-up
    spacy_wps = n_words / min(spacy_seconds(nlp, sample, 1, 256) for _ in range(2))
    rows = []
    for name, overrides in sizes.items():
        config = load_config(config_path, [*overrides, *budget])
        predictor = pretrain_stage(config, cache_dir, progress=not quick, mode="train")
        metrics = predictor["metrics"]
        with tempfile.TemporaryDirectory() as folder:
            system, _ = checkpoint_system(predictor["checkpoint"], threads, Path(folder))
            ours_from_text(system, nlp.tokenizer, sample[:32])  # warm-up
            seconds = min(timed(lambda: ours_from_text(system, nlp.tokenizer, sample)) for _ in range(2))  # noqa: B023 (called within the iteration)
        rows.append(
            {
                "size": name,
                "overrides": overrides,
                "run_dir": predictor["run_dir"],
                "train_seconds": metrics.get("train_seconds"),
                "n_train": metrics.get("n_train"),
                **{f"dev_{k}": metrics["dev"].get(k) for k in ("uuas", "uas", "las", "dspr")},
                "words_per_s": n_words / seconds,
                "times_spacy": n_words / seconds / spacy_wps,
            }
        )
    pareto(rows, "dev_las", "words_per_s")
    return {
        "config": config_path,
        "budget": {"epochs": epochs, "train_fraction": fraction, "threads": threads},
        "speed_texts": len(sample),
        "speed_words": n_words,
        "spacy_words_per_s": spacy_wps,
        "sizes": rows,
        "machine": machine(),
        "quick": quick,
    }


def arguments():
    parser = script_arguments(
        __file__, __doc__, threads=1, quick="a few training steps per size (a look, a test)", cache_dir=True
    )
    parser.add_argument(
        "--config", default="configs/main/agreement.yaml", help="the task config whose predictor is sized"
    )
    parser.add_argument("--sizes", help=f"comma-separated names (default all: {', '.join(SIZES)})")
    parser.add_argument("--fraction", type=float, default=0.25, help="share of the silver-trees training split")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--texts", type=int, default=2000, help="dev texts timed")
    return parser


def tables(result: dict[str, Any]) -> str:
    table = format_table(
        result["sizes"],
        [
            ("size", "predictor", ""),
            ("train_seconds", "train s", ",.0f"),
            ("dev_uuas", "dev UUAS", ".1f"),
            ("dev_uas", "dev UAS", ".1f"),
            ("dev_las", "dev LAS", ".1f"),
            ("words_per_s", "words/s", ",.0f"),
            ("times_spacy", "× spaCy", ".1f"),
            ("pareto", "front", ""),
        ],
    )
    threads = result["budget"]["threads"]
    return f"{table}\n\nspaCy tok2vec + parser: {result['spacy_words_per_s']:,.0f} words/s ({threads} thread(s))"


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    sizes = {n: SIZES[n] for n in (s.strip() for s in args.sizes.split(","))} if args.sizes else SIZES
    result = run(args.config, sizes, args.fraction, args.epochs, args.threads, args.texts, args.cache_dir, args.quick)
    print(tables(result))
    path = write_record(result, args)
    plot(result["sizes"], result["spacy_words_per_s"], path.with_suffix(".png"))
    print(f"results: {path} (+ .png)")
    return result


if __name__ == "__main__":
    main()
