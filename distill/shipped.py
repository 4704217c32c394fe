"""Shipped weights: pre-trained models that come with parserfree, named ``builtin:<name>``.

Each lives in the repository's ``models/<name>/`` folder (installed as the package data of
``parserfree.models``) as two files: ``model.ckpt``, a parserfree checkpoint whose tensors are stored in
float16 (``load_trained`` reads it as any other: the weights are cast to float32 when loaded), and
``record.json``, what made it — the command, the commit, the training data's digest, its scores and the
checkpoint's sha256. ``shipped_checkpoint`` checks that sha256 before handing the file out, so a damaged or
swapped file stops with one line instead of starting a model from the wrong weights. ``ship`` writes both
from a finished training run and refuses to replace an artefact whose record is better (``better``).
``training.init_from`` and ``run.predictor_start`` take a ``builtin:`` name wherever they take a checkpoint path
(``resolve_weights``); docs/parser.md says how the shipped parser was made and how to rebuild it.

A checkpoint of a pre-trained encoder (``encoder.pretrained``) ships partial: only the encoder weights its
training changed (``changed_weights``: a predictor pre-training with ``training.freeze_embeddings`` changes
layers 1..k alone) and everything else; its record names the encoder (``completed_from``), and
``shipped_checkpoint`` completes it once from that encoder's own weights into ``<cache>/shipped/``.
"""

from __future__ import annotations

import datetime
import json
from importlib import resources
from pathlib import Path

import torch

from ..core.checkpoints import CheckpointError, read_checkpoint
from ..encoder.files import atomic_path, sha256_file, sha256_mismatch, write_json, write_text_atomic

SCHEME = "builtin:"
RECORD = "record.json"
WEIGHTS = "model.ckpt"
SOFT_LABELS = "soft_labels.npz"  # a shipped soft-label set's labels (distill/soft_labels.py)
RECORD_FORMAT = 1
MAX_FILE_BYTES = 25 * 2**20  # one shipped file at most (the repository stays lean)
COMPLETED_FROM = "completed_from"  # a partial record's key: the pre-trained encoder that gives the rest
ENCODER = "model.encoder."  # the encoder's weights in a checkpoint's state dict
# the test scores that decide whether a new model replaces the shipped one, in order, each with its better
# direction: a parser's attachment scores (higher), a masked-LM encoder's perplexity (lower)
RANKING = (("uas", 1), ("las", 1), ("uuas", 1), ("perplexity", -1))


def models_dir() -> Path:
    """The folder of the shipped models: the data of ``parserfree.models`` — in a development install the
    repository's ``models/`` itself (the editable install's links are followed), so ``ship`` writes there."""
    return Path(str(resources.files("parserfree.models") / "__init__.py")).resolve().parent


def is_shipped(ref: str | None) -> bool:
    """``ref`` names a shipped model (``builtin:<name>``)."""
    return isinstance(ref, str) and ref.startswith(SCHEME)


def shipped_names(root: Path | None = None) -> list[str]:
    """The names of the shipped models (folders with a record, not a shipped soft-label set's:
    ``distill/soft_labels.py``)."""
    root = root or models_dir()
    return sorted(p.parent.name for p in root.glob(f"*/{RECORD}") if not (p.parent / SOFT_LABELS).exists())


def read_record(name: str, root: Path | None = None) -> dict:
    """A shipped model's record; CheckpointError naming the known ones when there is none."""
    path = (root or models_dir()) / name / RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(
            f"{SCHEME}{name}: no such shipped model (shipped: {', '.join(shipped_names(root)) or 'none'})"
        ) from None
    except (OSError, ValueError) as error:
        raise CheckpointError(f"{path}: unreadable record of a shipped model ({error})") from None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT or "sha256" not in record:
        raise CheckpointError(f"{path}: not a shipped model's record of format {RECORD_FORMAT}")
    return record


def shipped_checkpoint(name: str, root: Path | None = None, cache_dir: str | Path | None = None) -> Path:
    """The checkpoint of shipped model ``name``, after checking its sha256 against the record; a partial one
    completed from its pre-trained encoder (``completed``, in ``cache_dir``)."""
    record, path = read_record(name, root), shipped_file(name, root)
    return completed(path, record, cache_dir) if record.get(COMPLETED_FROM) else path


def shipped_file(name: str, root: Path | None = None) -> Path:
    """The file of shipped model ``name`` as it ships (a partial one not completed), its sha256 checked."""
    record = read_record(name, root)
    path = (root or models_dir()) / name / WEIGHTS
    if not path.is_file():
        raise CheckpointError(f"{path}: the shipped model {SCHEME}{name} has a record but no weights")
    if mismatch := sha256_mismatch(path, record["sha256"]):
        raise CheckpointError(
            f"{path}: {mismatch} of {SCHEME}{name} (damaged or replaced by hand); restore it with git checkout "
            "or rebuild it with the record's command"
        )
    return path


def pretrained_start_weights(checkpoint: dict, cache_dir: str | Path | None = None) -> dict:
    """The encoder weights a checkpoint of a pre-trained encoder started from (the model folder's, a fresh
    bias table), named as in the checkpoint's state dict."""
    from ..core.checkpoints import checkpoint_configs
    from ..encoder.pretrained import PretrainedEncoder
    from .data.pretrained_encoders import model_folder

    config, _ = checkpoint_configs(checkpoint["parserfree"])
    encoder = PretrainedEncoder(config)
    encoder.load_pretrained(str(model_folder(str(config.pretrained), cache_dir)))
    return {ENCODER + k: v for k, v in encoder.state_dict().items()}


def changed_weights(checkpoint: dict, cache_dir: str | Path | None = None) -> dict:
    """A checkpoint's state dict without the encoder weights that equal its pre-trained start (all of them
    when the encoder is the project's own)."""
    state = checkpoint["state_dict"]
    if not checkpoint["parserfree"]["encoder"].get("pretrained"):
        return dict(state)
    start = pretrained_start_weights(checkpoint, cache_dir)
    return {k: v for k, v in state.items() if not (k in start and torch.equal(v, start[k].to(v.dtype)))}


def completed(path: Path, record: dict, cache_dir: str | Path | None = None) -> Path:
    """A partial shipped checkpoint with the rest of its encoder from ``record["completed_from"]`` (that
    encoder's own weights as they are, in float32), written once to ``<cache>/shipped/<name>-<sha256>.ckpt``
    (atomically, so an interrupted write is never read)."""
    from .data.archives import default_cache_dir

    out = Path(cache_dir or default_cache_dir()) / "shipped" / f"{path.parent.name}-{record['sha256'][:16]}.ckpt"
    if out.is_file():
        return out
    ckpt = read_checkpoint(path)
    state = {**pretrained_start_weights(ckpt, cache_dir), **ckpt["state_dict"]}
    save_weights({"parserfree": ckpt["parserfree"], "state_dict": state}, out)
    return out


def save_weights(ckpt: dict, out: Path) -> None:
    """``torch.save`` to ``out`` through a fixed temporary name: torch.save names the archive's records after
    the file, so the same weights give the same bytes (and sha256) in every process."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out, out.with_name(out.name + ".tmp")) as tmp:
        torch.save(ckpt, tmp)


def resolve_weights(ref: str | None, cache_dir: str | Path | None = None) -> str | None:
    """A checkpoint reference as a path: ``builtin:<name>`` → its checked (and completed) file; anything
    else unchanged."""
    if not is_shipped(ref):
        return ref
    assert ref is not None
    return str(shipped_checkpoint(ref.removeprefix(SCHEME), cache_dir=cache_dir))


def half_precision(checkpoint: Path, out: Path, cache_dir: str | Path | None = None) -> str | None:
    """``checkpoint``'s changed weights (``changed_weights``) and parserfree section only, floating tensors in
    float16, written to ``out``; the pre-trained encoder that completes it when that is partial, else None."""
    ckpt = read_checkpoint(checkpoint)
    changed = changed_weights(ckpt, cache_dir)
    state = {k: v.half() if v.is_floating_point() else v for k, v in changed.items()}
    save_weights({"parserfree": ckpt["parserfree"], "state_dict": state}, out)
    return ckpt["parserfree"]["encoder"]["pretrained"] if len(changed) < len(ckpt["state_dict"]) else None


def better(new: dict, old: dict | None) -> bool:
    """A record replaces ``old`` when its test scores are better in ``RANKING`` order (the first that differs)."""
    if old is None:
        return True
    for key, sign in RANKING:
        a, b = new.get("scores", {}).get("test", {}).get(key), old.get("scores", {}).get("test", {}).get(key)
        if a is None or b is None or a == b:
            continue
        return sign * a > sign * b
    return False


def ship(
    checkpoint: Path,
    name: str,
    command: str,
    scores: dict,
    data: dict | str,
    extra: dict | None = None,
    root: Path | None = None,
    force: bool = False,
    commit: str | None = None,
    cache_dir: str | Path | None = None,
) -> dict:
    """Ship ``checkpoint`` as ``builtin:<name>``: its float16 copy and a record of the command, the commit, the
    training data's digest and the scores (``commit``: the code it was made with, the caller's to say). Refuses (CheckpointError) when the shipped record is better (unless
    the weights are the very same: then the record is updated, e.g. with a bench's scores) or a file would
    exceed ``MAX_FILE_BYTES``, unless ``force``. A checkpoint of a pre-trained encoder ships partial (its
    changed weights; the encoder read from ``cache_dir``). Returns the record."""
    root = root or models_dir()
    folder = root / name
    try:
        old = read_record(name, root)
    except CheckpointError:
        old = None
    record = {
        "format": RECORD_FORMAT,
        "name": f"{SCHEME}{name}",
        "command": command,
        "commit": commit,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "trained_from": str(checkpoint),
        "data": data,
        "scores": scores,
        **(extra or {}),
    }
    staged = folder / (WEIGHTS + ".new")
    if completed_from := half_precision(checkpoint, staged, cache_dir):
        record[COMPLETED_FROM] = completed_from
    size, sha = staged.stat().st_size, sha256_file(staged)
    same_weights = old is not None and old.get("sha256") == sha  # the same weights: the record is brought up to date
    refusal = None
    if not force and not same_weights and not better(record, old):
        assert old is not None
        refusal = (
            f"{folder / RECORD}: the shipped {SCHEME}{name} scores {old['scores'].get('test')} on test, "
            f"this one {scores.get('test')}: not better, not replaced (--force replaces it anyway)"
        )
    elif size > MAX_FILE_BYTES and not force:
        refusal = f"{checkpoint}: its float16 copy is {size / 2**20:.1f} MB, over the 25 MB a shipped file may take"
    if refusal:
        staged.unlink()
        raise CheckpointError(refusal)
    record["sha256"], record["bytes"] = sha, size
    staged.replace(folder / WEIGHTS)
    write_json(folder / RECORD, record)
    return record


def write_readme(root: Path | None = None) -> None:
    """``models/README.md``: one line per shipped model from its record (generated, not edited by hand)."""
    root = root or models_dir()
    lines = [
        "# Shipped models",
        "",
        "Generated by `parserfree ship` from each folder's `record.json`; how they are made and used: "
        "docs/parser.md (the parser), docs/language_model.md (the masked-LM encoders).",
        "",
        "| name | test UUAS | test UAS | test LAS | test perplexity | MB | command |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name in shipped_names(root):
        r = read_record(name, root)
        test = r.get("scores", {}).get("test", {})
        keys = ("uuas", "uas", "las", "perplexity")
        cells = [f"{test[k]:.1f}" if isinstance(test.get(k), int | float) else "–" for k in keys]
        lines.append(f"| `{r['name']}` | {' | '.join(cells)} | {r['bytes'] / 2**20:.1f} | `{r['command']}` |")
    sets = sorted(root.glob(f"*/{SOFT_LABELS}"))
    if sets:
        lines += [
            "",
            'Soft-label sets (a teacher\'s logits for a student: docs/usage.md, "A student"):',
            "",
            "| name | teacher | teacher dev / test | training texts | transfer texts | MB | command |",
            "|---|---|---:|---:|---:|---:|---|",
        ]
    for labels in sets:
        r = json.loads((labels.parent / RECORD).read_text(encoding="utf-8"))
        t = r.get("teacher", {})
        scores = " / ".join(
            f"{t[k]:.2f}" if isinstance(t.get(k), int | float) else "–" for k in ("dev_metric", "test_metric")
        )
        lines.append(
            f"| `{labels.parent.name}` | {t.get('encoder')} {t.get('recipe')} | {scores} | {r.get('n_train', 0):,} | "
            f"{r.get('n_transfer', 0):,} | {labels.stat().st_size / 2**20:.1f} | `{r.get('command')}` |"
        )
    write_text_atomic(root / "README.md", "\n".join(lines) + "\n")
