"""Compare: the parser-free ONNX model against the parser-fed model, the controls and shortcut baselines, on
the same examples, with paired verdicts.

Where the project shows whether parser-free inference is worth it. Every model runs its whole pipeline
from raw text (``parserfree.export.pipelines``), timed as a user would see it: the parser-fed model parses
with spaCy (tok2vec+parser), builds tree distances and runs (PyTorch, or onnxruntime when given a
parser-fed bundle) — a model trained on another text's trees (``parse.tree_text_column``: the parse-leak
control) gets that text's tree here too; the parser-free model tokenises and runs its one ONNX graph; the
other models tokenise and run. Each model may come as several seeds (seed s of every row trained alike). Shortcut
baselines (``parserfree.baselines``) are fitted on the models' training data. Reported, per compared
dataset: every row's task metric (mean ± sd over seeds), minimal-pair accuracy, breakdowns, the paired
verdicts of like-for-like rows and of every model against every baseline (``parserfree.scoring``), the
agreement of parser-free with parser-fed predictions and D̂ against the parser's trees (UUAS, DSpr, L1,
with the |i−j| chain baseline); on the headline dataset also throughput at batch 32, latency p50/p95 at
batch 1, the end-to-end speed-up and the parser-free checkpoint fed with parser distances (what the
predictor costs). Files: report.json (``report_types.Report``), report.md, the PNGs and
``predictions/<dataset>/<row>.jsonl`` (every row's prediction for every item, ``distill/predictions.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from parserfree.baselines import Baseline, fit_baselines
from parserfree.breakdown import plot_breakdown
from parserfree.distill.datasets import SPLITS, DataConfig, Example, load_dataset
from parserfree.distill.evaluate import argmax_heads
from parserfree.distill.predictions import item_records, records_from_outputs, write_predictions
from parserfree.distill.recipes import ComparisonRoles
from parserfree.distill.task_metrics import agreement, predictions
from parserfree.distill.teacher import DEFAULT_MODEL, Parse, SpacyTeacher
from parserfree.distill.trees import batch_tree_distances
from parserfree.encoder.errors import UsageError
from parserfree.encoder.files import write_json
from parserfree.export.bundle import package_versions
from parserfree.export.pipelines import (
    ModelSource,
    Pipeline,
    latency_ms,
    model_pipeline,
    parser_distances,
    resolve_model,
    run_timed,
    torch_outputs,
)
from parserfree.export.timing import describe_machine, machine
from parserfree.export.tree_quality import tree_quality
from parserfree.like_for_like import Pairing, like_for_like
from parserfree.paired import ALPHA, POWER, RESAMPLES
from parserfree.parse_leak import pair_tree_differences
from parserfree.predictor import DistanceMetrics, chain_baseline
from parserfree.predictor.metrics import RelationMetrics
from parserfree.report import (
    plot_bias_curves,
    plot_distance_heatmaps,
    plot_throughput,
    plot_training_curves,
    plot_tree_comparison,
    write_markdown,
)
from parserfree.report_types import (
    BASELINE,
    MODEL,
    Contrast,
    DomainResult,
    ModelRow,
    Report,
    Speed,
    StatisticsNote,
)
from parserfree.scoring import DomainScores, row_score, score_domain

ROLE_NAMES = tuple(f.name for f in dataclasses.fields(ComparisonRoles))  # parser_free, reference, baseline, extra
ROLE_NEEDS = {  # role → (what its model must be, the message when it is not)
    "parser_free": (
        lambda s: s.row.graph_returns_distances and s.bundle is not None,
        "--parser-free must be a parser-free bundle",
    ),
    "reference": (lambda s: s.row.needs_parser_at_inference, "--parser-fed must be a parser-fed run or bundle"),
}


def distance_quality(
    dists: list[np.ndarray], words: list[list[str]], parses: list[Parse], argmax: list[np.ndarray] | None = None
) -> dict:
    """Every D̂ metric against the parser's trees as ``DistanceMetrics`` computes it (UUAS with punctuation
    excluded, DSpr, L1, root accuracy, cycle rates), the |i−j| chain baseline's UUAS and DSpr on the same
    sentences, the sentences skipped, and UUAS and relation recall by sentence length (``RelationMetrics``).
    The cycle rate of the predictor's raw argmax heads needs ``argmax`` (else None)."""
    ours, chain, relations = DistanceMetrics(), DistanceMetrics(), RelationMetrics()
    skipped = 0
    for k, (d, w, p) in enumerate(zip(dists, words, parses)):
        if list(w) != list(p.words) or len(w) > d.shape[0]:
            skipped += 1  # tokenisations differ (should not happen: same tokenizer) or truncated
            continue
        ours.update(d, p.heads, p.punct, argmax_heads=argmax[k] if argmax is not None else None)
        chain.update(chain_baseline(len(w)).astype(float), p.heads, p.punct)
        if p.deps is not None:
            relations.update(d, p.heads, p.deps, p.punct)
    base = chain.compute()
    return {
        **ours.compute(),
        "chain_uuas": base["uuas"],
        "chain_dspr": base["dspr"],
        "skipped": skipped,
        "relations": relations.compute(),
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
    per seed, seed s of every row trained with the same seed. Rows are named by recipe."""

    parser_free: Sequence[str | Path]
    reference: Sequence[str | Path]
    baseline: Sequence[str | Path] = ()
    extra: Sequence[Sequence[str | Path]] = field(default_factory=list)

    @property
    def seeds(self) -> int:
        return len(self.parser_free)

    def by_role(self) -> list[tuple[str, Sequence[str | Path]]]:
        """(role, paths) of every row given; UsageError when a row has another number of seeds."""
        rows = [("parser_free", self.parser_free), ("reference", self.reference)]
        rows += [("baseline", self.baseline)] if self.baseline else []
        rows += [("extra", paths) for paths in self.extra]
        for role, paths in rows:
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
    runs: dict[str, list[dict]]  # row → per seed, ``run_timed``'s result (outputs, words, D̂, parses, seconds)

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
        domain, found = _score_run(
            dataset, examples, task, label_names, run, rows, roles, baselines, pairings, options, out
        )
        domains[dataset], contrasts = domain, contrasts + found
        if k == 0:
            table = _headline_rows(run, rows, pipelines, baselines, examples, options)
            with_parser = _with_parser_distances(free, run, roles, examples, task, label_names, options.batch_size)
            if domain.breakdown:
                plot_breakdown(domain.breakdown, out / "breakdown.png")
            _figures(
                out, rows, run.runs[roles["reference"]][0], run.runs[roles["parser_free"]][0], table, options.threads
            )
    bar.close()
    speed = {n: r.speed for n, r in table.items()}
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
        speedup_end_to_end=speed[roles["parser_free"]].sentences_per_s / speed[roles["reference"]].sentences_per_s,
        versions=package_versions(),
        parser_free_with_parser_distances=with_parser,
        variants=free.first.bundle.manifest.get("evaluation")
        if free.first.bundle is not None
        else None,  # each variant (int8 too), from the export
    )
    write_json(out / "report.json", report.to_dict())
    write_markdown(report, out / "report.md")
    return report


def statistics_note(seeds: int, pairs: bool, resamples: int) -> StatisticsNote:
    """What the verdicts of a report of this many seeds are (docs/statistics.md)."""
    test = (
        "sign-flip test over clusters (minimal pairs, else items) of the difference in correct items; "
        "exact McNemar without pairs"
        if seeds == 1
        else "sign-flip permutation test over clusters of the seed-averaged difference and one-sample t-test "
        "over the per-seed differences, both must reject (p = the larger)"
    )
    power = (
        "Connor 1987 normal approximation on the cluster sums at the observed discordance (McNemar's without pairs)"
        if seeds == 1
        else "normal approximation on the cluster sums (items) and noncentral t (seeds); the larger"
    )
    return StatisticsNote(ALPHA, POWER, resamples, "minimal pair" if pairs else "item", test, power_method=power)


def resolve_rows(models: ComparedModels, threads: int) -> dict[str, Row]:
    """The model rows by name (their recipe); wrong kinds, mixed recipes and two rows of one recipe are
    UsageErrors naming the path."""
    rows: dict[str, Row] = {}
    for role, paths in models.by_role():
        sources = [resolve_model(p, threads) for p in paths]
        kinds = {s.kind for s in sources}
        if len(kinds) > 1:
            raise UsageError(f"{paths[0]}: the seeds of one row must share a recipe, got {', '.join(sorted(kinds))}")
        first = sources[0]
        fits, wanted = ROLE_NEEDS.get(role, (lambda source: True, ""))
        if not fits(first):
            raise UsageError(f"{paths[0]}: {wanted} (got {first.kind})")
        if first.kind in rows:
            raise UsageError(f"{paths[0]}: two rows of recipe {first.kind} (rows are named by recipe)")
        rows[first.kind] = Row(role, sources)
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
    """Every pipeline on the same length-sorted batches of ``texts``."""
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
    rows: dict[str, Row],
    roles: dict,
    baselines: list[Baseline],
    pairings: list[Pairing],
    options: CompareOptions,
    out: Path,
) -> tuple[DomainResult, list]:
    """Scores, verdicts, agreement and D̂ quality of one domain run; writes every row's predictions."""
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
    distance = [_distance(rows[free].sources[s], r, parses) for s, r in enumerate(run.runs[free])]
    domain = DomainResult(
        dataset,
        task,
        len(examples),
        scored.n_pairs,
        scored.scores,
        seed_agreement(task, preds[free], preds[fed]),
        distance[0],
        scored.breakdown,
        distance if len(distance) > 1 else None,
        pair_tree_differences([examples[i] for i in run.order], parses),  # the parses are in run order
    )
    return domain, scored.contrasts


def _distance(source: ModelSource, run: dict, parses: list[Parse]) -> dict:
    """D̂ quality of one parser-free run (its checkpoint, when there is one, gives the argmax cycle rate), and
    under ``tree`` UAS and LAS of the graph's own heads and labels."""
    trained = source.trained
    argmax = (
        argmax_heads(trained.model, trained.vocab, run["words"], trained.encoder_config.max_len) if trained else None
    )
    quality = distance_quality(run["distances"], run["words"], parses, argmax)
    quality["tree"] = tree_quality(source, run["words"], parses)
    return quality


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
        table[name] = ModelRow(
            name,
            MODEL,
            row.role,
            row.first.kind,
            "onnxruntime" if row.first.bundle is not None else "pytorch",
            len(row.sources),
            row.first.row.summary,
            Speed(len(texts) / seconds, n_words / seconds, p50, p95),
        )
    for b in baselines:
        if b.applies_to(examples):
            table[b.name] = ModelRow(b.name, BASELINE, None, None, "numpy", 1, b.description)
    return table


def _with_parser_distances(
    free: Row, run: DomainRun, roles: dict, examples: list[Example], task: str, label_names: list[str], batch_size: int
):
    """Task score of the parser-free checkpoints run in PyTorch on the parser's tree distances (None
    without checkpoints)."""
    if free.first.trained is None:
        return None
    parsed = run.runs[roles["reference"]][0]
    per_seed = []
    for source in free.sources:
        max_len = source.trained.encoder_config.max_len
        sorted_out = np.concatenate(
            [
                torch_outputs(
                    source.trained,
                    parsed["words"][i : i + batch_size],
                    parser_distances(parsed["parses"][i : i + batch_size], max_len),
                    "parser",
                )
                for i in range(0, len(examples), batch_size)
            ]
        )
        ordered = np.empty_like(sorted_out)
        ordered[run.order] = sorted_out
        per_seed.append(predictions(task, ordered))
    n_classes = max(2, len(label_names)) if task != "regression" else 1
    return row_score(task, np.stack(per_seed), np.array([e.label for e in examples]), n_classes, None)


def _figures(
    out: Path, rows: dict[str, Row], parsed: dict, free_run: dict, table: dict[str, ModelRow], threads: int
) -> None:
    """Bias curves, distance heatmaps, tree pictures, throughput bars and training curves (seed 0)."""
    curves = {}
    for name, row in rows.items():
        src = row.first
        if src.trained is not None and src.trained.model.encoder.bias.table is not None:
            curves[name] = src.trained.model.encoder.bias.curve().detach().numpy()
    if curves:
        plot_bias_curves(curves, out / "bias_curves.png")
    picks = [i for i, w in enumerate(parsed["words"]) if 8 <= len(w) <= 14 and list(w) == list(free_run["words"][i])][
        :3
    ]
    plot_distance_heatmaps(
        [
            (list(parsed["words"][i]), free_run["distances"][i], batch_tree_distances([parsed["parses"][i].heads])[0])
            for i in picks
        ],
        out / "distance_heatmaps.png",
    )
    plot_tree_comparison(
        [(list(parsed["words"][i]), parsed["parses"][i].heads, free_run["distances"][i]) for i in picks],
        out / "tree_comparison.png",
    )
    plot_throughput(
        {name: m.speed.sentences_per_s for name, m in table.items() if m.speed is not None},
        out / "throughput.png",
        threads,
    )
    runs = {name: row.first.run_dir for name, row in rows.items() if row.first.run_dir}
    if runs:
        plot_training_curves(runs, out / "training_curves.png")
