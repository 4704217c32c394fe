"""Timing named pipelines on the same texts: every row at every batch size, the fastest of several passes.

A row is (runtime, pipeline): a pipeline maps a batch of raw texts to its outputs
(``parserfree.comparison.pipelines``). Passes interleave the rows, so a burst of load elsewhere does not
hit one row only; each row keeps its fastest pass. Shared by ``bench.inference`` and ``bench.sizes``.
"""

from __future__ import annotations

from collections.abc import Callable

from parserfree.export.timing import batches, time_calls


def measure(
    rows: dict[str, tuple[str, Callable]], sets: dict[int, list[str]], words: dict[str, int], repeats: int
) -> list[dict]:
    """Time every row on ``sets`` (batch size → texts); each row keeps the fastest of ``repeats`` passes
    (passes interleave the rows, so a burst of load elsewhere does not hit one row only)."""
    best: dict[tuple[str, int], dict] = {}
    for _ in range(repeats):
        for size, texts in sets.items():
            for name, (_, run) in rows.items():
                got = time_calls(run, batches(texts, size))
                if (name, size) not in best or got["seconds"] < best[name, size]["seconds"]:
                    best[name, size] = got
    out = []
    for size, texts in sets.items():
        n_words = sum(words[t] for t in texts)
        for name, (runtime, _) in rows.items():
            got = best[name, size]
            out.append(
                {
                    "model": name,
                    "runtime": runtime,
                    "batch": size,
                    "texts": len(texts),
                    "sentences_per_s": len(texts) / got["seconds"],
                    "words_per_s": n_words / got["seconds"],
                    "latency_ms_p50": got["p50_ms"],
                    "latency_ms_p95": got["p95_ms"],
                }
            )
    return out
