"""Benchmark: vectorised all-pairs tree distances vs the textbook per-pair ancestor walk.

Both sides compute the full n×n matrix of one random tree; the table shows the time per tree and the
speed ratio at n = 10, 40, 100 (the project's goal: ≥50× at n = 40).

    python -m bench.trees [--quick]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parserfree.core.trees import brute_force_distances, tree_distances
from parserfree.export.timing import machine, seconds_per_call

from bench.lib.common import finish, format_table, parse, script_arguments
from bench.lib.random_trees import random_tree


def arguments():
    return script_arguments(__file__, __doc__, quick="shorter timing")


def tables(result: dict[str, Any]) -> str:
    return format_table(
        result["rows"],
        [
            ("n", "n", "d"),
            ("vectorised_ms", "vectorised ms", ".3f"),
            ("python_walk_ms", "per-pair walk ms", ".3f"),
            ("ratio", "ratio ×", ".0f"),
        ],
    )


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    rng = np.random.default_rng(0)
    min_time = 0.5 if args.quick else 3.0
    rows = []
    for n in (10, 40, 100):
        trees = [random_tree(n, rng) for _ in range(20)]
        assert all(np.array_equal(tree_distances(t), brute_force_distances(t)) for t in trees[:3])
        vec = seconds_per_call(tree_distances, trees, min_time)
        ref = seconds_per_call(brute_force_distances, trees, min_time)
        rows.append({"n": n, "vectorised_ms": vec * 1e3, "python_walk_ms": ref * 1e3, "ratio": ref / vec})
    result = {"machine": machine(), "rows": rows}
    return finish(result, args, tables)


if __name__ == "__main__":
    main()
