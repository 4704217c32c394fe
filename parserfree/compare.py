"""Compare: the parser-free ONNX model against the parser-fed model on the same examples.

Where the project shows whether parser-free inference is worth it. Every model runs its whole pipeline
from raw text (``parserfree.export.pipelines``), timed as a user would see it: the parser-fed model parses
with spaCy (tok2vec+parser), builds tree distances and runs (PyTorch, or onnxruntime when given a
parser-fed bundle); the parser-free model tokenises and runs its one ONNX graph; the no-syntax baseline
tokenises and runs. Reported: the task metric of each, agreement of parser-free with parser-fed
predictions, D̂ against the parser's trees (UUAS, DSpr, L1, with the |i−j| chain baseline), throughput at
batch 32, latency p50/p95 at batch 1, the end-to-end speed-up, and the parser-free checkpoint fed with
parser distances (what the predictor costs).
"""

from __future__ import annotations

import itertools

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from parserfree.distill.datasets import DataConfig, load_dataset
from parserfree.distill.evaluate import argmax_heads
from parserfree.encoder.errors import UsageError
from parserfree.encoder.files import write_json
from parserfree.distill.task_metrics import predictions, task_metrics
from parserfree.distill.teacher import DEFAULT_MODEL, Parse, SpacyTeacher
from parserfree.distill.trees import batch_tree_distances
from parserfree.export.bundle import package_versions
from parserfree.export.pipelines import (
    ModelSource,
    Pipeline,
    latency_ms,
    model_pipeline,
    resolve_model,
    run_timed,
    torch_outputs,
)
from parserfree.export.timing import describe_machine, machine
from parserfree.export.tree_quality import tree_quality
from parserfree.predictor import DistanceMetrics, chain_baseline
from parserfree.predictor.metrics import RelationMetrics
from parserfree.breakdown import breakdowns, plot_breakdown
from parserfree.report import (plot_bias_curves, plot_distance_heatmaps, plot_throughput, plot_training_curves,
                               plot_tree_comparison, write_markdown)


def agreement(task: str, a: np.ndarray, b: np.ndarray) -> float:
    """Share of identical predictions (classification) or Pearson r of the two models' scores (regression)."""
    if task == "regression":
        return float(np.corrcoef(a, b)[0, 1]) if a.size > 1 else float("nan")
    return float(np.mean(a == b)) if a.size else float("nan")


def distance_quality(dists: list[np.ndarray], words: list[list[str]], parses: list[Parse],
                     argmax: list[np.ndarray] | None = None) -> dict:
    """UUAS / DSpr / L1 of D̂ against the parser's trees (punctuation excluded from UUAS), and the |i−j|
    chain baseline on the same sentences; the cycle rate of the predictor's raw argmax heads (when
    given, else None); UUAS and relation recall by sentence length (``RelationMetrics``)."""
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
    got, base = ours.compute(), chain.compute()
    return {"uuas": got["uuas"], "dspr": got["dspr"], "l1": got["l1"], "chain_uuas": base["uuas"], "chain_dspr": base["dspr"], "n_sentences": got["n_sentences"], "skipped": skipped,
            "argmax_cycle_rate": got["argmax_cycle_rate"], "relations": relations.compute()}


def _examples(experiment: dict, dataset: str, split: str, cache_dir: str | None, max_examples: int | None) -> tuple[list[str], np.ndarray, str, list]:
    """Texts, gold labels, task and extra columns (or Nones) of one dataset's split, read with the experiment's data settings."""
    data = dict(experiment["data"])
    data.update(dataset=dataset, max_examples=None, cache_dir=cache_dir or data.get("cache_dir"))
    if dataset != experiment["data"]["dataset"]:
        data.update(format=None)
    ds = load_dataset(DataConfig(**data))
    exs = ds.splits[split]
    if max_examples:
        exs = exs[:max_examples]
    return [e.text for e in exs], np.array([e.label for e in exs]), ds.task, [e.columns for e in exs]


@dataclass
class DomainRun:
    """One domain's examples (length-sorted) run through every pipeline, with what was measured on them."""

    texts: list[str]
    gold: np.ndarray
    task: str
    runs: dict[str, dict]
    scores: dict[str, dict]
    agreement: float
    distance: dict
    breakdown: dict | None = None  # accuracy by attractors and distance, when the examples carry those columns


def compare(
    parser_free: str | Path,
    parser_fed: str | Path,
    datasets: Sequence[str],
    out_dir: str | Path,
    baseline: str | Path | None = None,
    extra: dict[str, str | Path] | None = None,
    split: str = "test",
    threads: int = 2,
    batch_size: int = 32,
    latency_examples: int = 200,
    max_examples: int | None = None,
    cache_dir: str | None = None,
    progress: bool = True,
) -> dict:
    """Evaluate and time every model on the same examples; write report.json, report.md and the PNGs.

    ``parser_fed`` is the parser-fed reference of the agreement and the speed-up; ``extra`` adds more
    models by report name (e.g. the locality control), each run behind the pipeline its recipe needs.
    The first domain gives the headline (per-model metrics, throughput, latency, agreement, D̂ quality,
    figures); every domain gets a row of metrics, agreement and D̂ quality."""
    from tqdm.auto import tqdm

    torch.set_num_threads(threads)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sources = _resolve_sources(parser_free, parser_fed, baseline, extra or {}, threads)
    free = sources["parser_free_onnx"]
    experiment = free.trained.experiment if free.trained else {"data": {"dataset": datasets[0], "task": free.bundle.task}}
    teacher = SpacyTeacher(experiment.get("parse", {}).get("spacy_model", DEFAULT_MODEL))
    pipelines = _pipelines(sources, teacher)

    report: dict = {"threads": threads, "split": split, "batch_size": batch_size, "machine": describe_machine(machine()), "models": {}, "domains": {}}
    bar = tqdm(total=len(datasets) * len(pipelines), desc="comparing", disable=not progress)
    for k, dataset in enumerate(datasets):
        texts, gold, task, columns = _examples(experiment, dataset, split, cache_dir, max_examples)
        domain = _run_domain(pipelines, texts, gold, task, batch_size, bar, columns, free)
        if k == 0:
            _headline(report, dataset, domain, pipelines, sources, latency_examples, batch_size)
            if domain.breakdown:
                report["breakdown"] = domain.breakdown
                plot_breakdown(domain.breakdown, out / "breakdown.png")
            _figures(out, sources, domain.runs["parser_fed"], domain.runs["parser_free_onnx"], report)
        report["domains"][dataset] = _domain_row(domain)
    bar.close()
    report["versions"] = package_versions()
    report["variants"] = free.bundle.manifest.get("evaluation")  # each variant (int8 too) on the test split, from the export
    write_json(out / "report.json", report)
    write_markdown(report, out / "report.md")
    return report


def _resolve_sources(parser_free: str | Path, parser_fed: str | Path, baseline: str | Path | None,
                     extra: dict[str, str | Path], threads: int) -> dict[str, ModelSource | None]:
    """The models by report name (no_syntax None without a baseline); wrong kinds are a ValueError."""
    free = resolve_model(parser_free, threads)
    if not free.row.graph_returns_distances or free.bundle is None:
        raise UsageError(f"{parser_free}: --parser-free must be a parser-free bundle (got {free.kind})")
    fed = resolve_model(parser_fed, threads)
    if not fed.row.needs_parser_at_inference:
        raise UsageError(f"{parser_fed}: --parser-fed must be a parser-fed run or bundle (got {fed.kind})")
    base = resolve_model(baseline, threads) if baseline else None
    sources = {"parser_fed": fed, "parser_free_onnx": free, "no_syntax": base}
    for name, path in extra.items():
        if name in sources:
            raise UsageError(f"model name {name!r} is taken by a built-in row of the report")
        sources[name] = resolve_model(path, threads)
    return sources


def _pipelines(sources: dict[str, ModelSource | None], teacher: SpacyTeacher) -> dict[str, Pipeline]:
    """Report name → the pipeline each model's user runs (behind spaCy when it needs parser distances)."""
    return {name: model_pipeline(src, teacher) for name, src in sources.items() if src is not None}


def _run_domain(pipelines: dict[str, Pipeline], texts: list[str], gold: np.ndarray, task: str, batch_size: int, bar, columns: list | None = None,
                free_source: ModelSource | None = None) -> DomainRun:
    """Every pipeline on the same length-sorted batches; metrics, agreement, D̂ quality and breakdowns
    (the parser-free checkpoint, when ``free_source`` has one, gives the argmax cycle rate)."""
    order = np.argsort([len(t) for t in texts], kind="stable")  # every model sees the same length-sorted batches
    texts, gold = [texts[i] for i in order], gold[order]
    columns = [columns[i] for i in order] if columns else None
    runs = {}
    for name, pipe in pipelines.items():
        runs[name] = run_timed(pipe, texts, batch_size)
        bar.update(1)
    preds = {name: predictions(task, r["outputs"]) for name, r in runs.items()}
    scores = {name: task_metrics(task, preds[name], gold) for name in runs}
    free, parsed = runs["parser_free_onnx"], runs["parser_fed"]
    trained = free_source.trained if free_source is not None else None
    argmax = argmax_heads(trained.model, trained.vocab, free["words"], trained.encoder_config.max_len) if trained else None
    dist = distance_quality(free["distances"], free["words"], parsed["parses"], argmax)
    dist["tree"] = tree_quality(free_source, free["words"], parsed["parses"])  # UAS, LAS of the graph's own heads and labels
    agree = agreement(task, preds["parser_free_onnx"], preds["parser_fed"])
    split_by = breakdowns(preds, gold, columns) if columns and task != "regression" else None
    return DomainRun(texts, gold, task, runs, scores, agree, dist, split_by)


def _headline(report: dict, dataset: str, domain: DomainRun, pipelines: dict[str, Pipeline], sources: dict[str, ModelSource | None], latency_examples: int, batch_size: int) -> None:
    """Fill the report's headline from the first domain: per-model metrics, throughput and latency, the
    end-to-end speed-up, and the parser-free checkpoint fed with parser distances."""
    texts, parsed = domain.texts, domain.runs["parser_fed"]
    n_words = sum(len(w) for w in parsed["words"])
    rng = np.random.default_rng(0)
    sample = [texts[i] for i in rng.choice(len(texts), min(latency_examples, len(texts)), replace=False)]
    for name, r in domain.runs.items():
        p50, p95 = latency_ms(pipelines[name], sample)
        report["models"][name] = {
            **{key: v for key, v in domain.scores[name].items()},
            "sentences_per_s": len(texts) / r["seconds"],
            "words_per_s": n_words / r["seconds"],
            "latency_ms_p50": p50,
            "latency_ms_p95": p95,
            "runtime": "onnxruntime" if sources[name].bundle is not None else "pytorch",
            "recipe": sources[name].kind,
        }
    report.update(dataset=dataset, n_examples=len(texts), task=domain.task, agreement=domain.agreement, distance=domain.distance)
    report["contrasts"] = contrasts(sources)
    report["speedup_end_to_end"] = report["models"]["parser_free_onnx"]["sentences_per_s"] / report["models"]["parser_fed"]["sentences_per_s"]
    free = sources["parser_free_onnx"]
    if free.trained is not None:
        report["parser_free_with_parser_distances"] = _with_parser_distances(free, domain, batch_size)


def _with_parser_distances(free: ModelSource, domain: DomainRun, batch_size: int) -> dict:
    """Task metrics of the parser-free checkpoint run in PyTorch on the parser's tree distances."""
    parsed = domain.runs["parser_fed"]
    outputs = np.concatenate([
        torch_outputs(free.trained, parsed["words"][i : i + batch_size], batch_tree_distances([p.heads for p in parsed["parses"][i : i + batch_size]]), "parser")
        for i in range(0, len(domain.texts), batch_size)
    ])
    return task_metrics(domain.task, predictions(domain.task, outputs), domain.gold)


def _domain_row(domain: DomainRun) -> dict:
    """One domain's line of the report: metric per model, agreement and D̂ quality."""
    scores = domain.scores
    return {
        "n_examples": len(domain.texts), "no_syntax": None, **{name: s["metric"] for name, s in scores.items()},
        "agreement": domain.agreement, "uuas": domain.distance["uuas"], "dspr": domain.distance["dspr"], "l1": domain.distance["l1"],
        "argmax_cycle_rate": domain.distance["argmax_cycle_rate"], "relations": domain.distance["relations"],
    }


def _figures(out: Path, sources: dict[str, ModelSource | None], parsed: dict, free_run: dict, report: dict) -> None:
    """Bias curves, distance heatmaps, throughput bars and training curves."""
    curves = {}
    for name, src in sources.items():
        if src is not None and src.trained is not None and src.trained.model.encoder.bias.table is not None:
            curves[name] = src.trained.model.encoder.bias.curve().detach().numpy()
    if curves:
        plot_bias_curves(curves, out / "bias_curves.png")
    picks = [i for i, w in enumerate(parsed["words"]) if 8 <= len(w) <= 14 and list(w) == list(free_run["words"][i])][:3]
    plot_distance_heatmaps(
        [(list(parsed["words"][i]), free_run["distances"][i], batch_tree_distances([parsed["parses"][i].heads])[0]) for i in picks],
        out / "distance_heatmaps.png",
    )
    plot_tree_comparison([(list(parsed["words"][i]), parsed["parses"][i].heads, free_run["distances"][i]) for i in picks],
                         out / "tree_comparison.png")
    plot_throughput({name: m["sentences_per_s"] for name, m in report["models"].items()}, out / "throughput.png", report["threads"])
    runs = {name: src.run_dir for name, src in sources.items() if src is not None and src.run_dir}
    if runs:
        plot_training_curves(runs, out / "training_curves.png")


# settings that say where files are or how fast it ran, not what the model is (a different ``init_from``,
# another start, does count)
_NOT_THE_MODEL = ("data.cache_dir", "data.archive", "run.", "threads", "training.num_workers")


def _flat(settings: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in settings.items():
        name = f"{prefix}{key}"
        out.update(_flat(value, f"{name}.") if isinstance(value, dict) else {name: value})
    return out


def contrasts(sources: dict[str, ModelSource | None]) -> list[dict]:
    """Pairs of compared models that differ in one thing only — the distance source of the biased layers,
    having a predictor, or one setting of their resolved training configs — and what that thing is."""
    configs = {name: _flat(src.trained.experiment) for name, src in sources.items()
               if src is not None and src.trained is not None}
    out = []
    for a, b in itertools.combinations(sorted(configs), 2):
        ra, rb = sources[a].row, sources[b].row
        things = [f"setting {k}: {configs[a].get(k)!r} vs {configs[b].get(k)!r}"
                  for k in sorted(set(configs[a]) | set(configs[b]))
                  if k != "recipe" and configs[a].get(k) != configs[b].get(k) and not k.startswith(_NOT_THE_MODEL)]
        if (ra.train_source, ra.eval_source) != (rb.train_source, rb.eval_source):
            things.append(f"distance source: {ra.train_source}→{ra.eval_source} vs {rb.train_source}→{rb.eval_source}")
        if ra.predictor != rb.predictor:
            things.append(f"predictor: {ra.predictor} vs {rb.predictor}")
        if len(things) == 1:
            out.append({"a": a, "b": b, "recipes": [ra.name, rb.name], "differs_in": things[0]})
    return out
