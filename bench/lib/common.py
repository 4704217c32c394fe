"""Bench-only helpers: the results files and the Markdown tables of the scripts under bench/.

The measuring itself (``time_calls``, ``seconds_per_call``, ``batches``, ``machine``, ``peak_rss_mb``) is
``parserfree.export.timing``, shared with ``parserfree compare``, so bench numbers and the comparison
report mean the same thing. Results go to ``bench/results/<name>.json`` (with ``machine()``) and are
printed with ``format_table``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parserfree.encoder.files import write_json

RESULTS = Path(__file__).resolve().parent / "results"


def write_result(name: str, result: dict[str, Any], path: str | Path | None = None) -> Path:
    """Write ``result`` as JSON to ``path`` (default bench/results/<name>.json), atomically."""
    out = Path(path) if path else RESULTS / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json(out, result)
    return out


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str, str]]) -> str:
    """A Markdown table: ``columns`` are (key, header, format spec); a missing or None value prints "–"."""

    def cell(row: dict, key: str, spec: str) -> str:
        value = row.get(key)
        return "–" if value is None else format(value, spec)

    lines = [
        "| " + " | ".join(header for _, header, _ in columns) + " |",
        "|" + "|".join("---" if spec == "" else "---:" for _, _, spec in columns) + "|",
    ]
    lines += ["| " + " | ".join(cell(row, key, spec) for key, _, spec in columns) + " |" for row in rows]
    return "\n".join(lines)
