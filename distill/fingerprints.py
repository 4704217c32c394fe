"""Fingerprints: what a result was built from, so a changed setting or input is never silently reused.

A fingerprint is a plain nested dict: the settings a result depends on (a section of the resolved
config) and the digests of its inputs (sha256 of a data file or an upstream checkpoint, a bundle's
manifest digest). A stage stores its fingerprint beside its output and compares it on the next run;
``changes`` lists the differences as ``key old → new`` lines so that the message says exactly what
changed. A built-in dataset is identified by its registry entry's digest (``distill/data/builtin.py``: the
archive's sha256 for a corpus read straight from one; for ``agreement`` and ``silver-trees`` the digests
of their texts, the spaCy model and the versions of the code that builds them), a file by its sha256.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..encoder.files import sha256_file


def flatten(tree: dict, prefix: str = "") -> dict[str, Any]:
    """Nested dict → ``{"a.b.c": value}`` (lists and scalars are leaves)."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            out.update(flatten(value, name))
        else:
            out[name] = value
    return out


def without(tree: dict, keys: tuple[str, ...]) -> dict:
    """A deep copy of ``tree`` without the dotted ``keys`` (missing ones are ignored)."""
    out = json.loads(json.dumps(tree))
    for key in keys:
        node = out
        *parents, last = key.split(".")
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(last, None)
    return out


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return value[:12]  # a sha256: the first 12 digits tell two apart
    return text if len(text) <= 40 else text[:37] + "…"


# settings added after records (stage records, checkpoints) were written, with the value that computes what
# those did: a record is not made stale by a setting that did not exist when it was written and is at that value
ADDED_SETTINGS = {
    "data.agreement_split": "balanced",
    "data.split_column": None,
    "encoder.static_vectors": None,
    "encoder.ngram_buckets": 0,
    "encoder.pretrained": None,
    "encoder.bias.prior_slope": 0.0,
    "encoder.bias.per_layer": False,
    "training.init_predictor_from": None,
    "training.auxiliary_parser_weight": 0.0,
    "training.distance_grad_to_encoder": True,
    "training.grad_clip_predictor_apart": False,
    "training.freeze_embeddings": False,
    "training.ngram_lr_multiplier": 3.0,  # any value computes what ran before: the term was off
    "training.predictor_lr_multiplier": 1.0,
}


def without_added_at_their_old_value(settings: dict) -> dict:
    """``settings`` without the ``ADDED_SETTINGS`` that are at the value computing what came before them."""
    flat = flatten(settings)
    return without(settings, tuple(key for key, old in ADDED_SETTINGS.items() if flat.get(key) == old))


def changes(old: dict, new: dict) -> list[str]:
    """The differences between two fingerprints, one ``key old → new`` string per changed key (sorted)."""
    a, b = flatten(old), flatten(new)
    lines = []
    for key in sorted(set(a) | set(b)):
        if key not in a:
            lines.append(f"{key} (new) {_short(b[key])}")
        elif key not in b:
            lines.append(f"{key} {_short(a[key])} (gone)")
        elif a[key] != b[key]:
            lines.append(f"{key} {_short(a[key])} → {_short(b[key])}")
    return lines


def summary(lines: list[str], limit: int = 3) -> str:
    """The first ``limit`` changes joined, with a count of the rest."""
    shown = "; ".join(lines[:limit])
    return shown + (f" (and {len(lines) - limit} more)" if len(lines) > limit else "")


def digest(value: Any) -> str:
    """sha256 of a JSON-able value's canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_digest(path: str | Path | None) -> str | None:
    """sha256 of a file; ``"missing"`` when it does not exist, None for no path."""
    if path is None:
        return None
    p = Path(path)
    return sha256_file(p) if p.is_file() else "missing"


def data_digest(data: Any) -> dict | str:
    """What a dataset's content is (``data``: a ``DataConfig``): a built-in dataset by its registry digest
    (read from its sources without building it), a file by its sha256, a list of datasets name by name, a
    file per split split by split (so a changed dev file changes it too)."""
    import dataclasses

    from .data.builtin import BUILTIN
    from .data.datasets import split_files

    if isinstance(data.dataset, list):
        return {name: data_digest(dataclasses.replace(data, dataset=name)) for name in data.dataset}
    if isinstance(data.dataset, dict):
        return {split: file_digest(path) or "missing" for split, path in split_files(data.dataset).items()}
    entry = BUILTIN.get(data.dataset)
    if entry is not None:
        return entry.digest(data)
    return file_digest(data.dataset) or "missing"
