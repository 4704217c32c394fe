"""The teacher's labels on a task's training texts and transfer pool: what ``parserfree soft-labels`` runs.

A teacher (a trained checkpoint of the task: in the project's use the base size's best row on dev) labels
the task's training texts and a transfer set of unlabelled in-domain text with its logits
(``distill.soft_labels``, which says what the transfer pool of a task holds). No dev or test text is ever
labelled (``soft_labels.check_fits`` refuses a set that holds one).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..core.checkpoints import TrainedModel, load_trained
from ..core.recipes import get_recipe
from ..encoder.files import sha256_file
from ..encoder.text import normalise_text
from .config import ExperimentConfig
from .data.datasets import Dataset, Example, load_dataset
from .data.readers import DataError
from .data_module import SyntaxDataModule, truncate
from .evaluate import loader_outputs
from .parsing import parse_dataset
from .soft_labels import SoftLabels, check_fits, texts_digest, transfer_texts, write_soft_labels


def check_teacher(teacher: TrainedModel, dataset: Dataset, where: str) -> None:
    """Refuse, in one line, a teacher of another dataset, task or label set than the student's."""
    taught = teacher.experiment.get("data", {}).get("dataset")
    if taught != dataset.name:
        raise DataError(f"{where}: a teacher of dataset '{taught}', not the config's '{dataset.name}'")
    if teacher.task not in ("binary", "classification") or list(teacher.label_names) != list(dataset.label_names):
        raise DataError(
            f"{where}: a teacher of task '{teacher.task}' over {teacher.label_names}, not of the config's "
            f"'{dataset.task}' over {dataset.label_names}"
        )


def teacher_logits(
    teacher: TrainedModel, config: ExperimentConfig, texts: list[str], cache_dir: str | Path | None, progress: bool
) -> np.ndarray:
    """The teacher's task logits on ``texts`` (N×C), each read as the teacher's recipe reads at inference
    (its eval source: parser distances for a parser-fed row, its own predictor's for parser-free)."""
    data = SyntaxDataModule(config, cache_dir, teacher.vocab, progress, teacher.dep_labels)
    examples = Dataset(
        "teacher", "binary", {"train": [Example(t, 0, "soft-labels") for t in texts], "dev": [], "test": []}, []
    )
    parsed, _ = parse_dataset(examples, config.parse, data.cache_dir, progress=progress)
    max_len = teacher.encoder_config.max_len
    data.max_len = max_len
    data.splits = {"train": [truncate(p, max_len, teacher.dep_labels) for p in parsed["train"]], "dev": [], "test": []}
    outputs, _ = loader_outputs(
        teacher.model, data.loader("train", batch_size=64), get_recipe(teacher.recipe).eval_source
    )
    return np.asarray(outputs, dtype=np.float32).reshape(len(texts), -1)


def choose_teacher(path: str | Path) -> tuple[Path, dict[str, float]]:
    """The teacher's checkpoint: ``path`` itself, or in a job's task folder (rows with a ``metrics.json``)
    the best checkpoint of the row best on dev; with every row's dev metric it was chosen from."""
    path = Path(path)
    if not path.is_dir():
        return path, {}
    dev = {}
    for run_dir in sorted(p.parent for p in path.glob("*/metrics.json")):
        found = _run_metrics(run_dir)
        if isinstance(found.get("dev"), dict) and found["dev"].get("metric") is not None:
            dev[run_dir.name] = (float(found["dev"]["metric"]), Path(found["best_checkpoint"]))
    if not dev:
        raise DataError(f"{path}: no row with a dev metric here (a task folder of parserfree run, or a checkpoint)")
    row = max(dev, key=lambda r: dev[r][0])  # ties: the first in name order
    return dev[row][1], {r: round(m, 4) for r, (m, _) in dev.items()}


def make_soft_labels(
    teacher_ref: str | Path,
    config: ExperimentConfig,
    out: str | Path,
    command: str,
    cache_dir: str | Path | None = None,
    transfer_limit: int | None = None,
    progress: bool = True,
) -> SoftLabels:
    """Label the task's training texts and transfer set with the teacher (a checkpoint, or a task folder:
    ``choose_teacher``) and write the set to ``out`` (nothing is written before every check has passed)."""
    teacher_path, chosen_from = choose_teacher(teacher_ref)
    teacher = load_trained(teacher_path)
    dataset = load_dataset(config.data)
    check_teacher(teacher, dataset, str(teacher_path))
    train = list(dict.fromkeys(normalise_text(e.text) for e in dataset.splits["train"]))
    transfer, what = transfer_texts(config.data, dataset, transfer_limit)
    texts = train + transfer
    held_out = dataset.texts("dev", "test")
    logits = teacher_logits(teacher, config, texts, cache_dir, progress)
    if not np.isfinite(logits).all():
        raise DataError(f"{teacher_path}: the teacher gave a NaN or infinite logit; nothing written")
    scores = _teacher_scores(Path(teacher_path))
    record = {
        "command": command,
        "teacher": {
            "checkpoint": "/".join(Path(teacher_path).parts[-4:]),  # task/row/checkpoints/best.ckpt
            "sha256": sha256_file(teacher_path),
            "recipe": teacher.recipe,
            "encoder": teacher.encoder_config.pretrained or f"{teacher.encoder_config.d_model}-wide",
            **scores,
            **({"chosen_from_dev": chosen_from} if chosen_from else {}),
        },
        "dataset": dataset.name,
        "task": dataset.task,
        "label_names": list(dataset.label_names),
        "train_digest": texts_digest(train),
        "n_train": len(train),
        "n_transfer": len(transfer),
        "transfer_digest": texts_digest(transfer),
        "transfer": what,
    }
    parts = ["train"] * len(train) + ["transfer"] * len(transfer)
    soft = SoftLabels.of_texts(texts, logits.astype(np.float16), parts, record)
    check_fits(soft, dataset.name, dataset.label_names, train, held_out, str(out))  # never a dev or test text
    write_soft_labels(out, soft)
    return soft


def _teacher_scores(checkpoint: Path) -> dict:
    """The teacher run's dev and test metric (its metrics.json beside ``checkpoints/``), where there is one."""
    found = _run_metrics(checkpoint.parent.parent)
    return {f"{s}_metric": found[s].get("metric") for s in ("dev", "test") if isinstance(found.get(s), dict)}


def _run_metrics(run_dir: Path) -> dict:
    """A run folder's metrics.json, or {} where it has none."""
    metrics = run_dir / "metrics.json"
    return json.loads(metrics.read_text(encoding="utf-8")) if metrics.is_file() else {}
