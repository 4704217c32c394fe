"""Soft labels: a teacher model's logits on a task's training texts and on a transfer set, for a student.

Knowledge distillation (Hinton et al. 2015): a small student learns from a large teacher's class
distribution as well as from the gold label, on the training texts and on unlabelled in-domain text (the
transfer set) that only the teacher labels. Here the teacher is a trained run of the same task (in the
project's use, the base size's best row on dev) and the student any recipe row (``training.soft_labels``).

A soft-label set is a folder of two files:

- ``soft_labels.npz``: ``keys`` (N×16 bytes: the first 16 bytes of each normalised text's sha256,
  ``text_key``; a set holds no text, so a shipped one carries none of a corpus's sentences), ``logits``
  (N×C, float16, the teacher's task logits in the task's class order) and ``parts`` (N, ``train`` or
  ``transfer``);
- ``record.json``: the command that made it, the teacher (checkpoint sha256, recipe, encoder, dev and test
  scores), the task (dataset, label names), ``train_digest`` (the training texts it labels), what the
  transfer set holds, and the npz's sha256 — checked whenever the set is read, so a damaged or swapped file
  stops in one line.

A shipped set is ``models/soft-labels-<dataset>/`` (``builtin:soft-labels-<dataset>``); ``auto`` names the
shipped set of the run's dataset. A student finds its texts again by key: the training texts in its own
data, the transfer texts in the task's transfer pool (``transfer_texts``), built from the same data the
teacher's was. Every key of a set is checked against the student's dev and test texts: a set that labels
one is refused.

The transfer pool of a task:

- a dataset with ``data.unlabelled``: that file's texts;
- a built-in dataset listed in ``BUILTIN_TRANSFER``: built-in text of a corpus the task's own config leaves
  out (``TRANSFER_CORPORA``: the Pang & Lee movie-review sentences, ``pl-reviews``): for the movie
  sentences, that corpus's silver-trees training sentences (already filtered of every built-in dev and test
  text); for the number items, every number item buildable from its sentences;
- otherwise none: the teacher labels the training texts only.

Whatever the source, a text that is one of the task's training, dev or test texts leaves the pool. The record is written after the npz, so an interrupted write leaves a
record whose sha256 does not match, never a set that reads.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ..encoder.files import atomic_path, sha256_file, sha256_mismatch, write_json
from ..encoder.text import normalise_text
from .data.builtin_text import CORPORA, english
from .data.datasets import DataConfig, Dataset, load_dataset
from .data.readers import DataError
from .shipped import SCHEME, models_dir
from .shipped import SOFT_LABELS as LABELS_FILE

RECORD_FILE = "record.json"
FORMAT = 1
PARTS = ("train", "transfer")
AUTO = "auto"  # training.soft_labels: the shipped set of the run's dataset


def texts_digest(texts: Iterable[str]) -> str:
    """sha256 of the distinct normalised texts, sorted: what a set's training part was made from."""
    joined = "\n".join(sorted({normalise_text(t) for t in texts}))
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def shipped_name(dataset: str) -> str:
    """The shipped soft-label set of a dataset."""
    return f"soft-labels-{dataset}"


def resolve(ref: str, dataset: str) -> Path:
    """The folder of a soft-label set: a path, ``builtin:<name>`` or ``auto`` (the dataset's shipped set)."""
    if ref == AUTO:
        ref = SCHEME + shipped_name(dataset)
        if not (models_dir() / shipped_name(dataset)).is_dir():
            shipped = sorted(p.parent.name for p in models_dir().glob(f"*/{LABELS_FILE}"))
            raise DataError(
                f"training.soft_labels: auto: no shipped soft labels for dataset '{dataset}' (shipped: "
                f"{', '.join(shipped) or 'none'}); make a set with parserfree soft-labels and name its folder"
            )
    if ref.startswith(SCHEME):
        return models_dir() / ref[len(SCHEME) :]
    return Path(ref)


def text_key(text: str) -> str:
    """A text's key in a set: the first 16 bytes of its normalised form's sha256, as hex."""
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()[:32]


@dataclass
class SoftLabels:
    """A teacher's logits per text (``logits`` N×C float16), each text by its key (``text_key``) and in part
    ``train`` or ``transfer``."""

    keys: list[str]
    logits: np.ndarray
    parts: list[str]
    record: dict

    @classmethod
    def of_texts(cls, texts: Sequence[str], logits: np.ndarray, parts: Sequence[str], record: dict) -> SoftLabels:
        """A set of these texts' logits (the texts themselves are not kept)."""
        return cls([text_key(t) for t in texts], logits, list(parts), record)

    def by_key(self) -> dict[str, np.ndarray]:
        """Text key → its logits (float32)."""
        return {k: row.astype(np.float32) for k, row in zip(self.keys, self.logits)}

    def transfer_keys(self) -> list[str]:
        """The keys of the texts only the teacher labels, in the set's order."""
        return [k for k, p in zip(self.keys, self.parts) if p == "transfer"]


def write_soft_labels(folder: str | Path, soft: SoftLabels) -> Path:
    """Write a set (npz, then its record with the npz's sha256), each file atomically; returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    labels = folder / LABELS_FILE
    with atomic_path(labels, folder / f".{LABELS_FILE}.tmp.npz") as tmp:
        keys = np.array([list(bytes.fromhex(k)) for k in soft.keys], dtype=np.uint8).reshape(-1, 16)
        np.savez_compressed(tmp, keys=keys, logits=soft.logits.astype(np.float16), parts=np.array(soft.parts))
    record = {**soft.record, "format": FORMAT, "sha256": sha256_file(labels), "n": len(soft.keys)}
    record["created"] = record.get("created") or datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    write_json(folder / RECORD_FILE, record)
    soft.record = record
    return folder


def read_soft_labels(folder: str | Path) -> SoftLabels:
    """A set, after checking its record and the npz's sha256; DataError in one line otherwise."""
    folder = Path(folder)
    record_path, labels = folder / RECORD_FILE, folder / LABELS_FILE
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(
            f"{folder}: no soft-label set here (no {RECORD_FILE}; make one with parserfree soft-labels)"
        ) from None
    except ValueError as error:
        raise DataError(f"{record_path}: not a JSON record ({error})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT or "sha256" not in record:
        raise DataError(f"{record_path}: not a soft-label record of format {FORMAT}")
    if not labels.is_file():
        raise DataError(f"{labels}: missing (the record {record_path} has no labels beside it)")
    if mismatch := sha256_mismatch(labels, record["sha256"]):
        raise DataError(
            f"{labels}: {mismatch} (damaged, replaced or half written); remake it with the record's command"
        )
    with np.load(labels, allow_pickle=False) as data:
        keys, logits, parts = (
            [row.tobytes().hex() for row in data["keys"]],
            data["logits"],
            list(map(str, data["parts"])),
        )
    names = record.get("label_names") or []
    if logits.ndim != 2 or logits.shape != (len(keys), len(names)) or len(parts) != len(keys):
        raise DataError(f"{labels}: logits {logits.shape} do not fit {len(keys)} texts × {len(names)} labels")
    if not np.isfinite(logits.astype(np.float32)).all():
        raise DataError(f"{labels}: logits hold a NaN or an infinity")
    if bad := sorted(set(parts) - set(PARTS)):
        raise DataError(f"{labels}: part '{bad[0]}' is not one of {PARTS}")
    return SoftLabels(keys, logits, parts, record)


def check_fits(
    soft: SoftLabels,
    dataset: str,
    label_names: Sequence[str],
    train_texts: Sequence[str],
    held_out: Iterable[str],
    where: str,
) -> None:
    """Refuse, in one line naming ``where``, a set made for another dataset or label set, one whose training
    texts are not this run's (their digest differs and some training text has no soft label), or one that
    labels a dev or test text."""
    record = soft.record
    if record.get("dataset") != dataset:
        raise DataError(f"{where}: soft labels of dataset '{record.get('dataset')}', not this run's '{dataset}'")
    if list(record.get("label_names") or []) != list(label_names):
        raise DataError(f"{where}: soft labels over {record.get('label_names')}, not this run's {list(label_names)}")
    covered = set(soft.keys)
    if record.get("train_digest") != texts_digest(train_texts) and not all(
        text_key(t) in covered
        for t in train_texts  # a share of the training split (data.train_fraction)
    ):
        raise DataError(
            f"{where}: the training texts' digest {texts_digest(train_texts)[:12]}… is not the recorded "
            f"{str(record.get('train_digest'))[:12]}… (the set was made for other data or split settings)"
        )
    leaked = next((t for t in held_out if text_key(t) in covered), None)
    if leaked is not None:
        raise DataError(f"{where}: the soft labels label a dev or test text ({leaked[:60]!r}); remake them")


def read_unlabelled(path: str | Path) -> list[str]:
    """The texts of an unlabelled file (one per line; blank lines and lines without a letter or digit are
    skipped), normalised and distinct; DataError when no line is usable."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    texts = [normalise_text(line) for line in lines]
    usable = list(dict.fromkeys(t for t in texts if any(c.isalnum() for c in t)))
    if not usable:
        raise DataError(f"{path}: no usable line (each line is one text; {len(lines)} lines, none with a word)")
    return usable


def transfer_pool(texts: Iterable[str], exclude: Iterable[str], limit: int | None) -> list[str]:
    """The transfer set: distinct normalised ``texts`` not in ``exclude`` (training, dev and test texts), in
    the order of a hash of the text (a corpus's order says nothing), cut to ``limit`` (None: all)."""
    excluded = {normalise_text(t) for t in exclude}
    kept = [t for t in dict.fromkeys(normalise_text(t) for t in texts) if t and t not in excluded]
    kept.sort(key=lambda t: hashlib.sha256(t.encode("utf-8")).hexdigest())
    return kept[:limit] if limit is not None else kept


TRANSFER_CORPORA = ("pl-reviews",)  # in-domain review text that neither main-job task is made of
BUILTIN_TRANSFER = {"vader-movies": "silver-trees", "agreement-number": "agreement-number"}  # dataset → the pool's


def transfer_texts(data: DataConfig, dataset: Dataset, limit: int | None = None) -> tuple[list[str], str]:
    """The transfer pool of a task (none of its own texts, ``transfer_pool``), and a line saying what it is."""
    own = dataset.texts()
    if data.unlabelled:
        return transfer_pool(read_unlabelled(data.unlabelled), own, limit), f"the lines of {data.unlabelled}"
    source = BUILTIN_TRANSFER.get(dataset.name)
    if source is None:
        return [], "none: the training texts only"
    if source == "silver-trees":  # the corpora up to the last transfer corpus: what its sentences depend on
        corpora = list(CORPORA[: max(CORPORA.index(c) for c in TRANSFER_CORPORA) + 1])
    else:  # the task's own corpora and the transfer corpora: the items of both, split as one build
        corpora = sorted({*english(data.builtin_corpora).corpora, *TRANSFER_CORPORA}, key=CORPORA.index)
    pool_config = dataclasses.replace(
        data,
        dataset=source,
        task="none" if source == "silver-trees" else data.task,
        builtin_corpora=corpora,
        max_examples=None,
        train_fraction=1.0,
    )
    if source == "silver-trees":  # the transfer corpora's training sentences
        silver = load_dataset(pool_config).splits["train"]
        pool = [e.text for e in silver if (e.columns or {}).get("corpus") in TRANSFER_CORPORA]
        what = f"silver-trees training sentences of {', '.join(TRANSFER_CORPORA)}"
    else:  # every item of the corpora with the transfer corpora added that is none of the task's own
        pool = [e.text for split in load_dataset(pool_config).splits.values() for e in split]
        what = f"the {source} items of {', '.join(TRANSFER_CORPORA)} (built beside the task's own corpora)"
    return transfer_pool(pool, own, limit), what


def find_transfer_texts(
    soft: SoftLabels, data: DataConfig, dataset: Dataset, limit: int | None, where: str
) -> list[str]:
    """The set's first ``limit`` transfer texts (None: all), found by key in the task's transfer pool;
    DataError when the pool no longer holds one (the set was made from other data)."""
    wanted = soft.transfer_keys()[:limit]
    if not wanted:
        return []
    by_key = {text_key(t): t for t in transfer_texts(data, dataset)[0]}
    missing = sum(k not in by_key for k in wanted)
    if missing:
        raise DataError(
            f"{where}: {missing:,} of the set's {len(wanted):,} transfer texts are not in this run's transfer pool "
            f"({soft.record.get('transfer')}): it was made from other data; remake it with its record's command"
        )
    return [by_key[k] for k in wanted]


def distillation_loss(student: torch.Tensor, teacher: torch.Tensor, temperature: float) -> torch.Tensor:
    """T²·KL(softmax(teacher/T) ‖ softmax(student/T)), the mean over rows (Hinton et al. 2015's soft term;
    T² keeps its gradient's scale as T changes). ``student``/``teacher``: B×C logits."""
    log_p = F.log_softmax(student / temperature, dim=-1)
    q = F.softmax(teacher / temperature, dim=-1)
    return F.kl_div(log_p, q, reduction="batchmean") * temperature**2
