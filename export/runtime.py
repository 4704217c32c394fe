"""Inference from a bundle: text → normalised words → one onnxruntime run → labels, scores, D̂ and trees.

The end of the data flow, with no parser and no PyTorch model: ``ParserFreeModel.load`` verifies the
bundle (bundle.py), opens an onnxruntime session on the chosen variant of its task graph and rebuilds
the bundled spaCy tokenizer on a blank pipeline (tokenizer.py). A parser-free bundle's tree graph (the
task output with D̂, heads and labels) gets a session of its own the first time a tree is asked for.
``predict`` normalises texts with ``encoder.text.normalise_text`` (the training normalisation),
tokenises them, batches them by length (sorted, then returned in input order) and decodes each output:
with trees or distances from the tree graph, else from the task graph, which computes only the task
output. ``run_outputs`` (either graph) and ``run_words`` (task output and D̂) are the lower level the
benchmarks and the comparison use; they are also the only way to run a parser-fed bundle, whose graph
needs parser distances as an input.

Per text, ``predict`` returns ``label`` and ``probabilities`` (classification) or ``score``
(regression), the ``words`` the model saw, ``"truncated": true`` when the text had more than
``max_len`` words, and on request ``distances`` (the n×n D̂) and, with ``with_tree``:

- ``tree``: the undirected edges [[i, j], …] (i < j, 0-based word indices) of the minimum spanning tree
  of D̂ (``predictor.decoding.mst_edges``) — for the ``heads`` predictor the tree its heads describe
  (sentences of a multi-sentence text are joined through one far edge), for the ``probe`` the probe's;
- ``heads``: each word's head (0-based, a root points to itself) — the graph's own heads for a ``heads``
  predictor (cycles broken; its roots are the words it makes their own head), the directed tree decoded
  from D̂ for a probe (``predicted_tree.heads_from_distances``: the root is a guess);
- ``labels``: each word's dependency label at that head, when the graph has a label scorer.

An empty or whitespace-only text gives ``{"error": "empty text"}``.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..encoder.errors import UsageError
from ..encoder.vocabulary import AnyVocabulary, load_vocabulary
from .bundle import bundle_digest, verify_bundle
from .errors import BundleError
from .graph_inputs import graph_inputs, graph_recipe, input_names, manifest_outputs, manifest_tree_outputs
from .session import make_session
from .tokenizer import ChunkWords, load_tokenizer

EMPTY = {"error": "empty text"}
# Idle onnxruntime threads sleep instead of busy-waiting: on a CPU shared with other work, spinning threads
# take cores from it (bench/README.md: measured in every run of `python -m bench.inference`, session settings).
SPINNING = False
# A batch of one text runs on a session of its own with one intra-op thread: at this size the graph's nodes
# are too small to share, and waking a second thread for each of ~800 of them costs more than it gives
# (1.29× [1.28, 1.31] the single-text rate of two sleeping threads in paired passes, on the format-3 graph;
# bench/README.md, levers: `python -m bench.compare_graphs` measures it again).
SINGLE_TEXT_THREADS = 1


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax of B×C logits, shifted by the row maximum (no overflow)."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def tree_edges(distances: np.ndarray) -> list[list[int]]:
    """n×n D̂ → the sorted undirected edges [i, j] (i < j) of its minimum spanning tree."""
    from ..predictor.decoding import mst_edges

    return sorted(sorted(edge) for edge in mst_edges(distances))


@contextlib.contextmanager
def _naming(path: Path):
    """Turn any failure to read a bundle file into a one-line BundleError naming it."""
    try:
        yield
    except BundleError:
        raise
    except Exception as e:  # noqa: BLE001 — a file that passed its sha256 check but cannot be read
        line = (str(e).strip().splitlines() or [type(e).__name__])[0][:160]
        raise BundleError(f"{path}: unreadable ({line})") from None


def _check_io(path: Path, session, recipe: str, outputs: Sequence[str]) -> None:
    """BundleError unless a graph's session takes the inputs of ``recipe`` and gives ``outputs`` (the manifest's)."""
    expected = list(input_names(recipe))
    got = [i.name for i in session.get_inputs()]
    if got != expected:
        raise BundleError(f"{path}: graph inputs {got} differ from the {recipe} contract {expected}")
    names = [o.name for o in session.get_outputs()]
    if names != list(outputs):
        raise BundleError(f"{path}: graph outputs {names} differ from those the manifest records {list(outputs)}")


class ParserFreeModel:
    """A verified bundle with its onnxruntime session (the task graph's; the tree graph's opened when first
    asked for), vocabulary and tokenizer. Build with ``load``."""

    def __init__(
        self,
        folder: Path,
        manifest: dict,
        session,
        vocab: AnyVocabulary,
        tokenizer,
        labels: dict,
        variant: str,
    ) -> None:
        self.folder = folder
        self.manifest = manifest
        self.session = session
        self.vocab = vocab
        self.tokenizer = tokenizer
        self.words = ChunkWords(tokenizer)  # the tokenizer's words, each distinct chunk tokenized once
        self.variant = variant
        self.recipe: str = manifest["kind"]
        self.task: str = labels["task"]
        self.label_names: list[str] = list(labels["label_names"])
        self.max_len: int = int(manifest["max_len"])
        self.output_names: tuple[str, ...] = manifest_outputs(manifest)  # the task graph's: task_output
        # the tree graph's (task_output, distances, heads, dep_labels); () when the bundle has none
        self.tree_output_names: tuple[str, ...] = manifest_tree_outputs(manifest)
        self.dependency_labels: tuple[str, ...] = tuple(manifest.get("dependency_labels") or ())
        self.digest: str | None = None  # the bundle digest (its seal), set by ``load``
        self._tree_session = None  # the tree graph's, opened on first use (``tree_session``)
        self._single_text_sessions: dict[str, object] = {}  # per graph, opened on the first batch of one
        self._session_settings: dict = {}  # how ``load`` opened the session: path, threads, spinning

    @classmethod
    def load(
        cls,
        bundle: str | os.PathLike,
        threads: int | None = None,
        variant: str = "default",
        digest: str | None = None,
        spinning: bool | None = SPINNING,
    ) -> ParserFreeModel:
        """Verify ``bundle`` (seal, sha256 of every file, format version; ``digest``: the bundle digest to
        insist on) and open ``variant``'s task graph: ``"default"`` (model.onnx), ``"optimized"`` or
        ``"int8"`` when the export wrote them (the tree graph of the same variant opens on first use).
        ``threads``: onnxruntime intra-op threads (None: its default); ``spinning``: whether idle
        onnxruntime threads busy-wait (default off, see ``SPINNING``)."""
        folder = Path(bundle)
        manifest = verify_bundle(folder, digest)
        models = manifest["models"]
        if variant not in models:
            raise BundleError(f"{folder}: no {variant!r} model in this bundle (it has: {', '.join(models)})")
        tree = manifest.get("tree_graph")
        if tree is not None and variant not in tree["models"]:
            raise BundleError(
                f"{folder}: no {variant!r} tree graph in this bundle (it has: {', '.join(tree['models'])})"
            )
        with _naming(folder / models[variant]):
            session = make_session(folder / models[variant], threads, spinning=spinning)
        _check_io(folder / models[variant], session, manifest["kind"], manifest_outputs(manifest))
        with _naming(folder / manifest["vocab"]):
            vocab = load_vocabulary(folder / manifest["vocab"])
        with _naming(folder / manifest["labels"]):
            labels = json.loads((folder / manifest["labels"]).read_text(encoding="utf-8"))
            if not isinstance(labels.get("task"), str) or not isinstance(labels.get("label_names"), list):
                raise ValueError("expected {'task': ..., 'label_names': [...]}")
        tok = manifest["tokenizer"]
        with _naming(folder / tok["path"]):
            tokenizer = load_tokenizer(folder / tok["path"], tok["lang"])
        model = cls(folder, manifest, session, vocab, tokenizer, labels, variant)
        model.digest = bundle_digest(folder)
        model._session_settings = {"path": folder / models[variant], "threads": threads, "spinning": spinning}
        if tree is not None:
            model._session_settings["tree_path"] = folder / tree["models"][variant]
        return model

    @property
    def has_tree_graph(self) -> bool:
        """Whether the bundle has a tree graph (a parser-free bundle: D̂, and heads and labels from ``heads``)."""
        return bool(self.tree_output_names)

    @property
    def tree_session(self):
        """The tree graph's session (same variant, threads and spinning as ``session``), opened and checked
        against the manifest on first use; UsageError for a bundle without a tree graph."""
        if self._tree_session is None:
            if not self.has_tree_graph:
                raise UsageError(f"a {self.recipe} bundle has no tree graph (its model predicts no distances)")
            settings = self._session_settings
            path = settings.get("tree_path") or self.folder / self.manifest["tree_graph"]["models"][self.variant]
            with _naming(path):
                session = make_session(path, settings.get("threads"), spinning=settings.get("spinning", SPINNING))
            _check_io(path, session, self.recipe, self.tree_output_names)
            self._tree_session = session
        return self._tree_session

    def session_for(self, batch_size: int, tree: bool = False):
        """The session a batch of ``batch_size`` texts runs on: ``session`` (``tree``: ``tree_session``),
        except that a batch of one runs on a one-thread session of the same graph (``SINGLE_TEXT_THREADS``)
        when that session may use more."""
        settings = self._session_settings
        session = self.tree_session if tree else self.session
        if batch_size > 1 or not settings or settings["threads"] == SINGLE_TEXT_THREADS:
            return session
        key = "tree" if tree else "task"
        if key not in self._single_text_sessions:
            path = settings["tree_path"] if tree else settings["path"]
            self._single_text_sessions[key] = make_session(path, SINGLE_TEXT_THREADS, spinning=settings["spinning"])
        return self._single_text_sessions[key]

    def __repr__(self) -> str:
        return f"ParserFreeModel({str(self.folder)!r}, recipe={self.recipe!r}, task={self.task!r}, variant={self.variant!r})"

    # ------------------------------------------------------------------ lower level
    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """Texts → words as the training parser saw them (normalised, bundled tokenizer; not truncated)."""
        return self.words(texts)

    def run_outputs(
        self,
        words: Sequence[Sequence[str]],
        distances: np.ndarray | Sequence[np.ndarray] | None = None,
        tree: bool = False,
    ) -> dict[str, np.ndarray]:
        """One graph run on a batch of word lists → every output by name: the task graph's
        (``output_names``: task_output, B×C logits or B scores) or, with ``tree``, the tree graph's
        (``tree_output_names``: task_output, distances (B×T×T D̂) and, for a ``heads`` predictor, heads and
        dep_labels (B×T; −1 on padding; label ids into ``dependency_labels``); UsageError without one).

        A parser-fed bundle needs ``distances``: parser distances as a padded B×T×T array or one n×n
        matrix per example (−1 pad, 1000 across sentences); other bundles take none. Words beyond
        ``max_len`` are dropped with a warning; T = min(longest, max_len).
        """
        takes = graph_recipe(self.recipe).needs_parser_at_inference
        if takes and distances is None:
            raise UsageError(f"this {self.recipe} bundle needs parser distances: run_words(words, distances=...)")
        if not takes and distances is not None:
            raise UsageError(f"a {self.recipe} bundle takes no distances input")
        session = self.session_for(len(words), tree)  # the tree session first: a bundle without one stops here
        feeds = graph_inputs(self.vocab, words, self.max_len, distances)
        names = self.tree_output_names if tree else self.output_names
        return dict(zip(names, session.run(None, feeds)))

    def run_words(
        self, words: Sequence[Sequence[str]], distances: np.ndarray | Sequence[np.ndarray] | None = None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """One graph run → (task_output B×C logits or B scores, D̂ B×T×T or None): the tree graph of a
        parser-free bundle (for its D̂), else the task graph. The task output alone is
        ``run_outputs(words)["task_output"]``, from the task graph, which computes nothing else."""
        outputs = self.run_outputs(words, distances, tree=self.has_tree_graph)
        return outputs["task_output"], outputs.get("distances")

    def dep_label_names(self, ids: np.ndarray) -> list[str]:
        """Dependency label ids of one sentence's words (from ``dep_labels``) → their names."""
        return [self.dependency_labels[int(k)] for k in ids]

    # ------------------------------------------------------------------ texts
    def predict(
        self, texts: Sequence[str], batch_size: int = 32, with_distances: bool = False, with_tree: bool = False
    ) -> list[dict]:
        """One result dict per text, in input order (see the module docstring for the fields)."""
        row = graph_recipe(self.recipe)
        if row.needs_parser_at_inference:
            raise UsageError(
                f"this is a {self.recipe} bundle: it needs a parser's distances at inference; "
                "use run_words(words, distances=...) with parser distances"
            )
        if (with_distances or with_tree) and not row.graph_returns_distances:
            raise UsageError(
                f"a {self.recipe} bundle predicts no distances (with_distances/with_tree need a parser-free bundle)"
            )
        if batch_size < 1:
            raise UsageError(f"batch_size={batch_size} must be ≥ 1")
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] is {type(text).__name__}, expected str")
        words = self.tokenize(texts)
        results: list[dict] = [dict(EMPTY) for _ in words]
        live = sorted((i for i, w in enumerate(words) if w), key=lambda i: len(words[i]))
        too_long = sorted(i for i in live if len(words[i]) > self.max_len)
        if too_long:
            listed = ", ".join(f"#{i}: {len(words[i])} words" for i in too_long[:10])
            warnings.warn(
                f"{len(too_long)} text(s) longer than max_len={self.max_len} words were truncated "
                f"({listed}{', …' if len(too_long) > 10 else ''})",
                stacklevel=2,
            )
        for start in range(0, len(live), batch_size):
            rows = live[start : start + batch_size]
            batch = [words[i][: self.max_len] for i in rows]
            truncated = [len(words[i]) > self.max_len for i in rows]
            outputs = self.run_outputs(batch, tree=with_distances or with_tree)
            decoded = self.decode(batch, outputs, truncated, with_distances, with_tree)
            for i, item in zip(rows, decoded):
                results[i] = item
        return results

    def decode(
        self,
        batch: Sequence[Sequence[str]],
        outputs: dict[str, np.ndarray],
        truncated: Sequence[bool],
        with_distances: bool = False,
        with_tree: bool = False,
    ) -> list[dict]:
        """One graph run's outputs (``run_outputs`` on ``batch``, already cut to ``max_len``; the tree
        graph's for ``with_distances`` or ``with_tree``) → one result dict per sentence (see the module
        docstring). The class probabilities of the whole batch are one softmax."""
        task = outputs["task_output"]
        probabilities = softmax(task) if self.task != "regression" else None
        out = []
        for b, words in enumerate(batch):
            n = len(words)
            tree: dict[str, np.ndarray] = {
                name: outputs[name][b, :n] for name in ("heads", "dep_labels") if name in outputs
            }
            d = outputs["distances"][b, :n, :n] if "distances" in outputs else None
            p = probabilities[b] if probabilities is not None else None
            out.append(self._result(list(words), task[b], d, truncated[b], with_distances, with_tree, tree, p))
        return out

    def _result(
        self,
        words: list[str],
        output: np.ndarray,
        distances: np.ndarray | None,
        truncated: bool,
        with_distances: bool,
        with_tree: bool,
        tree: dict[str, np.ndarray] | None = None,
        probabilities: np.ndarray | None = None,
    ) -> dict:
        """Decode one row of graph output (logits, or a score for regression); ``tree``: that row's heads and
        dep_labels, when the graph gives them; ``probabilities``: the row's softmax, when already computed."""
        item: dict = {}
        if self.task == "regression":
            item["score"] = float(output)
        else:
            p = probabilities if probabilities is not None else softmax(output)
            names = self.label_names if len(self.label_names) == len(p) else [f"class_{k}" for k in range(len(p))]
            item["label"] = names[int(p.argmax())]
            item["probabilities"] = {name: float(v) for name, v in zip(names, p.tolist())}
        item["words"] = list(words)
        if truncated:
            item["truncated"] = True
        if with_distances:
            item["distances"] = distances.astype(float).tolist()
        if with_tree:
            item["tree"] = tree_edges(distances)
            item.update(self.tree_of(distances, tree or {}))
        return item

    def tree_of(self, distances: np.ndarray, tree: dict[str, np.ndarray]) -> dict:
        """One sentence's directed tree: {"heads": [...]} and, from a labelled graph, {"labels": [...]}: the
        graph's heads (and labels), or for a graph without heads the tree decoded from D̂ (n×n)."""
        if "heads" not in tree:
            from .predicted_tree import heads_from_distances

            return {"heads": heads_from_distances(distances).tolist()}
        out: dict[str, list[int] | list[str]] = {"heads": [int(h) for h in tree["heads"]]}
        if "dep_labels" in tree:
            out["labels"] = self.dep_label_names(tree["dep_labels"])
        return out
