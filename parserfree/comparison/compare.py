"""Compare: the parser-free ONNX model against the parser-fed model, the controls and shortcut baselines, on
the same examples, with paired verdicts.

Where the project shows whether parser-free inference is worth it. Every model runs its whole pipeline
from raw text (``parserfree.comparison.pipelines``), timed as a user would see it: the parser-fed model parses
with spaCy (tok2vec+parser), builds tree distances and runs (PyTorch, or onnxruntime when given a
parser-fed bundle) — a model trained on another text's trees (``parse.tree_text_column``: the parse-leak
control) gets that text's tree here too; the parser-free model tokenises and runs its task graph (the
timed passes; its D̂, heads and labels come from one untimed pass of its tree graph); the other models
tokenise and run. Each model may come as several seeds (seed s of every row trained alike).
Shortcut baselines (``parserfree.comparison.baselines``) are fitted on the models' training data. Reported, per
compared dataset: every row's task metrics (mean ± sd over seeds), minimal-pair accuracy, breakdowns, the
paired verdicts of like-for-like rows and of every model against every baseline (``parserfree.comparison.scoring``),
the agreement of parser-free with parser-fed predictions, D̂ and the graph's trees against the parser's
(``tree_scores``); on the headline dataset also speed (batch 32; latency p50/p95 at batch 1), the speed-up
and the parser-free checkpoint fed with parser distances (what the predictor costs). Files: report.json
(``reports.report.Report``), report.md, the PNGs (``figures``), ``predictions/<dataset>/<row>.jsonl``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..core.parse import DEFAULT_MODEL
from ..core.recipes import ComparisonRoles
from ..core.task_metrics import agreement, predictions
from ..distill.data.datasets import SPLITS, DataConfig, Example, load_dataset
from ..distill.predictions import item_records, records_from_outputs, write_predictions
from ..distill.teacher import SpacyTeacher
from ..encoder.errors import UsageError
from ..encoder.files import write_json
from ..export.bundle import package_versions
from ..export.timing import describe_machine, machine
from ..reports.figures import comparison_figures
from ..reports.markdown import write_markdown
from ..reports.parts import Variants, from_json
from ..reports.report import BASELINE, MODEL, Contrast, DomainResult, ModelRow, Report, Speed
from .baselines import Baseline, fit_baselines
from .like_for_like import Pairing, like_for_like
from .paired import RESAMPLES
from .parse_leak import pair_tree_differences
from .pipelines import ModelSource, Pipeline, latency_ms, model_pipeline, resolve_model, run_timed
from .scoring import DomainScores, score_domain, statistics_note
from .tree_gap import compared_tree_gap
from .tree_quality import PredictedTree
from .tree_scores import parser_free_quality, tree_pass, with_parser_distances

ROLE_NAMES = tuple(f.name for f in dataclasses.fields(ComparisonRoles))  # parser_free, reference, unbiased, extra
ROLE_NEEDS = {  # role → (what its model must be, the message when it is not)
    "parser_free": (
        lambda s: s.row.graph_returns_distances and s.bundle is not None,
        "--parser-free must be a parser-free bundle",
    ),
    "reference": (lambda s: s.row.needs_parser_at_inference, "--parser-fed must be a parser-fed run or bundle"),
}


@dataclass
class CompareOptions:
    """How a comparison runs: which split, threads and batch size, how many examples, where the data is."""

    split: str = "test"
    threads: int = 2
    batch_size: int = 32
    latency_examples: int = 200
    max_examples: int | None = None
    cache_dir: str | None = None
    progress: bool = True
    baselines: bool = True  # fit and report the shortcut baselines (classification)
    resamples: int = RESAMPLES  # bootstrap resamples of every interval

    def validate(self) -> None:
        """Raise UsageError naming the first impossible option."""
        if self.split not in SPLITS:
            raise UsageError(f"split={self.split!r} must be one of {', '.join(SPLITS)}")
        for name in ("threads", "batch_size", "latency_examples", "resamples"):
            if getattr(self, name) < 1:
                raise UsageError(f"{name}={getattr(self, name)} must be ≥ 1")


@dataclass
class ComparedModels:
    """The models of a comparison by role, each a list of paths (bundle, run folder or checkpoint) — one
    per seed, seed s of every row trained with the same seed. Rows are named by recipe, an extra row by its
    name in ``extra_names`` where one is given (two rows of one recipe: a setting's variant beside its row)."""

    parser_free: Sequence[str | Path]
    reference: Sequence[str | Path]
    unbiased: Sequence[str | Path] = ()
    extra: Sequence[Sequence[str | Path]] = field(default_factory=list)
    extra_names: Sequence[str | None] = ()

    @property
    def seeds(self) -> int:
        return len(self.parser_free)

    def by_role(self) -> list[tuple[str, Sequence[str | Path], str | None]]:
        """(role, paths, name or None) of every row given; UsageError when a row has another number of seeds."""
        rows: list[tuple[str, Sequence[str | Path], str | None]] = [
            ("parser_free", self.parser_free, None),
            ("reference", self.reference, None),
        ]
        rows += [("unbiased", self.unbiased, None)] if self.unbiased else []
        names = list(self.extra_names) + [None] * (len(self.extra) - len(self.extra_names))
        rows += [("extra", paths, name) for paths, name in zip(self.extra, names)]
        for role, paths, _ in rows:
            if len(paths) != self.seeds or not paths:
                raise UsageError(
                    f"the {role} row has {len(paths)} seed(s) but parser_free has {self.seeds}: give "
                    "every row one model per seed"
                )
        return rows


@dataclass
class Row:
    """A model row being compared: its role and its sources, one per seed."""

    role: str
    sources: list[ModelSource]

    @property
    def first(self) -> ModelSource:
        return self.sources[0]


@dataclass
class DomainRun:
    """Every pipeline (per row and seed) on one domain's texts in the same length-sorted batches."""

    order: np.ndarray  # position in the sorted run → index of the item
    runs: dict[str, list[dict]]  # row → per seed, ``run_timed``'s result (outputs, words, parses, seconds)

    def outputs(self, name: str) -> list[np.ndarray]:
        """Task outputs of a row, per seed, in item order."""
        out = []
        for run in self.runs[name]:
            ordered = np.empty_like(run["outputs"])
            ordered[self.order] = run["outputs"]
            out.append(ordered)
        return out


def compare(
    models: ComparedModels, datasets: Sequence[str], out_dir: str | Path, options: CompareOptions | None = None
) -> Report:
    """Evaluate and time every model on the same examples; write report.json, report.md, the PNGs and
    every row's per-item predictions; return the Report.

    The parser-free row is measured against the reference (a parser-fed model) for agreement and
    speed-up. The first dataset is the headline (speed, figures); every dataset gets scores, breakdowns
    and paired verdicts."""
    from tqdm.auto import tqdm

    options = options or CompareOptions()
    options.validate()
    torch.set_num_threads(options.threads)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = resolve_rows(models, options.threads)
    roles = {role: next((n for n, r in rows.items() if r.role == role), None) for role in ROLE_NAMES if role != "extra"}
    free = rows[roles["parser_free"]]
    experiment = (
        free.first.trained.experiment
        if free.first.trained
        else {"data": {"dataset": datasets[0], "task": free.first.bundle.task}}
    )
    teacher = SpacyTeacher(experiment.get("parse", {}).get("spacy_model", DEFAULT_MODEL))
    pairings = like_for_like(
        {name: (r.first.trained.experiment, r.first.row) for name, r in rows.items() if r.first.trained is not None}
    )
    baselines = _fit_baselines(experiment, options) if options.baselines else []

    domains: dict[str, DomainResult] = {}
    contrasts: list[Contrast] = []
    table: dict[str, ModelRow] = {}
    bar = tqdm(
        total=len(datasets) * sum(len(r.sources) for r in rows.values()), desc="comparing", disable=not options.progress
    )
    for k, dataset in enumerate(datasets):
        examples, task, label_names = domain_examples(experiment, dataset, options)
        pipelines = {
            name: [model_pipeline(src, teacher, tree_texts(src, examples)) for src in row.sources]
            for name, row in rows.items()
        }
        run = run_domain(pipelines, [e.text for e in examples], options.batch_size, bar)
        trees = tree_pass(free.sources, run.runs[roles["parser_free"]], options.batch_size)  # untimed
        domain, found = _score_run(
            dataset, examples, task, label_names, run, trees, rows, roles, baselines, pairings, options, out
        )
        domains[dataset], contrasts = domain, contrasts + found
        if k == 0:
            table = _headline_rows(run, rows, pipelines, baselines, examples, options)
            parsed = run.runs[roles["reference"]][0]
            with_parser = with_parser_distances(
                free.sources, parsed, run.order, examples, task, label_names, options.batch_size
            )
            words = run.runs[roles["parser_free"]][0]["words"]
            parser_free = {"words": words, "distances": [t.distances for t in trees[0]]}
            comparison_figures(out, rows, parsed, parser_free, table, options.threads, domain.breakdown)
    bar.close()
    speeds = {n: r.speed for n, r in table.items()}
    evaluation = free.first.bundle.manifest.get("evaluation") if free.first.bundle is not None else None
    report = Report(
        dataset=datasets[0],
        split=options.split,
        task=domains[datasets[0]].task,
        seeds=models.seeds,
        threads=options.threads,
        batch_size=options.batch_size,
        machine=describe_machine(machine()),
        roles=roles,
        models=table,
        domains=domains,
        contrasts=contrasts,
        statistics=statistics_note(models.seeds, domains[datasets[0]].n_pairs > 0, options.resamples),
        speedup_end_to_end=speeds[roles["parser_free"]].sentences_per_s / speeds[roles["reference"]].sentences_per_s,
        versions=package_versions(),
        parser_free_with_parser_distances=with_parser,
        variants=from_json(Variants, evaluation),  # each variant (int8 too), as the export measured it
    )
    write_json(out / "report.json", report.to_dict())
    write_markdown(report, out / "report.md")
    return report


def resolve_rows(models: ComparedModels, threads: int) -> dict[str, Row]:
    """The model rows by name (their recipe, or the name an extra row is given); wrong kinds, mixed recipes
    and two rows of one name are UsageErrors naming the path."""
    rows: dict[str, Row] = {}
    for role, paths, name in models.by_role():
        sources = [resolve_model(p, threads) for p in paths]
        recipes = {s.recipe for s in sources}
        if len(recipes) > 1:
            raise UsageError(f"{paths[0]}: the seeds of one row must share a recipe, got {', '.join(sorted(recipes))}")
        first = sources[0]
        fits, wanted = ROLE_NEEDS.get(role, (lambda source: True, ""))
        if not fits(first):
            raise UsageError(f"{paths[0]}: {wanted} (got {first.recipe})")
        name = name or first.recipe
        if name in rows:
            raise UsageError(
                f"{paths[0]}: two rows named {name} (rows are named by recipe: name an extra row with --extra NAME=PATH)"
            )
        rows[name] = Row(role, sources)
    return rows


def domain_examples(experiment: dict, dataset: str, options: CompareOptions) -> tuple[list[Example], str, list[str]]:
    """One dataset's split (its first ``max_examples``), task and label names, read with the experiment's
    data settings."""
    data = dict(experiment["data"])
    data.update(
        dataset=dataset, max_examples=None, train_fraction=1.0, cache_dir=options.cache_dir or data.get("cache_dir")
    )
    if dataset != experiment["data"]["dataset"]:
        data.update(format=None)
    ds = load_dataset(DataConfig(**data))
    exs = ds.splits[options.split]
    return (exs[: options.max_examples] if options.max_examples else exs), ds.task, ds.label_names


def _fit_baselines(experiment: dict, options: CompareOptions) -> list[Baseline]:
    """The shortcut baselines, fitted on the training split the models learnt from (its dev split chooses
    the bag of words' penalty); none for regression or unlabeled data."""
    data = dict(experiment["data"])
    data.update(cache_dir=options.cache_dir or data.get("cache_dir"))
    ds = load_dataset(DataConfig(**data))
    if ds.task not in ("binary", "classification") or not ds.splits["train"]:
        return []
    return fit_baselines(ds.splits["train"], ds.splits["dev"], ds.label_names)


def tree_texts(source: ModelSource, examples: Sequence[Example]) -> dict[str, str] | None:
    """Text → the text whose parser tree the model reads instead of its own, for a model trained with
    ``parse.tree_text_column`` (the parse-leak control reads each agreement item's grammatical version),
    from the examples' column; None for every other model."""
    column = (source.trained.experiment.get("parse") or {}).get("tree_text_column") if source.trained else None
    if not column:
        return None
    return {e.text: e.columns[column] for e in examples if e.columns and e.columns.get(column)}


def run_domain(pipelines: dict[str, list[Pipeline]], texts: list[str], batch_size: int, bar) -> DomainRun:
    """Every pipeline on the same length-sorted batches of ``texts``, timed (``model_pipeline``: a bundle runs
    its task graph)."""
    order = np.argsort([len(t) for t in texts], kind="stable")  # every model sees the same length-sorted batches
    ordered = [texts[i] for i in order]
    runs: dict[str, list[dict]] = {}  # as DomainRun.runs
    for name, seeds in pipelines.items():
        runs[name] = []
        for pipe in seeds:
            runs[name].append(run_timed(pipe, ordered, batch_size))
            bar.update(1)
    return DomainRun(order, runs)


def score_outputs(
    dataset: str,
    examples: list[Example],
    task: str,
    label_names: list[str],
    outputs: dict[str, list[np.ndarray]],
    baselines: Sequence[Baseline],
    pairings: Sequence[Pairing],
    resamples: int = RESAMPLES,
    predictions_dir: Path | None = None,
) -> tuple[DomainScores, dict[str, np.ndarray]]:
    """Scores and verdicts of one domain from every model row's task outputs (per seed, in item order) and
    the baselines that apply to its examples; writes every row's predictions into ``predictions_dir``
    (``<row>.jsonl``, ``<row>-seed<s>.jsonl``) when given. Returns them with each row's S×N predictions."""
    gold = np.array([e.label for e in examples])
    n_classes = max(2, len(label_names)) if task != "regression" else 1
    preds = {name: np.stack([predictions(task, o) for o in outs]) for name, outs in outputs.items()}
    kinds = {name: MODEL for name in outputs}
    if predictions_dir is not None:
        for name, outs in outputs.items():
            for s, o in enumerate(outs):
                write_predictions(
                    predictions_dir / f"{name}{'' if s == 0 else f'-seed{s}'}.jsonl",
                    records_from_outputs(examples, o, task),
                )
    for b in baselines:
        if b.applies_to(examples):
            pred, probs = b.predict(examples)
            preds[b.name], kinds[b.name] = pred[None], BASELINE
            if predictions_dir is not None:
                write_predictions(predictions_dir / f"{b.name}.jsonl", item_records(examples, pred, probs, task))
    scored = score_domain(
        dataset, task, gold, [e.columns for e in examples], preds, kinds, pairings, n_classes, resamples
    )
    return scored, preds


def seed_agreement(task: str, a: np.ndarray, b: np.ndarray) -> float:
    """Mean over seeds of the agreement of two rows' S×N predictions (seed s with seed s; NaN when undefined)."""
    values = [agreement(task, x, y) for x, y in zip(a, b)]
    return float("nan") if any(np.isnan(v) for v in values) else float(np.mean(values))


def _score_run(
    dataset: str,
    examples: list[Example],
    task: str,
    label_names: list[str],
    run: DomainRun,
    trees: list[list[PredictedTree]],
    rows: dict[str, Row],
    roles: dict,
    baselines: list[Baseline],
    pairings: list[Pairing],
    options: CompareOptions,
    out: Path,
) -> tuple[DomainResult, list]:
    """Scores, verdicts, agreement and D̂ quality (from the parser-free row's ``trees``, per seed) of one
    domain run; writes every row's predictions (the task outputs of the timed passes)."""
    scored, preds = score_outputs(
        dataset,
        examples,
        task,
        label_names,
        {name: run.outputs(name) for name in rows},
        baselines,
        pairings,
        options.resamples,
        out / "predictions" / dataset_slug(dataset),
    )
    free, fed = roles["parser_free"], roles["reference"]
    parses = run.runs[fed][0]["parses"]
    gap = None
    if task != "regression":
        words = [r["words"] for r in run.runs[free]]
        columns = [e.columns for e in examples]
        gold = np.array([e.label for e in examples])
        gap = compared_tree_gap(free, fed, preds, gold, columns, trees, words, parses, run.order, options.resamples)
    distance = [
        parser_free_quality(src, r["words"], t, parses) for src, r, t in zip(rows[free].sources, run.runs[free], trees)
    ]
    domain = DomainResult(
        dataset=dataset,
        task=task,
        n_examples=len(examples),
        n_pairs=scored.n_pairs,
        scores=scored.scores,
        agreement=seed_agreement(task, preds[free], preds[fed]),
        distance=distance[0],
        breakdown=scored.breakdown,
        distance_by_seed=distance if len(distance) > 1 else None,
        parse_leak=pair_tree_differences([examples[i] for i in run.order], parses),  # the parses are in run order
        tree_gap=gap,
    )
    return domain, scored.contrasts


def dataset_slug(dataset: str) -> str:
    """A folder name for a dataset: a built-in name as it is, a file by its stem."""
    return Path(dataset).stem if ("/" in dataset or "." in dataset) else dataset


def _headline_rows(
    run: DomainRun,
    rows: dict[str, Row],
    pipelines: dict[str, list[Pipeline]],
    baselines: list[Baseline],
    examples: list[Example],
    options: CompareOptions,
) -> dict[str, ModelRow]:
    """Every row of the report, with the speed of seed 0 of every model row on the headline domain."""
    texts = [examples[i].text for i in run.order]
    fed = next(n for n, r in rows.items() if r.role == "reference")
    n_words = sum(len(w) for w in run.runs[fed][0]["words"])
    rng = np.random.default_rng(0)
    sample = [texts[i] for i in rng.choice(len(texts), min(options.latency_examples, len(texts)), replace=False)]
    table: dict[str, ModelRow] = {}
    for name, row in rows.items():
        seconds = run.runs[name][0]["seconds"]
        p50, p95 = latency_ms(pipelines[name][0], sample)
        speed = Speed(
            sentences_per_s=len(texts) / seconds, words_per_s=n_words / seconds, latency_ms_p50=p50, latency_ms_p95=p95
        )
        table[name] = ModelRow(
            name=name,
            kind=MODEL,
            role=row.role,
            recipe=row.first.recipe,
            runtime="onnxruntime" if row.first.bundle is not None else "pytorch",
            seeds=len(row.sources),
            description=row.first.row.summary,
            speed=speed,
        )
    for b in baselines:
        if b.applies_to(examples):
            table[b.name] = ModelRow(
                name=b.name, kind=BASELINE, role=None, recipe=None, runtime="numpy", seeds=1, description=b.description
            )
    return table
