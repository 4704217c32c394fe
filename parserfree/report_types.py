"""The shape of a comparison report: typed rows, scores, contrasts and domains, and their JSON form.

``parserfree compare`` builds a ``Report``; ``report.json`` is its ``to_dict()`` (plain JSON, readable
without parserfree) and ``Report.from_dict`` reads one back, so report.md, the main job's index and any
page generated from committed reports all read the same fields. Rows are named by recipe (a model) or by
baseline name; a model row's ``role`` is its part in the comparison (``distill.recipes.ComparisonRoles``:
parser_free, reference, baseline, extra). Metric results are kept as the metric code returns them
(``Score.per_seed``: ``task_metrics`` of each seed; ``DomainResult.distance``: ``compare.distance_quality``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Any

from parserfree.distill.task_metrics import TaskScores
from parserfree.encoder.errors import UsageError
from parserfree.paired import PairedResult

REPORT_FORMAT = 2  # 1: the untyped report.json of parserfree ≤ 0.2 (no baselines, no paired verdicts)
MODEL, BASELINE = "model", "baseline"  # kinds of row
LIKE_FOR_LIKE = "like_for_like"  # kind of contrast between two model rows (else BASELINE: a model vs a baseline)


@dataclass
class Speed:
    """End-to-end speed of a model row on the headline domain (seed 0; parsing or tokenising included)."""

    sentences_per_s: float
    words_per_s: float
    latency_ms_p50: float
    latency_ms_p95: float


@dataclass
class ModelRow:
    """A row of the report: a trained model (one per seed) or a shortcut baseline."""

    name: str
    kind: str  # MODEL | BASELINE
    role: str | None  # a model's part in the comparison (ComparisonRoles field), None for a baseline
    recipe: str | None
    runtime: str  # onnxruntime | pytorch | numpy
    seeds: int
    description: str = ""
    speed: Speed | None = None


@dataclass
class Margin:
    """How far a model row is from the best shortcut baseline of a domain (points, the model minus it)."""

    baseline: str
    difference: float
    ci95: list[float]
    p_holm: float
    verdict: str


@dataclass
class Score:
    """A row's task score on one domain: the metric (mean over seeds) and its sd, every seed's metrics as
    ``task_metrics`` returns them, minimal-pair accuracy (both versions of a pair right) where items come in
    pairs, and the margin over the best baseline (model rows of a classification domain)."""

    metric_name: str
    metric: float
    metric_sd: float | None
    per_seed: list[TaskScores]
    pair_accuracy: float | None = None
    n_pairs: int = 0
    over_best_baseline: Margin | None = None


@dataclass
class Contrast(PairedResult):
    """The paired verdict of row a against row b on one slice of one domain's items."""

    domain: str
    slice: str  # "all", or "<breakdown>:<bucket>" (e.g. "attractors:1", "subject_number×attractors:pl/2+")
    a: str
    b: str
    kind: str  # LIKE_FOR_LIKE | BASELINE
    differs_in: str
    p_holm: float  # Holm-corrected over the contrasts of this domain and slice
    verdict: str


@dataclass
class DomainResult:
    """One compared dataset: every row's score, the parser-free model's agreement with its reference, D̂
    against the parser's trees (seed 0; every seed's too when there are several) and the breakdowns."""

    dataset: str
    task: str
    n_examples: int
    n_pairs: int
    scores: dict[str, Score]
    agreement: float | None
    distance: dict | None
    breakdown: dict | None = None
    distance_by_seed: list[dict] | None = None
    parse_leak: dict | None = None  # how often the parser's trees of a minimal pair's versions differ (parse_leak.py)


@dataclass
class StatisticsNote:
    """How the report's verdicts were computed (docs/statistics.md)."""

    alpha: float
    power: float
    resamples: int
    resampling_unit: str  # "minimal pair" or "item"
    test: str
    correction: str = "Holm, over the contrasts of one domain and slice"
    power_method: str = ""


@dataclass
class Report:
    """A comparison report; ``dataset`` names the headline domain (speed, figures, the markdown's top)."""

    dataset: str
    split: str
    task: str
    seeds: int
    threads: int
    batch_size: int
    machine: str
    roles: dict[str, str | None]
    models: dict[str, ModelRow]
    domains: dict[str, DomainResult]
    contrasts: list[Contrast]
    statistics: StatisticsNote
    speedup_end_to_end: float | None
    versions: dict
    parser_free_with_parser_distances: Score | None = None
    variants: dict | None = None
    format: int = REPORT_FORMAT

    @property
    def headline(self) -> DomainResult:
        """The headline domain's result."""
        return self.domains[self.dataset]

    def to_dict(self) -> dict:
        """The JSON form (report.json)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Report:
        """A report read back from its JSON form; a report of another format is a UsageError saying so."""
        if data.get("format") != REPORT_FORMAT:
            raise UsageError(
                f"report format {data.get('format', 1)} is not {REPORT_FORMAT}: compare again to rebuild it"
            )
        return _build(cls, data)


def as_report(report: Report | dict) -> Report:
    """A Report, from itself or from its JSON form."""
    return report if isinstance(report, Report) else Report.from_dict(report)


def _build(hint: Any, value: Any) -> Any:
    """``value`` (JSON) as the type ``hint`` says: dataclasses, lists and dicts of them, optionals."""
    origin = typing.get_origin(hint)
    if value is None:
        return None
    if origin in (typing.Union, types.UnionType):
        options = [o for o in typing.get_args(hint) if o is not type(None)]
        return _build(options[0], value) if len(options) == 1 else value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):  # a hint is a class, never an instance
        hints = typing.get_type_hints(hint)
        return hint(
            **{f.name: _build(hints[f.name], value[f.name]) for f in dataclasses.fields(hint) if f.name in value}
        )
    if origin is list:
        (inner,) = typing.get_args(hint)
        return [_build(inner, v) for v in value]
    if origin is dict:
        _, inner = typing.get_args(hint)
        return {k: _build(inner, v) for k, v in value.items()}
    return value


__all__ = [
    "BASELINE",
    "LIKE_FOR_LIKE",
    "MODEL",
    "REPORT_FORMAT",
    "Contrast",
    "DomainResult",
    "Margin",
    "ModelRow",
    "Report",
    "Score",
    "Speed",
    "StatisticsNote",
    "as_report",
]
