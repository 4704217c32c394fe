"""The size table: what each model size costs and scores, from the main jobs' records (``parserfree run``,
``parserfree run --size base``), each recorded as ``<prefix>_job`` (its index) and ``<prefix>_<task>`` (its
tasks' reports, over every seed).

One row per size and task: the wall time of seed 0 of the whole job on its machine (its record's note
says which: fetching and parsing the data included) and of the task's own stages (training, export,
report), the report's seeds, the test accuracy of the parser-free row, its parser-fed twin and the unbiased
row (mean ± sd over seeds), the best shortcut baseline and parser-free's end-to-end speed-up over its twin.
Shown on the front page and in docs/usage.md ("Sizes").
"""

from __future__ import annotations

from collections.abc import Sequence

from .report import Report
from .tables import score_cell

ROWS = ("parser_free", "parser_fed_twin", "no_syntax")


def _cell(report: Report, row: str) -> str:
    score = report.headline.scores.get(row)
    return "–" if score is None else score_cell(score)


def size_rows(size: str, job: dict, reports: dict[str, Report]) -> list[str]:
    """The table lines of one size: a line per task of its job (index.json) that has a report."""
    minutes = job["seconds"] / 60
    stages = job.get("stage_seconds", {})
    lines = []
    for task, report in reports.items():
        own = sum(t for stage, t in stages.items() if stage.split("/")[0] == task) / 60
        scores = report.headline.scores
        margins = (s.over_best_baseline for s in scores.values() if s.over_best_baseline)
        best = next((m.baseline for m in margins), None)  # the best baseline, as the report's scoring chose it
        speedup = report.speedup_end_to_end
        lines.append(
            f"| {size} | {task} ({report.dataset}) | {minutes:.1f} | {own:.1f} | {report.seeds} | "
            + " | ".join(_cell(report, r) for r in ROWS)
            + f" | {f'{best} {scores[best].metric:.2f}' if best else '–'} | {f'{speedup:.1f}×' if speedup else '–'} |"
        )
    return lines


def sizes_markdown(sizes: Sequence[tuple[str, dict, dict[str, Report]]]) -> str:
    """The size table of (size, job index, task → report), smallest first."""
    header = [
        "| size | task | job min (seed 0) | task's stages min | seeds | parser_free % | parser_fed_twin % | "
        "no_syntax % | best baseline % | parser-free ÷ parser-fed end to end |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    return "\n".join(header + [line for size, job, reports in sizes for line in size_rows(size, job, reports)])
