"""Benchmark: vectorised all-pairs tree distances vs the textbook per-pair ancestor walk.

Both sides compute the full n×n matrix of one random tree; the table shows the time per tree and the
speed ratio at n = 10, 40, 100 (the project's goal: ≥50× at n = 40). Writes JSON next to the table.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from distill.trees import brute_force_distances, tree_distances


def random_tree(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random tree with the shape statistics of a parse: word i attaches to a nearby earlier word."""
    order = rng.permutation(n)
    heads = np.empty(n, dtype=np.int64)
    heads[order[0]] = order[0]
    for k in range(1, n):
        heads[order[k]] = order[rng.integers(max(0, k - 5), k)]
    return heads


def seconds_per_call(fn, trees: list[np.ndarray], min_time: float) -> float:
    """Mean seconds per tree, repeating over the trees until ``min_time`` has passed."""
    calls, start = 0, time.perf_counter()
    while True:
        for t in trees:
            fn(t)
        calls += len(trees)
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / calls


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timing (≈ 10 s in all)")
    parser.add_argument("--out", default="bench/results/trees.json")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    min_time = 0.5 if args.quick else 3.0
    rows = []
    for n in (10, 40, 100):
        trees = [random_tree(n, rng) for _ in range(20)]
        assert all(np.array_equal(tree_distances(t), brute_force_distances(t)) for t in trees[:3])
        vec = seconds_per_call(tree_distances, trees, min_time)
        ref = seconds_per_call(brute_force_distances, trees, min_time)
        rows.append({"n": n, "vectorised_ms": vec * 1e3, "python_walk_ms": ref * 1e3, "ratio": ref / vec})
    print(f"{'n':>4} {'vectorised ms':>14} {'python walk ms':>15} {'ratio':>8}")
    for r in rows:
        print(f"{r['n']:>4} {r['vectorised_ms']:>14.3f} {r['python_walk_ms']:>15.3f} {r['ratio']:>7.0f}×")
    result = {"bench": "trees", "machine": platform.processor() or platform.machine(), "python": platform.python_version(), "rows": rows}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
