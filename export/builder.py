"""Checkpoint → bundle: the export step of the data flow (training's ``best.ckpt`` in, a self-checking folder out).

``export_bundle`` rebuilds the trained model (core.checkpoints, no Lightning), traces the graphs of its
recipe (onnx_graph.py: the task graph, and for a parser-free model the tree graph), checks each one's
parity with PyTorch on held-out sentences of other batch sizes and lengths (parity.py), optionally adds
the optimised and int8 variants of each (variants.py), evaluates every variant on the test split
(evaluation.py), and writes the vocabulary, the tokenizer checked against the training words
(serving_words.py), labels, the resolved config and the sealed manifest (bundle.py). The held-out
sentences are the checkpoint's own, read by the training side and handed over as plain data
(``core.held_out.HeldOut``): export reads no dataset. Everything is built in a hidden temporary sibling
folder and renamed into place only once complete, so a failed or interrupted export never leaves a
bundle that loads.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import shutil
import tempfile
from pathlib import Path

import yaml

from ..core.checkpoints import TrainedModel, load_trained
from ..core.held_out import HeldOut
from ..core.parse import doc_to_parse, load_pipeline
from ..core.recipes import exportable_recipes
from ..core.trees import batch_tree_distances
from ..encoder.files import sha256_file, write_json
from ..encoder.text import normalise_text
from .bundle import MANIFEST, MODEL_FILES, TREE_FILES, write_manifest
from .errors import ExportError
from .evaluation import BundleGraphs, evaluation_report
from .graph_inputs import graph_inputs, graph_recipe, has_tree_graph, io_spec
from .onnx_graph import (
    AUTO,
    OPSET,
    TASK_DISTANCES,
    PredictorGraph,
    RecipeGraph,
    export_onnx,
    graph_module,
    run_graph_module,
    task_distances_for,
)
from .parity import ParitySet, build_parity_set, compare_outputs, parity_texts, require_parity
from .serving_words import bundle_tokenizer, treebank_sentences
from .session import make_session
from .tokenizer import words_of
from .variants import QUANTIZE_CHOICES, optimize_model, quantize_model

log = logging.getLogger(__name__)

# The trace batch (2 sentences, length 5) with its parser heads; parity batches use other shapes.
TRACE_WORDS = (("The", "film", "is", "good", "."), ("Bad", "."))
TRACE_HEADS = ((1, 2, 2, 2, 2), (0, 0))


def _prepare_target(out: Path, overwrite: bool) -> None:
    """Refuse to replace anything but an empty folder, or an existing bundle when ``overwrite``."""
    if not out.exists():
        return
    if not out.is_dir():
        raise ExportError(f"{out}: exists and is not a folder")
    if any(out.iterdir()) and not overwrite:
        raise ExportError(f"{out}: folder exists and is not empty (pass --overwrite to replace a bundle)")
    if any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise ExportError(f"{out}: not a bundle folder; refusing to replace it")


def _public_permissions(folder: Path) -> None:
    """Ordinary permissions (umask applied) for the folder and its files; temporary files start private."""
    umask = os.umask(0)
    os.umask(umask)
    for path in [folder, *folder.rglob("*")]:
        os.chmod(path, (0o777 if path.is_dir() else 0o666) & ~umask)


def _move_into_place(tmp: Path, out: Path) -> None:
    """Rename the finished folder to ``out``; an old bundle is moved aside first and deleted after."""
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.replace(out, old / out.name)
    try:
        os.replace(tmp, out)
    except BaseException:
        if old is not None:
            os.replace(old / out.name, out)  # put the previous bundle back
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _analyser(nlp, tokenizer, recipe: str):
    """texts → [(words, heads or None)]: the parser for a parser-fed graph, else the bundled tokenizer."""
    if graph_recipe(recipe).needs_parser_at_inference:

        def analyse(texts):
            return [(list(p.words), p.heads) for p in map(doc_to_parse, nlp.pipe(normalise_text(t) for t in texts))]
    else:

        def analyse(texts):
            return [(w, None) for w in words_of(tokenizer, texts)]

    return analyse


# What each graph of a bundle is for, as the manifest says it
TASK_GRAPH_NOTE = (
    "the task output only (no dependency labels, no tree outputs): what predict and the spaCy component "
    "without trees run"
)
TREE_GRAPH_NOTE = (
    "the task output with the predictor's D̂ and, from a heads predictor, its heads and dependency labels: "
    "what predict --with-tree / --with-distances, the spaCy component's trees and the parser bench run"
)


def _export_graph(
    trained: TrainedModel, recipe: str, path: Path, graph: str = "task", task_distances: str = "pointer_jumps"
) -> tuple[RecipeGraph, tuple[int, int]]:
    """Trace one graph of the recipe (``onnx_graph.GRAPHS``; ``task_distances``: how a task graph computes
    D̂, ``onnx_graph.TASK_DISTANCES``) on TRACE_WORDS and write it to ``path``; returns (wrapper, trace shape)."""
    max_len = trained.encoder_config.max_len
    module = graph_module(trained.model, recipe, graph, task_distances)
    words = [list(w)[:max_len] for w in TRACE_WORDS]
    takes = graph_recipe(recipe).needs_parser_at_inference
    distances = batch_tree_distances(TRACE_HEADS, length=max(map(len, words))) if takes else None
    trace = graph_inputs(trained.vocab, words, max_len, distances)
    export_onnx(module, trace, path)
    import onnx

    onnx.checker.check_model(str(path))
    return module, tuple(trace["word_ids"].shape)


def export_predictor(trained: TrainedModel, path: Path, parse: bool = False) -> PredictorGraph:
    """Trace the predictor alone (``PredictorGraph``: words → D̂, heads, labels; ``parse``: heads and labels
    only) of any checkpoint with a predictor — a pre-training run too — to ``path``; returns the wrapper
    (the PyTorch reference)."""
    module = PredictorGraph(trained.model.eval(), parse).eval()
    max_len = trained.encoder_config.max_len
    trace = graph_inputs(trained.vocab, [list(w)[:max_len] for w in TRACE_WORDS], max_len)
    export_onnx(module, trace, path)
    return module


def _checked_models(
    module: RecipeGraph,
    task: str,
    parity: ParitySet,
    folder: Path,
    optimize: bool,
    quantize: str | None,
    threads: int | None,
    files: dict[str, str] = MODEL_FILES,
) -> tuple[dict, dict]:
    """Parity of one graph's default file (``files``: its file per variant, the task graph's MODEL_FILES or
    the tree graph's TREE_FILES), and of the variants it is asked to write, against PyTorch → (models, reports).

    fp32 graphs must pass ``require_parity``; the int8 graph must only give finite outputs.
    """
    references = [run_graph_module(module, feeds) for feeds in parity.batches]  # PyTorch, once
    names = module.output_names

    def checked(variant: str, strict: bool) -> dict:
        session = make_session(folder / files[variant], threads)
        report = compare_outputs(references, lambda feeds: dict(zip(names, session.run(None, feeds))), parity, task)
        if strict:
            require_parity(report, files[variant])
        elif not report["finite"]:
            raise ExportError(f"{files[variant]}: non-finite outputs on the parity set; no bundle was written")
        log.info("%s %s parity: %s", module.graph, variant, report)
        return report

    default = folder / files["default"]
    reports = {"default": checked("default", strict=True)}
    if optimize:
        optimize_model(default, folder / files["optimized"], threads)
        reports["optimized"] = checked("optimized", strict=True)
    if quantize:
        quantize_model(default, folder / files["int8"], quantize)
        reports["int8"] = checked("int8", strict=False)
    return {variant: files[variant] for variant in reports}, reports


def _write_bundle(
    trained: TrainedModel,
    held_out: HeldOut,
    recipe: str,
    tmp: Path,
    optimize: bool,
    quantize: str | None,
    threads: int | None,
    task_distances: str = "pointer_jumps",
) -> dict:
    """Every step of the export into ``tmp``; returns the manifest (``task_distances`` already resolved)."""
    experiment, vocab, task = trained.experiment, trained.vocab, trained.task
    max_len = trained.encoder_config.max_len
    spacy_model = experiment["parse"]["spacy_model"]
    nlp = load_pipeline(spacy_model)
    if graph_recipe(recipe).needs_parser_at_inference and "parser" not in nlp.pipe_names:
        raise ExportError(
            f"a {recipe} model is served with a spaCy parser's trees, and parse.spacy_model={spacy_model} "
            "has none; export a parser-free recipe (its graph predicts the trees); no bundle was written"
        )
    texts, source = parity_texts(held_out)
    treebank = treebank_sentences(experiment, held_out)
    served_by_bundle = not graph_recipe(recipe).needs_parser_at_inference
    tokenizer, tokenizer_meta = bundle_tokenizer(nlp, tmp, served_by_bundle, treebank, texts)
    tokenizer_meta["spacy_model"] = spacy_model

    try:
        module, trace_shape = _export_graph(trained, recipe, tmp / MODEL_FILES["default"], "task", task_distances)
    except ValueError as e:  # a task-distances method the model cannot use
        raise ExportError(f"{trained.path}: {e}; no bundle was written") from None
    tree_module = (
        _export_graph(trained, recipe, tmp / TREE_FILES["default"], "tree")[0] if has_tree_graph(recipe) else None
    )
    analyse = _analyser(nlp, tokenizer, recipe)
    parity = build_parity_set(texts, source, analyse, vocab, max_len, trace_shape)
    models, reports = _checked_models(module, task, parity, tmp, optimize, quantize, threads)
    tree_models, tree_reports = (
        _checked_models(tree_module, task, parity, tmp, optimize, quantize, threads, TREE_FILES)
        if tree_module is not None
        else ({}, {})
    )
    graphs = BundleGraphs(
        folder=tmp,
        models=models,
        tree_models=tree_models,
        task=task,
        n_classes=max(2, len(trained.label_names)),
        analyse=analyse,
        vocab=vocab,
        max_len=max_len,
        threads=threads,
    )
    evaluation = evaluation_report(graphs, held_out)

    vocab.save(tmp / "vocab.json")
    write_json(tmp / "labels.json", {"task": task, "label_names": trained.label_names})
    (tmp / "config.yaml").write_text(yaml.safe_dump(experiment, sort_keys=False, allow_unicode=True), encoding="utf-8")
    _public_permissions(tmp)
    predictor = trained.predictor_config
    tree = tree_module.output_names[2:] if tree_module is not None else ()  # heads (and dep_labels)
    spec = io_spec(recipe, task, vocab.n_features, tree, subwords=module.subwords)
    tree_outputs = spec.pop("tree_outputs")
    return write_manifest(
        tmp,
        {
            "kind": recipe,  # the bundle format names the recipe "kind"
            "recipe": trained.recipe,
            "task": task,
            "predictor_form": predictor.form
            if predictor is not None and graph_recipe(recipe).graph_returns_distances
            else None,
            "max_len": max_len,
            "n_features": vocab.n_features,
            "opset": OPSET,
            **spec,
            "dependency_labels": list(trained.dep_labels) if "dep_labels" in tree else None,
            "models": models,
            "task_graph": {
                "computes": TASK_GRAPH_NOTE,
                "distances": task_distances if has_tree_graph(recipe) else None,
                "distance_cap": module.distance_cap,
            },
            "tree_graph": {
                "computes": TREE_GRAPH_NOTE,
                "models": tree_models,
                "outputs": tree_outputs,
                "parity": tree_reports,
            }
            if tree_module is not None
            else None,
            "vocab": "vocab.json",
            "labels": "labels.json",
            "config": "config.yaml",
            "tokenizer": tokenizer_meta,
            "trace_shape": list(trace_shape),
            "parity": reports,
            "evaluation": evaluation,
            "checkpoint": {"path": str(trained.path.resolve()), "sha256": sha256_file(trained.path)},
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        },
    )


def export_bundle(
    checkpoint: str | os.PathLike | TrainedModel,
    out_dir: str | os.PathLike,
    optimize: bool = False,
    quantize: str | None = None,
    threads: int | None = None,
    overwrite: bool = False,
    task_distances: str = AUTO,
    held_out: HeldOut | None = None,
) -> dict:
    """Export a trained checkpoint (a path, or the model ``core.checkpoints.load_trained`` gave) to a bundle
    folder and return its manifest.

    The bundle's task graph is ``model.onnx`` (the task output only); a parser-free model's tree graph
    is ``tree.onnx`` (the task output, D̂, heads and labels), each parity-checked against PyTorch.
    optimize: also write ``model.optimized.onnx`` (and ``tree.optimized.onnx``; onnxruntime
    ORT_ENABLE_EXTENDED), parity-checked. quantize: ``"int8"`` also writes ``model.int8.onnx`` (and
    ``tree.int8.onnx``; dynamic quantisation), not gated by the parity tolerance; like every variant, its
    test-split metric, agreement with fp32 and speed are reported. threads: intra-op threads of the
    checking sessions. overwrite: replace an existing bundle at out_dir. task_distances: how the task
    graph computes the D̂ its bias reads (``onnx_graph.TASK_DISTANCES``: "pointer_jumps", exact, or
    "adjacency_powers", clamped where the bias saturates; "auto", the default, adjacency powers where they
    apply; the tree graph's D̂ is exact either way). held_out: the checkpoint's held-out sentences, read from
    its data by the training side (``distill.held_out.held_out_of``; ``parserfree export`` and
    ``parserfree.jobs.exporting.export_checkpoint`` pass them): the parity texts, the test split every
    variant is scored on and a treebank's words; without them the parity check uses built-in sentences,
    the evaluation is skipped and a model trained on a treebank is refused.
    Raises ExportError (parity failure, served words that differ from the training words, unsupported
    recipe, occupied out_dir) or CheckpointError (a damaged or foreign checkpoint); nothing is left at
    ``out_dir`` unless the whole export succeeded.
    """
    if quantize is not None and quantize not in QUANTIZE_CHOICES:
        raise ExportError(f"quantize={quantize!r} must be one of {', '.join(QUANTIZE_CHOICES)} or None")
    if task_distances not in (*TASK_DISTANCES, AUTO):
        raise ExportError(f"task_distances={task_distances!r} must be one of {', '.join((*TASK_DISTANCES, AUTO))}")
    out = Path(out_dir)
    _prepare_target(out, overwrite)
    trained = checkpoint if isinstance(checkpoint, TrainedModel) else load_trained(checkpoint)
    held_out = held_out or HeldOut.unavailable("no held-out data was given to the export")
    recipe = trained.recipe
    if recipe not in exportable_recipes():
        raise ExportError(
            f"{trained.path}: recipe {trained.recipe!r} has no task graph to export "
            f"(exportable: {', '.join(exportable_recipes())})"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    for stale in out.parent.glob(f".{out.name}.partial-*"):  # left by an export that was killed
        shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        method = task_distances_for(trained.model, recipe, task_distances)
        manifest = _write_bundle(trained, held_out, recipe, tmp, optimize, quantize, threads, method)
        _move_into_place(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest
