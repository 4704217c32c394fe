"""The ``parserfree`` spaCy pipeline component: a bundle's prediction and predicted tree on Docs, no parser.

Built by the spaCy factory ``"parserfree"`` (spacy_factory.py, registered through the ``spacy_factories``
entry point), so ``nlp.add_pipe("parserfree", config={"bundle": "runs/default/bundle"})`` works without
importing parserfree. Per doc it sets ``doc.cats`` (label → probability, as ``textcat`` does) or, for a
regression bundle, ``doc._.parserfree_score``; a parser-free bundle also gives the predicted tree as
``token.head`` / ``token.dep_`` (from the bundle's tree graph; with ``tree: false`` only its task graph,
which computes no tree, runs) and sentence starts that agree with it, so ``doc.sents``,
``token.children``, displaCy and ``Doc.to_json`` work as with spaCy's parser (``token.left_edge``/
``right_edge`` follow spaCy's own approximation on non-projective trees). A ``heads`` predictor's graph
returns the tree itself: each word's head (cycles broken; a root is a word the graph makes its own head,
nothing is guessed) and its label. A sentence ends wherever no arc crosses, so every sentence is a
contiguous span made of whole trees (two trees whose spans interleave share a sentence, and it has two
roots). A probe's graph returns only D̂, and the tree is decoded from it (predicted_tree.py: its root is a
rule of thumb), labelled ``"dep"`` with the root ``"ROOT"``.

The doc's tokens are the words fed to the graph; nothing is re-tokenised. Whitespace tokens (and tokens of
control characters only, which the training normalisation removes) are not fed and hang on the previous
word. The pipeline's tokenizer must therefore split text exactly as the bundle's: at first use (and again
when the tokenizer, its patterns or its number of special cases change) its serialised rules are compared
with the bundled tokenizer's and a ValueError names what differs. ``nlp.pipe(texts, batch_size=B)`` reads up to ``buffer`` docs ahead, sorts them by length
and runs the graph on B docs at a time, as ``ParserFreeModel.predict`` does; docs come back in input
order. A doc longer than the bundle's ``max_len`` words gets ``doc.cats`` from its first ``max_len`` words
(with a warning, as ``predict``) and its tree from consecutive windows of ``max_len`` words (a sentence
ends with each window). A doc without words gets no prediction (``doc.cats`` untouched).

The bundle is loaded (and verified) at the first doc. ``nlp.to_disk`` copies it into the pipeline folder
(``<component name>/bundle``) and ``spacy.load`` runs that copy, whatever the ``bundle`` path in the saved
config says. ``nlp.to_bytes`` does not carry the bundle (it is a folder): use ``to_disk``.
"""

import os
import shutil
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import srsly
from spacy import displacy
from spacy.attrs import DEP, HEAD, SENT_START
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc
from spacy.util import minibatch
from spacy.vocab import Vocab

from ..encoder.text import normalise_text
from . import FACTORY
from .errors import BundleError
from .graph_inputs import input_names
from .predicted_tree import heads_from_distances, sentence_starts
from .runtime import ParserFreeModel

BUNDLE_DIR = "bundle"  # the bundle's folder inside the component's folder of a saved pipeline
ROOT_LABEL, ARC_LABEL = "ROOT", "dep"
SCORE_EXTENSION = "parserfree_score"

if not Doc.has_extension(SCORE_EXTENSION):
    Doc.set_extension(SCORE_EXTENSION, default=None)


def tokenizer_rules(tokenizer) -> dict | None:
    """A spaCy tokenizer's rules (prefixes, suffixes, infixes, exceptions, …) without its vocab; None when
    the tokenizer is not a serialisable spaCy tokenizer."""
    try:
        return srsly.msgpack_loads(tokenizer.to_bytes(exclude=["vocab"]))
    except (AttributeError, TypeError, ValueError):
        return None


def tokenizer_state(tokenizer) -> tuple:
    """A cheap fingerprint of a tokenizer: the object, its pattern callables and its number of special
    cases; when it changes, the rules are compared again."""
    patterns = ("prefix_search", "suffix_search", "infix_finditer", "token_match", "url_match")
    return (
        id(tokenizer),
        len(getattr(tokenizer, "rules", None) or ()),
        getattr(tokenizer, "faster_heuristics", None),
        *(id(getattr(tokenizer, name, None)) for name in patterns),
    )


def doc_words(doc: Doc) -> tuple[np.ndarray, list[str]]:
    """Token indices and texts of the words of a doc that the graph reads (whitespace and control-only
    tokens skipped; a token with control characters is read as ``normalise_text`` leaves it)."""
    index, words = [], []
    for i, text in enumerate([token.text for token in doc]):
        if text.isspace() or not text.isprintable():
            text = normalise_text(text)
        if text:
            index.append(i)
            words.append(text)
    return np.asarray(index, dtype=np.int64), words


def set_tree(
    doc: Doc, word_index: np.ndarray, word_heads: np.ndarray, word_labels: Sequence[str] | np.ndarray | None = None
) -> None:
    """Write heads of the words (word positions, root = self) and their labels (None: ``"ROOT"`` on roots,
    ``"dep"`` elsewhere) to ``doc`` as token heads, labels and sentence starts; other tokens hang on the
    previous word (the first word when none precedes) as ``"dep"``."""
    n = len(doc)
    if n == 0:
        return
    strings = doc.vocab.strings
    heads = np.arange(n, dtype=np.int64)
    word_heads = np.asarray(word_heads, dtype=np.int64)
    if word_labels is None:
        word_labels = np.where(word_heads == np.arange(len(word_heads)), ROOT_LABEL, ARC_LABEL)
    labels = np.full(n, strings.add(ARC_LABEL), dtype=np.uint64)
    if len(word_index):
        heads[word_index] = word_index[word_heads]
        labels[word_index] = [strings.add(str(label)) for label in word_labels]
        others = np.setdiff1d(np.arange(n), word_index)
        previous = np.searchsorted(word_index, others) - 1
        heads[others] = word_index[np.maximum(previous, 0)]
    else:
        heads[1:] = 0
        labels[0] = strings.add(ROOT_LABEL)
    array = np.zeros((n, 2), dtype=np.uint64)
    array[:, 0] = (heads - np.arange(n)).view(np.uint64)  # HEAD is relative, as a two's-complement uint64
    array[:, 1] = labels
    doc.from_array([HEAD, DEP], array)  # type: ignore[arg-type]  # spaCy's Ints2d stub rejects a numpy uint64 array
    # spaCy derives sentence starts from left edges, which it only approximates on deep non-projective
    # trees; the spans of our trees are known, so write them.
    starts = np.where(sentence_starts(heads), 1, -1).astype(np.int64).view(np.uint64)
    doc.from_array([SENT_START], starts.reshape(n, 1))  # type: ignore[arg-type]  # as above (Ints2d)


def tree_doc(
    words: Sequence[str], heads: np.ndarray, vocab: Vocab | None = None, labels: Sequence[str] | None = None
) -> Doc:
    """A Doc of ``words`` whose parse is ``heads`` (0-based, root = self) with ``labels`` (None: labelled
    as ``set_tree`` labels an unlabelled tree)."""
    doc = Doc(vocab or Vocab(), words=list(words))
    set_tree(doc, np.arange(len(words)), np.asarray(heads, dtype=np.int64), labels)
    return doc


def tree_svg(words: Sequence[str], heads: Sequence[int], labels: Sequence[str] | None = None) -> str:
    """displaCy's SVG (style "dep") of a predicted tree of ``words``: its heads (0-based, root = self) and
    labels (None: ``"dep"`` arcs), as ``ParserFreeModel.predict(..., with_tree=True)`` returns them."""
    doc = tree_doc(words, np.asarray(heads, dtype=np.int64), labels=labels)
    return displacy.render(doc, style="dep", jupyter=False, options={"distance": 110})


class ParserFreeComponent(Pipe):
    """The pipeline component built by the ``parserfree`` factory (see the module docstring)."""

    def __init__(
        self,
        nlp: Language,
        name: str,
        bundle: str | os.PathLike | None,
        variant: str = "default",
        threads: int | None = None,
        buffer: int = 1024,
        tree: bool = True,
    ) -> None:
        if bundle is None:
            raise ValueError(
                f'{FACTORY}: no bundle: nlp.add_pipe("{FACTORY}", config={{"bundle": "path/to/bundle"}}) '
                "(a folder written by `parserfree export`)"
            )
        if buffer < 1:
            raise ValueError(f"{FACTORY}: buffer={buffer} must be ≥ 1")
        self.nlp = nlp
        self.name = name
        self.source = Path(bundle)
        self.variant = variant
        self.threads = threads
        self.buffer = buffer
        self.tree = tree
        self._model: ParserFreeModel | None = None
        self._rules: dict | None = None
        self._checked_tokenizer: tuple | None = None  # (tokenizer, tokenizer_state) last checked

    # ------------------------------------------------------------------ the bundle
    @property
    def runtime(self) -> ParserFreeModel:
        """The bundle's ParserFreeModel, loaded and verified on first use (not named ``model``: spaCy
        probes a component's ``model`` attribute when it links a pipeline)."""
        if self._model is None:
            self._load(self.source)
        return self._model

    def _load(self, folder: Path) -> None:
        model = ParserFreeModel.load(folder, threads=self.threads, variant=self.variant)
        if "distances" in input_names(model.recipe):
            raise BundleError(
                f"{folder}: a {model.recipe} bundle needs a parser's distances at inference; the "
                f"{FACTORY} component runs parser-free (or no-syntax) bundles"
            )
        self._model, self._rules, self._checked_tokenizer = model, tokenizer_rules(model.tokenizer), None

    def check_tokenizer(self) -> None:
        """Raise ValueError unless the pipeline's tokenizer has the bundle's rules (compared again whenever
        ``tokenizer_state`` changes)."""
        tokenizer = self.nlp.tokenizer
        model = self.runtime
        state = (tokenizer, tokenizer_state(tokenizer))  # the reference keeps the id from being reused
        if state == self._checked_tokenizer:
            return
        ours = tokenizer_rules(tokenizer)
        if ours is None:
            raise ValueError(
                f"{FACTORY}: the pipeline's tokenizer ({type(tokenizer).__name__}) is not a spaCy "
                f"tokenizer; the bundle {model.folder} needs the one it was trained with "
                f"({model.manifest['tokenizer'].get('pipeline')})"
            )
        if ours != self._rules:
            differ = ", ".join(sorted(k for k in set(ours) | set(self._rules) if ours.get(k) != self._rules.get(k)))
            source = model.manifest["tokenizer"]
            raise ValueError(
                f"{FACTORY}: the pipeline's tokenizer differs from the bundle's ({differ}); the words "
                f"would not be those the model was trained on. Use the tokenizer of {source.get('pipeline')} "
                f'(spacy.load it, or spacy.blank("{source["lang"]}") if their rules agree)'
            )
        self._checked_tokenizer = state

    # ------------------------------------------------------------------ processing
    def __call__(self, doc: Doc) -> Doc:
        """Annotate one doc."""
        self.check_tokenizer()
        self.annotate([doc], batch_size=1)
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """Annotate docs in length-sorted batches of ``batch_size`` (up to ``buffer`` docs read ahead);
        yields them in input order."""
        if batch_size < 1:
            raise ValueError(f"{FACTORY}: batch_size={batch_size} must be ≥ 1")
        self.check_tokenizer()
        error_handler = self.get_error_handler()
        for chunk in minibatch(stream, size=max(batch_size, self.buffer)):
            try:
                self.annotate(chunk, batch_size)
            except Exception as e:  # spaCy's per-component error handling (raises by default)
                error_handler(self.name, self, chunk, e)
                continue
            yield from chunk

    def annotate(self, docs: Sequence[Doc], batch_size: int) -> None:
        """Run the graph on ``docs`` (length-sorted, ``batch_size`` rows per run) and write the results."""
        model = self.runtime
        tree = self.tree and "distances" in model.tree_output_names  # the tree graph: task output and tree
        labelled = tree and "dep_labels" in model.tree_output_names
        words = [doc_words(doc) for doc in docs]
        rows = [
            (k, start, w[start : start + model.max_len])  # one row per window of max_len words
            for k, (_, w) in enumerate(words)
            for start in range(0, len(w), model.max_len)
        ]
        rows.sort(key=lambda row: len(row[2]))
        heads = [np.arange(len(w), dtype=np.int64) for _, w in words]
        labels: list[list[str]] = [[ROOT_LABEL] * len(w) for _, w in words]
        for first in range(0, len(rows), batch_size):
            batch = rows[first : first + batch_size]
            outputs = model.run_outputs([row[2] for row in batch], tree=tree)
            for b, (k, start, w) in enumerate(batch):
                if start == 0:
                    self._set_prediction(docs[k], outputs["task_output"][b])
                if not tree:
                    continue
                n = len(w)
                if "heads" in outputs:  # the graph's own tree
                    heads[k][start : start + n] = outputs["heads"][b, :n] + start
                else:  # a probe: decoded from D̂
                    heads[k][start : start + n] = heads_from_distances(outputs["distances"][b, :n, :n]) + start
                if labelled:
                    labels[k][start : start + n] = model.dep_label_names(outputs["dep_labels"][b, :n])
        if tree:
            for doc, (index, _), h, lab in zip(docs, words, heads, labels):
                set_tree(doc, index, h, lab if labelled else None)
        long = [k for k, (_, w) in enumerate(words) if len(w) > model.max_len]
        if long:
            warnings.warn(
                f"{FACTORY}: {len(long)} doc(s) longer than max_len={model.max_len} words: their "
                f"prediction reads the first {model.max_len} words (the tree covers every word)",
                stacklevel=3,
            )

    def _set_prediction(self, doc: Doc, output: np.ndarray) -> None:
        decoded = self.runtime._result(
            words=[], output=output, distances=None, truncated=False, with_distances=False, with_tree=False
        )  # the runtime's one decoding
        if "score" in decoded:
            doc._.set(SCORE_EXTENSION, decoded["score"])
        else:
            doc.cats.update(decoded["probabilities"])

    # ------------------------------------------------------------------ serialisation
    def to_disk(self, path: str | os.PathLike, *, exclude: Iterable[str] = ()) -> None:
        """Copy the bundle into ``path/bundle`` (atomically: a copy, then a rename)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        source, target = self.runtime.folder, path / BUNDLE_DIR
        if target.exists() and target.resolve() == Path(source).resolve():
            return
        tmp = path / f".{BUNDLE_DIR}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(source, tmp)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)

    def from_disk(self, path: str | os.PathLike, *, exclude: Iterable[str] = ()) -> "ParserFreeComponent":
        """Load (and verify) the bundle saved in ``path/bundle``."""
        folder = Path(path) / BUNDLE_DIR
        if not folder.is_dir():
            raise BundleError(f"{folder}: no {FACTORY} bundle in this saved pipeline")
        self.source = folder
        self._load(folder)
        return self
