"""Check: ``parserfree predict`` with an exported bundle reproduces the PyTorch metric of its run.

Writes the test (or dev) texts of the run's dataset to a file, runs the ``parserfree predict`` command on
it (the bundled tokenizer and ONNX graph, no parser), scores the JSON lines against the gold labels and
compares with the PyTorch score of the best checkpoint in the run's ``metrics.json``.

    python -m bench.check_predict --run runs/main/sentiment/parser_free --bundle runs/main/sentiment/bundle
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from parserfree.core.task_metrics import task_metrics
from parserfree.distill.config import load_config
from parserfree.distill.data.datasets import load_dataset

from bench.lib.common import parse, script_arguments, write_record


def arguments():
    parser = script_arguments(__file__, __doc__)
    parser.add_argument(
        "--run", default="runs/main/sentiment/parser_free", help="run folder (config.yaml, metrics.json)"
    )
    parser.add_argument("--bundle", default="runs/main/sentiment/bundle")
    parser.add_argument("--split", default="test", choices=["dev", "test"])
    parser.add_argument("--tolerance", type=float, default=0.1, help="allowed |ONNX − PyTorch| in metric points")
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    run = Path(args.run)
    config = load_config(run / "config.yaml")
    dataset = load_dataset(config.data)
    examples = dataset.splits[args.split]
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "texts.txt", Path(tmp) / "predictions.jsonl"
        src.write_text("".join(" ".join(e.text.split()) + "\n" for e in examples), encoding="utf-8")
        cmd = [
            sys.executable,
            "-m",
            "parserfree.commands.cli",
            "predict",
            "--model",
            args.bundle,
            "--input",
            str(src),
            "--output",
            str(dst),
        ]
        subprocess.run(cmd, check=True)
        rows = [json.loads(line) for line in dst.read_text(encoding="utf-8").splitlines()]
    if len(rows) != len(examples):
        raise SystemExit(f"predict returned {len(rows)} lines for {len(examples)} texts")
    gold = np.array([e.label for e in examples])
    if dataset.task == "regression":
        pred = np.array([r["score"] for r in rows])
    else:
        pred = np.array([dataset.label_names.index(r["label"]) for r in rows])
    onnx = task_metrics(dataset.task, pred, gold, max(2, len(dataset.label_names)))
    torch_metric = json.loads((run / "metrics.json").read_text())[args.split]["metric"]
    delta = abs(onnx["metric"] - torch_metric)
    result = {
        "split": args.split,
        "n": len(rows),
        "metric_name": onnx["metric_name"],
        "parserfree_predict": onnx["metric"],
        "pytorch": torch_metric,
        "delta": delta,
        "within_tolerance": delta <= args.tolerance,
    }
    print(json.dumps(result, indent=1))
    print(f"results: {write_record(result, args)}")
    return result


if __name__ == "__main__":
    main()
