"""The shape of a comparison report: typed rows, scores, contrasts and domains, and their JSON form.

``parserfree compare`` builds a ``Report``; ``report.json`` is its ``to_dict()`` (plain JSON, readable
without parserfree) and ``Report.from_dict`` reads one back, so report.md, the main job's index and any
page generated from committed reports all read the same fields. Rows are named by recipe (a model) or by
baseline name; a model row's ``role`` is its part in the comparison (``core.recipes.ComparisonRoles``:
parser_free, reference, unbiased, extra; "baseline" means a shortcut baseline). Every class is built with keywords. The parts below a domain —
D̂ and tree quality, breakdown buckets, the parse leak, the bundle's variants — are in
``parserfree.reports.parts``, with the JSON reading and writing; task metrics stay as ``task_metrics``
returns them (``Score.per_seed``). A numeric field is rendered in report.md or marked ``json_only``
(``TASK_SCORES_JSON_ONLY`` for the keys of ``per_seed``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.task_metrics import TaskScores
from ..encoder.errors import UsageError
from .parts import (
    DistanceQuality,
    PairedResult,
    ParseLeak,
    RowBreakdown,
    TreeGap,
    Variants,
    from_json,
    json_only,
    to_json,
)

REPORT_FORMAT = 2  # 1: the untyped report.json of parserfree ≤ 0.2 (no baselines, no paired verdicts)
MODEL, BASELINE = "model", "baseline"  # kinds of row
LIKE_FOR_LIKE = "like_for_like"  # kind of contrast between two model rows (else BASELINE: a model vs a baseline)


@dataclass(kw_only=True)
class Speed:
    """End-to-end speed of a model row on the headline domain (seed 0; parsing or tokenising included)."""

    sentences_per_s: float
    words_per_s: float = json_only("the same throughput counted in words")
    latency_ms_p50: float
    latency_ms_p95: float


@dataclass(kw_only=True)
class ModelRow:
    """A row of the report: a trained model (one per seed) or a shortcut baseline."""

    name: str
    kind: str  # MODEL | BASELINE
    role: str | None  # a model's part in the comparison (ComparisonRoles field), None for a baseline
    recipe: str | None
    runtime: str  # onnxruntime | pytorch | numpy
    seeds: int = json_only("the report's seeds (rendered) for a model row, 1 for a baseline")
    description: str = ""
    speed: Speed | None = None


@dataclass(kw_only=True)
class Margin:
    """How far a model row is from the best shortcut baseline of a domain (points, the model minus it)."""

    baseline: str
    difference: float
    ci95: list[float]
    p_holm: float = json_only("the p of the same contrast, rendered in the verdicts table")
    verdict: str


# The keys of Score.per_seed (``task_metrics``) not rendered; the others are, as the mean ± sd over seeds.
TASK_SCORES_JSON_ONLY = {
    "metric": "one seed's; Score.metric is the mean over seeds",
    "accuracy": "one seed's metric under its name (accuracy is the metric of classification)",
    "pearson": "one seed's metric under its name (Pearson r is the metric of regression)",
}


@dataclass(kw_only=True)
class Score:
    """A row's task score on one domain: the metric (mean over seeds) and its sd, every seed's metrics as
    ``task_metrics`` returns them, minimal-pair accuracy (both versions of a pair right) where items come in
    pairs, and the margin over the best baseline (model rows of a classification domain)."""

    metric_name: str
    metric: float
    metric_sd: float | None
    per_seed: list[TaskScores]
    pair_accuracy: float | None = None
    n_pairs: int = json_only("the domain's minimal pairs (rendered with the domain)", default=0)
    over_best_baseline: Margin | None = None


@dataclass(kw_only=True)
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


@dataclass(kw_only=True)
class DomainResult:
    """One compared dataset: every row's score, the parser-free model's agreement with its reference, D̂
    against the parser's trees (seed 0; every seed's too when there are several) and the breakdowns."""

    dataset: str
    task: str
    n_examples: int
    n_pairs: int
    scores: dict[str, Score]
    agreement: float | None
    distance: DistanceQuality | None
    breakdown: dict[str, RowBreakdown] | None = None  # row → group → bucket → score
    distance_by_seed: list[DistanceQuality] | None = None
    parse_leak: ParseLeak | None = None  # how often the parser's trees of a minimal pair's versions differ
    tree_gap: TreeGap | None = None  # parser_free − its reference, split by whether its tree is the parser's


@dataclass(kw_only=True)
class StatisticsNote:
    """How the report's verdicts were computed (docs/statistics.md)."""

    alpha: float
    power: float
    resamples: int
    resampling_unit: str  # "minimal pair" or "item"
    test: str
    correction: str = "Holm, over the contrasts of one domain and slice"
    power_method: str = ""


@dataclass(kw_only=True)
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
    variants: Variants | None = None
    format: int = json_only("the report.json format, checked on reading", default=REPORT_FORMAT)

    @property
    def headline(self) -> DomainResult:
        """The headline domain's result."""
        return self.domains[self.dataset]

    def to_dict(self) -> dict:
        """The JSON form (report.json)."""
        return to_json(self)

    @classmethod
    def from_dict(cls, data: dict) -> Report:
        """A report read back from its JSON form; a report of another format is a UsageError saying so."""
        if data.get("format") != REPORT_FORMAT:
            raise UsageError(
                f"report format {data.get('format', 1)} is not {REPORT_FORMAT}: compare again to rebuild it"
            )
        return from_json(cls, data)


def as_report(report: Report | dict) -> Report:
    """A Report, from itself or from its JSON form."""
    return report if isinstance(report, Report) else Report.from_dict(report)


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
    "TASK_SCORES_JSON_ONLY",
    "as_report",
]
