"""Benchmark: test accuracy against end-to-end speed for a grid of model sizes — the Pareto front of size.

Two phases, one command each:

- ``--train`` trains the parser-free recipe of the main job (``configs/main/agreement.yaml`` and
  ``configs/main/sentiment.yaml``, one thread, the schedule pinned by ``RECIPE``) at every size of the grid — d_model 64 / 128 / 256 × 2 / 4
  layers, plus the main job's d 64 × 3 — with d_ff = 4·d, 4 heads, the predictor after half the layers
  (rounded down) and arc_dim = d, into ``runs/pareto/<task>/d<d>_l<layers>``, and exports each with its
  optimised and int8 variants (``.../bundle``; the export evaluates fp32 and int8 on the test split).
  Every run and export has a stage record (``parserfree.jobs.stage_records``): a re-run skips what is done, resumes a
  training cut short and rebuilds what changed. Smallest sizes first, one training at a time.
- the default (measuring) phase times every exported size end to end from raw text (bundled tokenizer →
  onnxruntime graph, length-sorted batches of 32, ``--threads``), fp32 and int8, on the task's test
  texts, every model in turn on each batch and each batch's fastest of ``--repeats`` passes kept (a
  burst of load elsewhere then hits all models alike); accuracy is the export's
  evaluation on the test split (the same sentences for fp32 and int8). Beside each point: its speed over
  spaCy's parse alone (tok2vec + parser, batches of 32, timed in the same loop) — a lower bound on its
  speed-up over the parser-fed pipeline, which also runs a model after the parse. It writes its record
  and a plot beside it (``.png``): per task, accuracy against sentences/s, the Pareto front marked
  (a point is on the front when no other point of the task is at least as fast and at least as accurate,
  and better in one).

    python -m bench.pareto --train [--sizes d64_l2 …]   # then
    python -m bench.pareto [--threads 2] [--repeats 3]
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.lib.common import format_table, parse, script_arguments, write_record

ROOT = Path("runs/pareto")
TASKS = {"agreement": "configs/main/agreement.yaml", "sentiment": "configs/main/sentiment.yaml"}
GRID = [(64, 2), (64, 3), (64, 4), (128, 2), (128, 4), (256, 2), (256, 4)]  # smallest first
BATCH = 32
# The grid's training recipe, pinned (the main job's when the grid was trained): no pre-training, teacher
# forcing decaying to D̂ over half of training, the task gradient reaching the predictor.
RECIPE = ["training.teacher_forcing_end=0.0", "training.task_grad_to_predictor=true"]
PARSE = "spaCy parse alone"  # tok2vec + parser on the same batches: a parser-fed pipeline is slower still


@dataclass(frozen=True)
class Size:
    """One encoder size of the grid and the settings it implies."""

    d_model: int
    n_layers: int

    @property
    def name(self) -> str:
        return f"d{self.d_model}_l{self.n_layers}"

    def overrides(self) -> list[str]:
        """``--set`` overrides on top of the main job's task config (always one thread)."""
        d, n = self.d_model, self.n_layers
        return [
            "recipe=parser_free",
            "threads=1",
            *RECIPE,
            f"encoder.d_model={d}",
            f"encoder.n_layers={n}",
            f"encoder.d_ff={4 * d}",
            "encoder.n_heads=4",
            f"encoder.predictor_layer={max(1, n // 2)}",
            f"predictor.arc_dim={d}",
        ]


def grid(names: list[str] | None) -> list[Size]:
    """The grid, or the named sizes of it (e.g. ``d64_l2``), in grid order."""
    sizes = [Size(d, n) for d, n in GRID]
    if not names:
        return sizes
    unknown = set(names) - {s.name for s in sizes}
    if unknown:
        sys.exit(
            f"bench.pareto: unknown size(s) {', '.join(sorted(unknown))}; the grid is "
            f"{', '.join(s.name for s in sizes)}"
        )
    return [s for s in sizes if s.name in names]


def train_all(sizes: list[Size], tasks: list[str], root: Path, cache_dir: str | None) -> None:
    """Train and export every (size, task), smallest first, skipping what its stage records say is done."""
    from parserfree.distill.config import load_config
    from parserfree.jobs.stages import export_stage, train_stage

    for size in sizes:
        for task in tasks:
            config = load_config(TASKS[task], size.overrides())
            run_dir = root / task / size.name
            print(f"[pareto] {task} {size.name}", flush=True)
            train_stage(config, run_dir / "parser_free", cache_dir, progress=False)
            export_stage(config, run_dir / "parser_free" / "checkpoints" / "best.ckpt", run_dir / "bundle", full=True)


def trained(root: Path, task: str, size: Size) -> Path | None:
    """The size's finished bundle for ``task``, or None (not trained or exported yet)."""
    bundle = root / task / size.name / "bundle"
    return (
        bundle
        if (bundle / "manifest.json").exists() and (root / task / size.name / "stages" / "bundle.json").exists()
        else None
    )


def pareto_front(points: list[dict], x: str = "sentences_per_s", y: str = "accuracy") -> list[bool]:
    """For each point: True when no other point is at least as good in ``x`` and ``y`` and better in one."""

    def dominated(p: dict) -> bool:
        return any(q[x] >= p[x] and q[y] >= p[y] and (q[x] > p[x] or q[y] > p[y]) for q in points if q is not p)

    return [not dominated(p) for p in points]


def measure(
    sizes: list[Size], tasks: list[str], root: Path, threads: int, n: int | None, repeats: int, cache_dir: str | None
) -> list[dict]:
    """Time every exported size and variant end to end on its task's test texts; one row per point."""
    from parserfree.core.parse import DEFAULT_MODEL
    from parserfree.distill.data.datasets import DataConfig, load_dataset
    from parserfree.distill.teacher import SpacyTeacher
    from parserfree.encoder.text import normalise_text
    from parserfree.export.runtime import ParserFreeModel
    from parserfree.export.timing import batches

    rows = []
    for task in tasks:
        found = [(s, b) for s in sizes if (b := trained(root, task, s)) is not None]
        if not found:
            print(f"[pareto] {task}: nothing trained yet (run with --train)")
            continue
        manifest = json.loads((found[0][1] / "manifest.json").read_text())
        config_dataset = _dataset_of(found[0][1])
        data = load_dataset(DataConfig(dataset=config_dataset, task=manifest["task"], cache_dir=cache_dir))
        texts = sorted((e.text for e in data.splits["test"]), key=len)
        texts = texts[:: max(1, len(texts) // n)][:n] if n else texts  # an even sample over the lengths
        chunks = batches(texts, BATCH)
        models = {}
        for size, bundle in found:
            evaluation = json.loads((bundle / "manifest.json").read_text()).get("evaluation", {}).get("variants", {})
            for variant in ("default", "int8"):
                if variant in evaluation:
                    model = ParserFreeModel.load(bundle, threads=threads, variant=variant)
                    models[size, variant] = (model, evaluation[variant])
                    model.run_outputs(model.tokenize(chunks[0]))  # warm-up (the task graph)
        teacher = SpacyTeacher(manifest["tokenizer"].get("spacy_model", DEFAULT_MODEL))
        calls = {key: (lambda t, m=model: m.run_outputs(m.tokenize(t))) for key, (model, _) in models.items()}
        calls[PARSE] = lambda t: list(teacher.parse(normalise_text(x) for x in t))  # noqa: B023 (called within the iteration)
        best = {key: [float("inf")] * len(chunks) for key in calls}
        for _ in range(repeats):  # batch by batch, every model in turn: a burst of load hits all of them
            for b, chunk in enumerate(chunks):
                for key, call in calls.items():
                    start = time.perf_counter()
                    call(chunk)
                    best[key][b] = min(best[key][b], time.perf_counter() - start)
        best = {key: sum(times) for key, times in best.items()}
        task_rows = [
            {
                "task": task,
                "dataset": config_dataset,
                "size": size.name,
                "d_model": size.d_model,
                "n_layers": size.n_layers,
                "variant": "fp32" if variant == "default" else variant,
                "accuracy": ev["metric"],
                "metric_name": ev["metric_name"],
                "sentences_per_s": len(texts) / best[size, variant],
                "texts": len(texts),
                "vs_spacy_parse": best[PARSE] / best[size, variant],
            }
            for (size, variant), (_, ev) in models.items()
        ]
        for row, on in zip(task_rows, pareto_front(task_rows)):
            row["on_front"] = on
        rows += task_rows
    return rows


def _dataset_of(bundle: Path) -> str:
    """The dataset a bundle was trained on (its config.yaml's data.dataset)."""
    import yaml

    return yaml.safe_load((bundle / "config.yaml").read_text())["data"]["dataset"]


def plot(rows: list[dict], path: Path) -> None:
    """Accuracy against sentences/s per task (log x), the front joined and ringed."""
    import matplotlib.pyplot as plt

    from parserfree.reports.figures import save_figure  # the Agg backend, atomic writes

    tasks = sorted({r["task"] for r in rows})
    fig, axes = plt.subplots(1, len(tasks), figsize=(6 * len(tasks), 4.5), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        pts = [r for r in rows if r["task"] == task]
        for variant, marker in (("fp32", "o"), ("int8", "s")):
            sel = [r for r in pts if r["variant"] == variant]
            ax.scatter([r["sentences_per_s"] for r in sel], [r["accuracy"] for r in sel], marker=marker, label=variant)
            for r in sel:
                ax.annotate(
                    r["size"],
                    (r["sentences_per_s"], r["accuracy"]),
                    fontsize=7,
                    xytext=(3, 3),
                    textcoords="offset points",
                )
        front = sorted((r for r in pts if r["on_front"]), key=lambda r: r["sentences_per_s"])
        ax.plot(
            [r["sentences_per_s"] for r in front], [r["accuracy"] for r in front], "k--", lw=1, label="Pareto front"
        )
        ax.scatter(
            [r["sentences_per_s"] for r in front],
            [r["accuracy"] for r in front],
            s=160,
            facecolors="none",
            edgecolors="k",
        )
        ax.set_xscale("log")
        ax.set_xlabel(f"end-to-end sentences/s (batch {BATCH}, from raw text)")
        ax.set_ylabel(f"test {pts[0]['metric_name']}")
        ax.set_title(f"{task} ({pts[0]['dataset']})")
        ax.legend(fontsize=8)
    save_figure(fig, path, dpi=120)


COLUMNS = [
    ("task", "task", ""),
    ("size", "size", ""),
    ("variant", "variant", ""),
    ("accuracy", "test accuracy", ".1f"),
    ("sentences_per_s", "sentences/s", ",.0f"),
    ("vs_spacy_parse", "× spaCy parse alone", ".1f"),
    ("front", "on front", ""),
]


def arguments():
    parser = script_arguments(__file__, __doc__, threads=2, cache_dir=True)
    parser.add_argument("--train", action="store_true", help="train and export the grid (skips what is done)")
    parser.add_argument("--sizes", nargs="*", help="only these sizes, e.g. d64_l2 d128_l4 (default: the whole grid)")
    parser.add_argument("--tasks", nargs="*", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--root", default=str(ROOT), help="where the runs and bundles go (default runs/pareto)")
    parser.add_argument("--n", type=int, help="test texts timed per task (default: the whole test split)")
    parser.add_argument("--repeats", type=int, default=3, help="passes per batch, fastest kept")
    return parser


def tables(result: dict[str, Any]) -> str:
    """One row per size and variant: test accuracy, sentences/s, the speed over spaCy's parse, the front."""
    table = format_table([{**r, "front": "yes" if r["on_front"] else ""} for r in result["rows"]], COLUMNS)
    missing = f"\n\nNot trained yet: {', '.join(result['missing'])}." if result["missing"] else ""
    return f"{result['threads']} threads, batches of {result['batch']}\n\n{table}{missing}"


def main(argv: list[str] | None = None) -> dict | None:
    args = parse(arguments(), argv)
    sizes, root = grid(args.sizes), Path(args.root)
    if args.train:
        train_all(sizes, args.tasks, root, args.cache_dir)
        return None
    load_before = os.getloadavg()[0]
    rows = measure(sizes, args.tasks, root, args.threads, args.n, args.repeats, args.cache_dir)
    if not rows:
        sys.exit("bench.pareto: no trained sizes; run `python -m bench.pareto --train` first")
    missing = [f"{t} {s.name}" for t in args.tasks for s in sizes if trained(root, t, s) is None]
    from parserfree.export.timing import machine

    result = {
        "machine": machine(),
        "threads": args.threads,
        "batch": BATCH,
        "load_average": [load_before, os.getloadavg()[0]],
        "rows": rows,
        "missing": missing,
    }
    print(tables(result))
    path = write_record(result, args)
    plot(rows, path.with_suffix(".png"))
    print(f"results: {path} (+ .png)")
    return result


if __name__ == "__main__":
    main()
