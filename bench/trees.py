"""Benchmark: vectorised all-pairs tree distances vs the textbook per-pair ancestor walk.

Both sides compute the full n×n matrix of one random tree; the table shows the time per tree and the
speed ratio at n = 10, 40, 100 (the project's goal: ≥50× at n = 40). Prints a Markdown table and writes
bench/results/trees.json. ``--quick`` takes about 10 s.
"""

from __future__ import annotations

import argparse

import numpy as np

from parserfree.distill.trees import brute_force_distances, tree_distances
from parserfree.export.timing import describe_machine, machine, seconds_per_call

from timing import format_table, write_result


def random_tree(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random tree with the shape statistics of a parse: word i attaches to a nearby earlier word."""
    order = rng.permutation(n)
    heads = np.empty(n, dtype=np.int64)
    heads[order[0]] = order[0]
    for k in range(1, n):
        heads[order[k]] = order[rng.integers(max(0, k - 5), k)]
    return heads


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timing (≈ 10 s in all)")
    parser.add_argument("--out", help="JSON file (default bench/results/trees.json)")
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
    result = {"bench": "trees", "machine": machine(), "rows": rows}
    print(describe_machine(result["machine"]))
    print(
        format_table(
            rows,
            [
                ("n", "n", "d"),
                ("vectorised_ms", "vectorised ms", ".3f"),
                ("python_walk_ms", "per-pair walk ms", ".3f"),
                ("ratio", "ratio ×", ".0f"),
            ],
        )
    )
    print(f"results: {write_result('trees', result, args.out)}")
    return result


if __name__ == "__main__":
    main()
