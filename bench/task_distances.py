"""The task graph's D̂ two ways — pointer jumps (exact) against adjacency powers (clamped) — checked equal, then timed in pairs.

The bias reads D̂ only up to where it saturates (``SyntaxBias.saturation``: ``max_distance``, 10 by
default), so the task graph may compute min(d, K) from K − 2 small T×T products of the undirected head
adjacency (``predictor.tree_ops.clamped_distances_from_heads``) instead of the exact path lengths by
pointer jumping (``distances_from_heads``). Both give the same bias; which is faster is for measurement.

    python -m bench.task_distances SOURCE [--work DIR] [--reuse] [--batches 32 1] [--passes 30] [--threads 2]

SOURCE: a parser-free bundle (the checkpoint its manifest names), a run folder or a .ckpt. The checkpoint
is exported twice into DIR (default ``bench/results/task_distances``; fp32 only), ``--task-distances
pointer_jumps`` and ``adjacency_powers`` (each export holds its graphs to PyTorch within 1e-4 on its
parity set; ``--reuse`` keeps bundles of the same checkpoint from an earlier run). On the benchmark texts
(the first ``--check-texts`` vader-movies test texts) it then checks, in length-sorted batches of 32:

- the predictor's clamped D̂ (PyTorch) equals the exact D̂ clamped at K on every word pair, and the heads
  are the same (the tree does not change; only the distances' nodes do);
- the two task graphs (onnxruntime) give task outputs within 1e-4 and the same predictions.

It stops on any difference. Then, per batch size of ``--batches`` (default 32 and 1), it times the two
task graphs in paired passes as ``bench.compare_graphs`` does (``bench.lib.paired``: the median ratio and
its 95 % interval; ``--passes``, ``--spinning``, ``--threads``, ``--n``; batch 1 runs on one thread unless
``--threads`` is given) and writes the check and the timings as one record. Adjacency powers should become
the export's default only if the interval lies above 1 at both batch sizes on an idle machine.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from parserfree.core.checkpoints import TrainedModel, load_trained
from parserfree.encoder.conventions import PAD_DISTANCE
from parserfree.encoder.files import sha256_file
from parserfree.export.graph_inputs import graph_inputs
from parserfree.export.parity import TOLERANCE
from parserfree.export.runtime import SPINNING, ParserFreeModel
from parserfree.export.session import make_session
from parserfree.export.timing import batches, machine

from bench.lib.common import RESULTS, benchmark_texts, finish, parse, script_arguments
from bench.lib.paired import compare, comparison_table

METHODS = ("pointer_jumps", "adjacency_powers")  # the baseline first
BATCH = 32


def checkpoint_of(source: str) -> Path:
    """A bundle (its manifest's checkpoint), a run folder (checkpoints/best.ckpt) or a .ckpt → the checkpoint."""
    path = Path(source)
    if (path / "manifest.json").is_file():
        return Path(json.loads((path / "manifest.json").read_text(encoding="utf-8"))["checkpoint"]["path"])
    if path.is_dir():
        return path / "checkpoints" / "best.ckpt"
    return path


def exported(checkpoint: Path, work: Path, reuse: bool) -> dict[str, Path]:
    """The checkpoint's bundle per method of ``METHODS`` in ``work`` (exported unless ``reuse`` finds one of
    the same checkpoint there)."""
    from parserfree.jobs.exporting import export_checkpoint

    digest = sha256_file(checkpoint)
    out = {}
    for method in METHODS:
        folder = work / method
        manifest = folder / "manifest.json"
        same = manifest.is_file() and json.loads(manifest.read_text(encoding="utf-8"))["checkpoint"]["sha256"] == digest
        if not (reuse and same):
            print(f"exporting {checkpoint} with task distances {method} → {folder}", file=sys.stderr)
            export_checkpoint(checkpoint, folder, threads=1, overwrite=True, task_distances=method)
        out[method] = folder
    return out


def clamped_distances_check(trained: TrainedModel, feeds: list[dict[str, np.ndarray]]) -> dict:
    """The predictor in PyTorch with and without ``distance_cap`` = the bias's saturation K on every batch:
    pairs whose clamped D̂ differs from the exact D̂ clamped at K, and words whose head differs."""
    model = trained.model.eval()
    predictor = model.predictor
    cap = model.encoder.bias.saturation()
    pairs = differing_pairs = differing_heads = 0
    for f in feeds:
        args = tuple(torch.from_numpy(f[k]) for k in ("word_ids", "feature_ids", "mask"))
        with torch.no_grad():
            exact = model.predict(*args)
            predictor.distance_cap = cap
            try:
                clamped = model.predict(*args)
            finally:
                predictor.distance_cap = None
        mask = args[2]
        real = mask[:, :, None] & mask[:, None, :]
        want = torch.where(real, exact.distances.clamp(max=float(cap)), float(PAD_DISTANCE))
        differing_pairs += int((want != clamped.distances).sum())
        differing_heads += int(((exact.heads != clamped.heads) & mask).sum())
        pairs += int(real.sum())
    return {"cap": cap, "pairs": pairs, "differing_pairs": differing_pairs, "differing_heads": differing_heads}


def task_graph_check(bundles: dict[str, Path], feeds: list[dict[str, np.ndarray]]) -> dict:
    """Both task graphs on every batch: max |difference| of the task outputs and the share of equal predictions."""
    sessions = {m: make_session(bundles[m] / "model.onnx", threads=1) for m in METHODS}
    diff, same, n = 0.0, 0, 0
    for f in feeds:
        base, other = (sessions[m].run(None, f)[0] for m in METHODS)
        diff = max(diff, float(np.abs(base - other).max()))
        if base.ndim == 2:
            same += int((base.argmax(-1) == other.argmax(-1)).sum())
        n += len(base)
    return {"task_output_max_diff": diff, "same_predictions": same / n if n else None}


def arguments():
    parser = script_arguments(__file__, __doc__, threads=2)
    parser.add_argument("source", help="a parser-free bundle, run folder or .ckpt")
    parser.add_argument("--work", default=str(RESULTS / "task_distances"), help="where the two bundles are written")
    parser.add_argument("--reuse", action="store_true", help="keep bundles of the same checkpoint found in --work")
    parser.add_argument("--batches", type=int, nargs="+", default=[BATCH, 1], help="batch sizes to time")
    parser.add_argument("--check-texts", type=int, default=1000, help="benchmark texts of the equality check")
    parser.add_argument("--passes", type=int, default=30, help="paired passes per batch size")
    parser.add_argument("--n", type=int, default=1000, help="texts timed (batch 1: every other one of them)")
    parser.add_argument("--spinning", action="store_true", default=SPINNING)
    return parser


def tables(result: dict[str, Any]) -> str:
    """The equality check, then the paired timings of the two task graphs per batch size."""
    predictor, graphs = result["check"]["predictor"], result["check"]["task_graphs"]
    lines = [
        f"Checked on {result['check']['texts']:,} texts: D̂ clamped at {predictor['cap']} differs from the exact D̂ "
        f"clamped on {predictor['differing_pairs']:,} of {predictor['pairs']:,} pairs, the heads on "
        f"{predictor['differing_heads']:,} words; the task outputs within {graphs['task_output_max_diff']:.1e}."
    ]
    for timing in result["timings"].values():
        lines += ["", comparison_table(timing)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    threads_given = any(a == "--threads" or a.startswith("--threads=") for a in args.argv)
    checkpoint = checkpoint_of(args.source)
    bundles = exported(checkpoint, Path(args.work), args.reuse)

    model = ParserFreeModel.load(bundles[METHODS[0]], threads=1)
    words = sorted((w for w in model.tokenize(benchmark_texts("vader-movies", args.check_texts, None)) if w), key=len)
    feeds = [graph_inputs(model.vocab, group, model.max_len) for group in batches(words, BATCH)]
    check = {
        "checkpoint": str(checkpoint),
        "texts": len(words),
        "predictor": clamped_distances_check(load_trained(checkpoint), feeds),
        "task_graphs": task_graph_check(bundles, feeds),
    }
    print(json.dumps({k: check[k] for k in ("predictor", "task_graphs")}, indent=1))
    predictor, graphs = check["predictor"], check["task_graphs"]
    if predictor["differing_pairs"] or predictor["differing_heads"]:
        raise SystemExit("adjacency powers change D̂ or the heads on the benchmark texts: not the same bias; not timed")
    if not graphs["task_output_max_diff"] <= TOLERANCE or graphs["same_predictions"] not in (None, 1.0):
        raise SystemExit(f"the two task graphs differ beyond {TOLERANCE:g} on the benchmark texts; not timed")

    timings = {}
    specs = [str(bundles[m]) for m in METHODS]
    for batch in args.batches:
        threads = args.threads if batch > 1 or threads_given else 1
        timings[batch] = compare(specs, batch, dict.fromkeys(specs, threads), args.passes, args.n, args.spinning)
    result = {"machine": machine(), "check": check, "timings": timings}
    return finish(result, args, tables)


if __name__ == "__main__":
    main()
