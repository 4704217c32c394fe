"""Benchmark: training throughput per recipe, and what the distance matrices and the distance loss cost.

Each row runs in a fresh process (so its peak memory is its own) on the same config, data, batches and
threads: Lightning trains the recipe for a fixed number of steps and the steady-state steps (after a
warm-up) give examples/s, both for the optimisation step alone and with data loading (the collate)
included. The rows: ``no_syntax``, ``parser_fed``, ``parser_free``, and ``parser_free`` with λ = 0
(no distance loss: the difference is what the predictor's loss and its backward pass cost). A last
process times the collate alone on the same batches and splits it into the word/feature ids
(``Vocabulary.encode_batch``) and the parser distance matrices (``core.trees``). Peak memory is the
process's peak resident set (``getrusage``), also shown above the resident set before training starts.

    python -m bench.train [--config configs/default.yaml] [--threads 2] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

from parserfree.export.timing import machine, peak_rss_mb, time_calls

from bench.lib.common import REPO, finish, format_table, parse, script_arguments

ROWS = {
    "no_syntax": ["recipe=no_syntax"],
    "parser_fed": ["recipe=parser_fed"],
    "parser_free": ["recipe=parser_free"],
    "parser_free, λ = 0": ["recipe=parser_free", "training.distance_loss_weight=0"],
}


def load_data(args: argparse.Namespace, overrides: list[str]):
    """The experiment config (config file + --set + the row's overrides) and its set-up DataModule."""
    from parserfree.distill.config import load_config
    from parserfree.distill.data_module import SyntaxDataModule

    config = load_config(args.config, [*(args.set or []), *overrides]).resolved()
    data = SyntaxDataModule(config, args.cache_dir, progress=False)
    data.prepare_data()
    data.setup()
    return config, data


def train_row(args: argparse.Namespace, overrides: list[str]) -> dict:
    """Train ``warmup + steps`` steps; examples/s over the last ``steps``, peak memory of this process."""
    import lightning as L
    import torch

    from parserfree.distill.co_training import CoTrainingModule

    class StepTimes(L.Callback):
        """Wall time of each training step, and between consecutive step ends (data loading included)."""

        def __init__(self) -> None:
            self.step, self.with_data, self.sizes = [], [], []
            self.start = self.last_end = None

        def on_train_batch_start(self, trainer, module, batch, batch_idx) -> None:
            self.start = time.perf_counter()

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx) -> None:
            end = time.perf_counter()
            self.step.append(end - self.start)
            self.with_data.append(end - self.last_end if self.last_end is not None else float("nan"))
            self.sizes.append(int(batch["mask"].shape[0]))
            self.last_end = end

    torch.set_num_threads(args.threads)
    L.seed_everything(0, verbose=False)
    config, data = load_data(args, overrides)
    encoder = config.model_encoder_config(len(data.vocab), data.vocab.n_features)
    module = CoTrainingModule(config, encoder, config.predictor_config(), data.vocab, data.label_names)
    times = StepTimes()
    trainer = L.Trainer(
        max_steps=args.warmup + args.steps,
        max_epochs=-1,
        limit_val_batches=0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        gradient_clip_val=config.training.grad_clip or None,
        callbacks=[times],
    )
    rss_before = peak_rss_mb()
    trainer.fit(module, train_dataloaders=data.train_dataloader())
    keep = slice(args.warmup, None)
    examples = sum(times.sizes[keep])
    return {
        "examples_per_s_step": examples / sum(times.step[keep]),
        "examples_per_s": examples / float(np.sum(times.with_data[keep])),
        "ms_per_step": 1e3 * float(np.mean(times.step[keep])),
        "steps": len(times.step[keep]),
        "batch_size": config.training.batch_size,
        "peak_rss_mb": peak_rss_mb(),
        "rss_before_training_mb": rss_before,
    }


def collate_row(args: argparse.Namespace) -> dict:
    """The collate of the training batches alone, and its two parts."""
    import torch

    from parserfree.core.trees import batch_tree_distances
    from parserfree.distill.data_module import collate

    torch.set_num_threads(args.threads)
    config, data = load_data(args, ["recipe=parser_fed"])
    order = data.train_dataloader().sampler.order()
    examples = data.splits["train"]
    size = config.training.batch_size
    chunks = [[examples[i] for i in order[j : j + size]] for j in range(0, len(order), size)]
    chunks = chunks[: args.warmup + args.steps]
    n = sum(len(c) for c in chunks)
    parts = {
        "collate": lambda c: collate(c, data.vocab, data.max_len, config.data.task),
        "word and feature ids": lambda c: data.vocab.encode_batch([e.words for e in c], data.max_len),
        "distance matrices": lambda c: batch_tree_distances([e.heads for e in c]),
    }
    result = {}
    for name, fn in parts.items():
        seconds = time_calls(fn, chunks)["seconds"]
        result[name] = {"examples_per_s": n / seconds, "ms_per_batch": 1e3 * seconds / len(chunks)}
    return result


def run_worker(args: argparse.Namespace, row: str) -> dict:
    """Run one row in a fresh process; its JSON result is the last line it prints."""
    cmd = [
        sys.executable,
        "-m",
        "bench.train",
        "--worker",
        row,
        "--config",
        args.config,
        "--threads",
        str(args.threads),
        "--steps",
        str(args.steps),
        "--warmup",
        str(args.warmup),
    ]
    cmd += [x for s in args.set or [] for x in ("--set", s)]
    cmd += ["--cache-dir", args.cache_dir] if args.cache_dir else []
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))  # `-m bench.train` from anywhere
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": path}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"bench.train: row {row!r} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def arguments():
    parser = script_arguments(__file__, __doc__, threads=2, quick="fewer steps", cache_dir=True)
    parser.add_argument(
        "--config", default="configs/default.yaml", help="experiment file (default configs/default.yaml)"
    )
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a setting (repeatable)")
    parser.add_argument("--steps", type=int, help="timed steps per row (default 100, --quick 20)")
    parser.add_argument("--warmup", type=int, help="untimed steps first (default 10, --quick 5)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    return parser


def tables(result: dict[str, Any]) -> str:
    """Training rows per recipe, the collate's parts and what the distance loss costs."""
    rows = format_table(
        result["rows"],
        [
            ("recipe", "recipe", ""),
            ("examples_per_s", "examples/s", ",.0f"),
            ("examples_per_s_step", "examples/s (step only)", ",.0f"),
            ("ms_per_step", "ms/step", ".1f"),
            ("peak_rss_mb", "peak RSS MiB", ",.0f"),
            ("rss_before_training_mb", "RSS before training MiB", ",.0f"),
        ],
    )
    parts = format_table(
        result["collate"],
        [
            ("part", "collate", ""),
            ("examples_per_s", "examples/s", ",.0f"),
            ("ms_per_batch", "ms/batch", ".2f"),
            ("share_of_parser_fed_step", "÷ parser_fed step", ".1%"),
        ],
    )
    head = (
        f"{' '.join([result['config'], *result['overrides']])}: {result['steps']} timed steps after "
        f"{result['warmup']}, {result['threads']} threads"
    )
    return f"{head}\n\n{rows}\n\n{parts}\n\nThe distance loss adds {result['distance_loss_cost']:.1%} to a parser_free step."


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    args.steps = args.steps or (20 if args.quick else 100)
    args.warmup = args.warmup or (5 if args.quick else 10)

    if args.worker:
        result = collate_row(args) if args.worker == "collate" else train_row(args, ROWS[args.worker])
        print(json.dumps(result))
        return result

    rows = []
    for name in ROWS:
        rows.append({"recipe": name, **run_worker(args, name)})
    collate = run_worker(args, "collate")
    fed_step = next(r for r in rows if r["recipe"] == "parser_fed")["ms_per_step"]
    parts = [
        {"part": name, **got, "share_of_parser_fed_step": got["ms_per_batch"] / fed_step}
        for name, got in collate.items()
    ]
    free, free_no_loss = rows[2], rows[3]
    result = {
        "machine": machine(),
        "config": args.config,
        "overrides": args.set or [],
        "threads": args.threads,
        "steps": args.steps,
        "warmup": args.warmup,
        "rows": rows,
        "collate": parts,
        "distance_loss_cost": free["ms_per_step"] / free_no_loss["ms_per_step"] - 1,
    }
    return finish(result, args, tables)


if __name__ == "__main__":
    main()
