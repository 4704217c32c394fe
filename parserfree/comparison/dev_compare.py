"""Two sets of task runs compared on dev, item by item over seeds: ``parserfree dev-compare``.

Settings are chosen on dev, never on test. Each run's best checkpoint is evaluated again on its dev split
with its recipe's inference source (the result must equal the dev metric in its ``metrics.json``, so a
stale or foreign checkpoint is refused); run a's correctness on every item is paired with run b's, seed s
with seed s, and compared by ``parserfree.comparison.paired.paired_test``: the bootstrap interval over items (minimal
pairs kept together) and seeds, the sign-flip test over items and, with seeds, the t-test over seeds, and
the smallest difference the items and seeds could detect. Runs are found by templates with ``{task}``,
``{recipe}`` and ``{seed}``; a run folder holds ``config.yaml``, ``metrics.json`` and
``checkpoints/best.ckpt`` (what ``parserfree train --out`` writes).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..encoder.errors import UsageError

RUN_FILES = ("config.yaml", "metrics.json", "checkpoints/best.ckpt")


def dev_correctness(run: Path) -> tuple[np.ndarray, list]:
    """(correct N bool, the N dev examples) of one run's best checkpoint on its dev split, in the dataset's
    order."""
    import torch

    from ..core.checkpoints import load_trained
    from ..core.task_metrics import predictions
    from ..distill.config import load_config
    from ..distill.data_module import SyntaxDataModule
    from ..distill.evaluate import evaluate_with_outputs

    missing = [f for f in RUN_FILES if not (run / f).exists()]
    if missing:
        raise UsageError(f"{run}: not a finished training run (no {', '.join(missing)})")
    torch.set_num_threads(1)
    trained = load_trained(run / "checkpoints" / "best.ckpt")
    config = load_config(run / "config.yaml", record=True)
    if trained.task == "regression":
        raise UsageError(f"{run}: a regression run has no per-item correctness to pair")
    data = SyntaxDataModule(config, None, trained.vocab, False, trained.dep_labels)
    data.setup()
    n_classes = max(2, len(data.label_names))
    _, outputs = evaluate_with_outputs(
        trained.model, data.loader("dev"), trained.task, n_classes, config.recipe_row.eval_source
    )
    examples = data.examples("dev")
    correct = predictions(trained.task, outputs) == np.array([e.label for e in examples])
    saved = json.loads((run / "metrics.json").read_text())["dev"]["metric"]
    if abs(100 * correct.mean() - saved) > 1e-6:
        raise UsageError(f"{run}: dev accuracy {100 * correct.mean():.4f} is not its metrics.json's {saved:.4f}")
    return correct, examples


def compare_dev(
    templates: tuple[str, str], tasks: Sequence[str], recipes: Sequence[str], seeds: int, progress: bool = True
) -> dict:
    """{"task/recipe": {"a": [dev % by seed], "b": [...], "paired": PairedResult as a dict}} of a − b."""
    from .paired import Resampler, clusters_of, paired_test

    out: dict = {}
    for task in tasks:
        for recipe in recipes:
            rows, items = [], None
            for template in templates:
                correct = []
                for seed in range(seeds):
                    run = Path(template.format(task=task, recipe=recipe, seed=seed))
                    if progress:
                        print(f"dev-compare: {run}", flush=True)
                    c, examples = dev_correctness(run)
                    these = [(e.text, (e.columns or {}).get("pair_id")) for e in examples]
                    if items is not None and these != items:
                        raise UsageError(f"{run}: its dev items are not those of the runs before it")
                    items = these
                    correct.append(c)
                rows.append(np.array(correct))
            clusters = clusters_of([pair for _, pair in items], len(items))
            result = paired_test(rows[0], rows[1], clusters, Resampler(clusters, seeds))
            out[f"{task}/{recipe}"] = {
                "a": [100 * float(r.mean()) for r in rows[0]],
                "b": [100 * float(r.mean()) for r in rows[1]],
                "paired": dataclasses.asdict(result),
            }
    return out


def dev_markdown(result: dict, names: tuple[str, str]) -> str:
    """The comparison as a table: dev accuracy by seed of each side, a − b with its interval, p and power."""
    lines = [
        f"| task / recipe | {names[0]} (dev %, by seed) | {names[1]} (dev %, by seed) | a − b [95 % CI] | p | "
        "detectable |",
        "|---|---|---|---|---:|---:|",
    ]
    for key, row in result.items():
        paired = row["paired"]
        lo, hi = paired["ci95"]
        detectable = "–" if paired["detectable"] is None else f"{paired['detectable']:.1f}"
        lines.append(
            f"| {key} ({paired['n_items']:,} items) | {' / '.join(f'{v:.2f}' for v in row['a'])} | "
            f"{' / '.join(f'{v:.2f}' for v in row['b'])} | {paired['difference']:+.2f} [{lo:+.2f}, {hi:+.2f}] | "
            f"{paired['p']:.3g} | {detectable} |"
        )
    return "\n".join(lines) + "\n"


def cmd_dev_compare(args: argparse.Namespace) -> int:
    """Compare two sets of runs on dev; print the table, write JSON and markdown to --out when given."""
    from ..encoder.files import write_json, write_text_atomic

    templates = (args.a, args.b)
    result = compare_dev(templates, args.tasks.split(","), args.recipes.split(","), args.seeds, not args.quiet)
    markdown = dev_markdown(result, templates)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        write_json(out / "dev_compare.json", {"a": args.a, "b": args.b, "seeds": args.seeds, "rows": result})
        write_text_atomic(out / "dev_compare.md", markdown)
    print(markdown, end="")
    return 0 if all(math.isfinite(r["paired"]["difference"]) for r in result.values()) else 1


def add_dev_compare_command(subparsers) -> None:
    """Register ``dev-compare`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "dev-compare",
        help="two sets of task runs on dev, paired by item and seed (the test that chooses a setting)",
    )
    p.add_argument(
        "a", help="run folders a, a template with {task}, {recipe}, {seed}: 'runs/x/{task}/{recipe}-s{seed}'"
    )
    p.add_argument("b", help="run folders b, the same template form (a − b is reported)")
    p.add_argument("--tasks", default="agreement,sentiment", help="the {task} values, comma-separated")
    p.add_argument("--recipes", default="parser_free", help="the {recipe} values, comma-separated")
    p.add_argument("--seeds", type=int, default=3, help="seeds 0..N−1")
    p.add_argument("--out", help="folder for dev_compare.json and dev_compare.md")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_dev_compare)
