"""The typed parts of a comparison report below its rows, and the JSON form every report type shares.

The parts: D̂ and the graph's trees against the parser's (``DistanceQuality``, its ``RelationRow`` per
sentence length and ``TreeQuality``), a breakdown bucket (``BucketScore``), the parse leak (``ParseLeak``),
``parser_free``'s gap to its reference by whether its tree is right (``TreeGap``, ``GapPart``)
and the parser-free bundle's variants as the export measured them (``Variants``, ``VariantScore``). They
are built with keywords, or by ``from_json`` from the dicts the metric code returns, and hold what
report.json holds, key for key; a field added since an older report was written defaults to None there.

``from_json(hint, value)`` reads the JSON form into the type ``hint`` names (dataclasses, lists and dicts
of them, optionals); a key no field names is a ``UsageError`` — a metric is never dropped unread.
``to_json`` writes it back. A class with its own layout defines ``from_json_form`` / ``json_form``.
Every numeric field is rendered in report.md or marked ``json_only`` with the reason it is not
(``tests/app/test_report_rendering.py`` fails otherwise).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from ..encoder.errors import UsageError

JSON_ONLY = "json_only"  # field metadata key: why a numeric field is kept in report.json but not rendered


def json_only(reason: str, **kwargs: Any) -> Any:
    """A dataclass field kept in report.json and deliberately not rendered, and why (``field`` kwargs pass on)."""
    return field(metadata={JSON_ONLY: reason}, **kwargs)


def from_json(hint: Any, value: Any) -> Any:
    """``value`` (JSON) as the type ``hint`` says; UsageError naming a key that no field of its class has."""
    origin = typing.get_origin(hint)
    if value is None:
        return None
    if origin in (typing.Union, types.UnionType):
        options = [o for o in typing.get_args(hint) if o is not type(None)]
        return from_json(options[0], value) if len(options) == 1 else value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):  # a hint is a class, never an instance
        if hasattr(hint, "from_json_form"):
            return hint.from_json_form(value)
        hints = typing.get_type_hints(hint)
        unknown = set(value) - set(hints)
        if unknown:
            raise UsageError(
                f"{hint.__name__} has no field {', '.join(sorted(unknown))}: a metric added without its field "
                "in the report's types (parserfree/reports/parts.py, report.py), or a report of a newer parserfree"
            )
        return hint(**{name: from_json(hints[name], v) for name, v in value.items()})
    if origin is list:
        (inner,) = typing.get_args(hint)
        return [from_json(inner, v) for v in value]
    if origin is dict:
        _, inner = typing.get_args(hint)
        return {k: from_json(inner, v) for k, v in value.items()}
    return value


def to_json(value: Any) -> Any:
    """The JSON form of a report value: dataclasses as objects (or their ``json_form``), containers copied."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if hasattr(value, "json_form"):
            return value.json_form()
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    return value


GRAPH_TREE = "the graph's UAS and LAS are rendered from DistanceQuality.tree (the same words, labels included)"
HEAD_FIELDS = ("words", "uas", "las", "directed_recall", "labelled_recall")  # RelationRow's, from predicted heads


@dataclass(kw_only=True)
class RelationRow:
    """UUAS and relation recall of one sentence-length bin (``predictor.metrics.RelationMetrics``), in
    percent; with the predicted heads also UAS, LAS and the directed and labelled recall per relation."""

    sentences: int
    arcs: int = json_only("UUAS's denominator (the parser's arcs, punctuation excluded)")
    uuas: float | None
    recall: dict[str, float | None]
    relation_arcs: dict[str, int]
    words: int | None = None
    uas: float | None = None
    las: float | None = None
    directed_recall: dict[str, float | None] | None = None
    labelled_recall: dict[str, float | None] | None = None

    def json_form(self) -> dict:
        """Its JSON object; without predicted heads the head fields are left out, as the metric leaves them."""
        data = {f.name: to_json(getattr(self, f.name)) for f in dataclasses.fields(self)}
        return data if self.words is not None else {k: v for k, v in data.items() if k not in HEAD_FIELDS}


@dataclass(kw_only=True)
class TreeQuality:
    """The graph's own predicted trees against the parser's (``comparison.tree_quality``): a ``RelationRow`` with
    the head fields per sentence-length bin ("all" first) and the sentences skipped. JSON: the bins and
    ``skipped`` side by side, as ``tree_quality`` returns them."""

    by_length: dict[str, RelationRow]
    skipped: int = 0

    @property
    def overall(self) -> RelationRow:
        return self.by_length["all"]

    def json_form(self) -> dict:
        return {**{k: v.json_form() for k, v in self.by_length.items()}, "skipped": self.skipped}

    @classmethod
    def from_json_form(cls, data: dict) -> TreeQuality:
        bins = {k: from_json(RelationRow, v) for k, v in data.items() if k != "skipped"}
        return cls(by_length=bins, skipped=data.get("skipped", 0))


@dataclass(kw_only=True)
class DistanceQuality:
    """D̂ against the parser's trees on one domain (``tree_scores.distance_quality``): UUAS (punctuation
    excluded, percent), DSpr and L1 with the |i−j| chain baseline's UUAS and DSpr; with the graph's heads,
    root accuracy (a share) and the cycle rate of those heads (percent), and with a checkpoint, the cycle
    rate of the predictor's raw argmax heads; the sentences scored and skipped; UUAS and relation recall by
    sentence length (``relations``) and the graph's directed, labelled trees (``tree``)."""

    uuas: float
    uas: float | None = json_only(GRAPH_TREE, default=None)
    las: float | None = json_only(GRAPH_TREE, default=None)
    dspr: float
    l1: float
    n_sentences: int | None = None
    skipped: int = 0
    chain_uuas: float | None = None
    chain_dspr: float | None = None
    root_acc: float | None = None
    cycle_rate: float | None = None
    argmax_cycle_rate: float | None = None
    relations: dict[str, RelationRow] | None = None
    tree: TreeQuality | None = None


@dataclass(kw_only=True)
class BucketScore:
    """One row on one breakdown bucket (``breakdown.bucket_entry``), in percent: items, accuracy (mean over
    seeds) and its sd over seeds, the 95 % interval, and minimal-pair accuracy."""

    n: int
    accuracy: float
    sd: float | None
    ci95: list[float]
    pair_accuracy: float | None
    n_pairs: int = json_only("the bucket's minimal pairs; its size is rendered as n (items)")


RowBreakdown = dict[str, dict[str, BucketScore]]  # one row's breakdown: group → bucket → score


@dataclass(kw_only=True)
class ParseLeak:
    """How often the parser's trees of a minimal pair's two versions differ (``parse_leak``), in percent."""

    pairs: int
    trees_differ: float
    labels_differ: float
    subject_arcs_differ: float


@dataclass(kw_only=True)
class GapPart:
    """One part of the items (in %): its share (mean over seeds), each row's accuracy on it, the gap within it
    (``free`` − ``reference``) and the gap's contribution to the overall one, each with a 95 % interval."""

    share: float
    free_accuracy: float
    reference_accuracy: float
    gap: float | None  # None when the part is empty in every seed
    gap_ci95: list[float] | None
    contribution: float
    contribution_ci95: list[float]


# the groups of a TreeGap's parts, and the two parts of each group
GAP_TREE, GAP_SUBJECT, GAP_VERB_SUBJECT = "tree", "subject_arcs", "verb_subject"
GAP_RIGHT, GAP_WRONG = "right", "wrong"


@dataclass(kw_only=True)
class TreeGap:
    """``free`` − ``reference`` over all items (percentage points, 95 % interval) and by part: group
    (``tree``, ``subject_arcs`` and, where the items name their verb, ``verb_subject``) → ``right`` /
    ``wrong`` → ``GapPart``; ``unread``: items, over every seed, whose predicted tree could not be compared
    (counted as wrong)."""

    free: str
    reference: str
    seeds: int
    n: int
    gap: float
    gap_ci95: list[float]
    parts: dict[str, dict[str, GapPart]]
    unread: int


@dataclass(kw_only=True)
class VariantScore:
    """One model variant of the bundle (fp32, optimised, int8) on the test split, as the export measured it:
    its task metric, the share of predictions, D̂ rows, heads and labels equal to the fp32 graph's, and the
    speed of its task graph and (a bundle with one) of its tree graph."""

    metric_name: str
    metric: float
    agreement_with_fp32: float
    distance_rows_as_fp32: float | None = None
    heads_as_fp32: float | None = None
    labels_as_fp32: float | None = None
    sentences_per_s: float | None = None
    tree_sentences_per_s: float | None = None


@dataclass(kw_only=True)
class Variants:
    """The bundle manifest's ``evaluation``: the sentences, batch and threads of the measurement and every
    variant's scores — or, when the export could not measure, why (``skipped``, the only key then)."""

    source: str | None = None
    n_examples: int | None = None
    batch_size: int | None = None
    threads: int | None = None
    speed: str | None = None
    variants: dict[str, VariantScore] = field(default_factory=dict)
    skipped: str | None = None

    def json_form(self) -> dict:
        if self.skipped is not None:
            return {"skipped": self.skipped}
        return {f.name: to_json(getattr(self, f.name)) for f in dataclasses.fields(self) if f.name != "skipped"}


__all__ = [
    "JSON_ONLY",
    "BucketScore",
    "DistanceQuality",
    "GapPart",
    "ParseLeak",
    "RelationRow",
    "RowBreakdown",
    "TreeGap",
    "TreeQuality",
    "VariantScore",
    "Variants",
    "from_json",
    "json_only",
    "to_json",
]


PARTS = "the items' and the seeds' halves of p and detectable, of which the report renders the larger"


@dataclass(kw_only=True)
class PairedResult:
    """One paired comparison of row a with row b on one slice of items (differences in points, a − b)."""

    n_items: int = json_only("the slice's items, rendered as its domain's or bucket's n")
    n_clusters: int = json_only("the resampling clusters (minimal pairs or items), named in the verdicts' text")
    seeds: int = json_only("the report's seeds, rendered in its heading")
    difference: float
    ci95: list[float]
    discordant: list[float]  # items only a gets right, only b gets right (mean over seeds)
    p: float  # the test's p (one seed: p_items; several: the larger of p_items and p_seeds)
    p_items: float = json_only(PARTS)  # sign-flip test over clusters (exact McNemar without pair ids and one seed)
    p_seeds: float | None = json_only(PARTS)
    detectable: float | None  # smallest difference (points) detectable at ALPHA with POWER; None: none is
    detectable_items: float | None = json_only(PARTS)
    detectable_seeds: float | None = json_only(PARTS)
