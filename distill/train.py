"""Training runs: a validated experiment config → a run directory with checkpoints and metrics.

Drives the co-training of one recipe with Lightning. A run directory holds the resolved
``config.yaml``, ``checkpoints/best.ckpt`` (best validation metric) and ``checkpoints/last.ckpt``
(resume point: rewritten at every validation and about four times per epoch in between, so a run killed
mid-epoch resumes there and ends exactly as an uninterrupted one), ``logs/metrics.csv`` (training
curves, kept whole across a resume), ``metrics.json`` (dev and test scores of the best checkpoint, with the
training time) and ``predictions.jsonl`` (the best checkpoint's prediction for every test item,
``distill/predictions.py``). Works on CPU by default and under Lightning DDP unchanged.
"""

from __future__ import annotations

import csv
import math
import time
from dataclasses import dataclass
from pathlib import Path

import lightning as L
import torch
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.strategies import DDPStrategy

from ..core.checkpoints import TrainedModel, encoder_record, load_trained, read_checkpoint
from ..encoder.files import atomic_path, write_json
from ..encoder.masked_words import MASKED_LM
from ..encoder.schema import ConfigError
from ..encoder.subwords import SubwordVocabulary
from ..encoder.vocabulary import word_vocabulary
from .co_training import CoTrainingModule
from .config import ExperimentConfig, TrainingConfig, save_config
from .data.pretrained_encoders import model_folder, model_vocabulary, read_architecture
from .data.static_vectors import fill_static_vectors
from .data_module import SyntaxDataModule
from .evaluate import evaluate_with_outputs
from .masked_lm import WORD_SCORES, MaskedLMModule, masked_word_scores
from .predictions import records_from_outputs, write_predictions
from .quiet import quiet_lightning
from .shipped import resolve_weights
from .starts import check_resumable, load_pretrained, load_pretrained_predictor, predictor_weights


class MidEpochCheckpoint(ModelCheckpoint):
    """Writes ``last.ckpt`` every ``every_n_train_steps`` steps inside an epoch. The epoch's last batch is
    left to the validation checkpoint, so every resume point is either mid-epoch or after validation."""

    def __init__(self, dirpath: Path, every_n_train_steps: int) -> None:
        super().__init__(
            dirpath=dirpath,
            save_top_k=0,
            save_last=True,
            every_n_train_steps=every_n_train_steps,
            enable_version_counter=False,
        )

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs, batch, batch_idx: int
    ) -> None:
        if batch_idx + 1 < trainer.num_training_batches:
            super().on_train_batch_end(trainer, pl_module, outputs, batch, batch_idx)


class RunCurve(CSVLogger):
    """The run's ``logs/metrics.csv``: Lightning's CSV logger, except that a resumed run keeps its curve.
    Lightning deletes the file when a logger opens it, so a run resumed from last.ckpt would lose every row
    before the resume point; this one reads the rows logged before ``resume_step`` first (later ones the
    resumed run logs again) and writes them back ahead of the new ones."""

    def __init__(self, run_dir: Path, resume_step: int | None = None) -> None:
        super().__init__(run_dir, name="logs", version="")
        path = Path(self.log_dir) / "metrics.csv"
        self._earlier: list[dict] = []
        if resume_step is not None and path.exists():
            with open(path, newline="") as fh:  # a line cut short by a kill mid-write has fields missing: dropped
                whole = [row for row in csv.DictReader(fh) if None not in row.values() and row["step"].isdigit()]
            self._earlier = [row for row in whole if int(row["step"]) < resume_step]

    @property
    def experiment(self):
        opened = self._experiment is not None
        writer = super().experiment
        if not opened and self._earlier and isinstance(getattr(writer, "metrics", None), list):
            writer.metrics[:0] = self._earlier  # the first save writes them first, under the union header
            self._earlier = []
        return writer


class FlushCurveAtCheckpoints(L.Callback):
    """Writes the logged rows to ``metrics.csv`` whenever a checkpoint is saved (Lightning flushes every 100
    steps), so a run killed after a checkpoint has its curve on disk up to the step it resumes at."""

    def on_save_checkpoint(self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: dict) -> None:
        if trainer.logger is not None:
            trainer.logger.save()


def steps_per_epoch(t: TrainingConfig, n_examples: int) -> int:
    """Optimiser steps of one epoch over ``n_examples`` (per process under DDP, after Lightning's batch limit)."""
    batches = math.ceil(math.ceil(n_examples / t.batch_size) / t.devices)
    if t.limit_train_batches < 1:
        batches = int(batches * t.limit_train_batches)
    return batches


def mid_epoch_interval(per_epoch: int) -> int:
    """Training steps between mid-epoch saves: a quarter of an epoch, at most 500 steps (≈ 0.1 s per save
    of a default-size model, ≈ 1% of the training time)."""
    return max(1, min(500, per_epoch // 4))


def epochs_for(t: TrainingConfig, per_epoch: int) -> int:
    """The epochs a run trains: ``max_epochs``, raised until they hold ``min_steps`` optimiser steps."""
    if t.min_steps <= 0 or per_epoch <= 0:
        return t.max_epochs
    return max(t.max_epochs, math.ceil(t.min_steps / per_epoch))


def strategy(config: ExperimentConfig):
    """The Lightning strategy of a run. Under DDP, a recipe that leaves weights out of its loss — predictor
    pre-training (no upper layers, no task head) or a predictor whose distance loss is off (λ = 0, the steps
    fed parser distances) — must let DDP find the unused ones, or DDP stops at the first step."""
    t = config.training
    row = config.recipe_row
    if t.strategy == "ddp" and (not row.task or (row.predictor and t.distance_loss_weight == 0)):
        return DDPStrategy(find_unused_parameters=True)
    return t.strategy


def auxiliary_parser(config: ExperimentConfig, init: TrainedModel | None) -> TrainedModel | None:
    """The run whose predictor becomes the auxiliary parser (``training.auxiliary_parser_weight`` > 0): the
    start ``init`` (``training.init_from``), whose predictor reads h_k, beside a model whose own predictor is
    a tower; None when the weight is 0. ConfigError naming what is missing otherwise."""
    if config.training.auxiliary_parser_weight <= 0:
        return None
    predictor = config.predictor_config()
    if predictor is None or not predictor.has_tower or config.encoder.predictor_layer < 1:
        raise ConfigError(
            "training.auxiliary_parser_weight > 0 needs a parser tower (predictor.tower_layers ≥ 1) beside "
            "unbiased layers 1..k (encoder.predictor_layer ≥ 1): the auxiliary parser trains those layers"
        )
    if init is None or init.predictor_config is None or init.predictor_config.has_tower:
        raise ConfigError(
            "training.auxiliary_parser_weight > 0 needs training.init_from with a predictor on h_k (no tower): "
            "that predictor is the auxiliary parser"
        )
    return init


@dataclass(frozen=True)
class PretrainedStart:
    """A pre-trained encoder's folder, its ``config.json`` and its tokenizer as the run's vocabulary."""

    folder: Path
    architecture: dict  # becomes encoder.architecture of the run's config
    vocab: SubwordVocabulary


def pretrained_start(config: ExperimentConfig, cache_dir: str | Path | None = None) -> PretrainedStart | None:
    """The folder ``encoder.pretrained`` names, fetched and checked (``distill.data.pretrained_encoders``);
    None for the project's own encoder."""
    if not config.encoder.pretrained:
        return None
    folder = model_folder(config.encoder.pretrained, cache_dir or config.data.cache_dir, config.data.archive)
    architecture = read_architecture(folder)
    return PretrainedStart(folder, architecture, model_vocabulary(folder, architecture))


def started_module(
    config: ExperimentConfig,
    vocab,
    label_names: list[str],
    dep_labels,
    init: TrainedModel | None = None,
    init_predictor: TrainedModel | None = None,
    pretrained: PretrainedStart | None = None,
) -> CoTrainingModule:
    """The training module of a resolved ``config`` (its encoder sized), its model started from ``init``
    (``training.init_from``: with ``init_predictor`` the encoder alone) or from a pre-trained encoder's
    folder (``pretrained``), its predictor from ``init_predictor`` (``training.init_predictor_from``), and
    the auxiliary parser, if any, from ``init``."""
    module_class = MaskedLMModule if config.data.task == MASKED_LM else CoTrainingModule
    auxiliary = auxiliary_parser(config, init)
    module = module_class(
        config,
        config.encoder,
        config.predictor_config(),
        vocab,
        label_names,
        dep_labels,
        auxiliary=auxiliary.predictor_config if auxiliary else None,
    )
    if pretrained is not None:
        module.model.encoder.load_pretrained(str(pretrained.folder))
    if init is not None:
        load_pretrained(module.model, init.path, init, with_predictor=init_predictor is None)
    if init_predictor is not None:  # a parser tower beside an encoder pre-trained with another predictor
        load_pretrained_predictor(module.model, init_predictor.path, init_predictor, vocab, tuple(dep_labels))
    if auxiliary is not None and module.auxiliary is not None:  # init_from's own predictor, in training only
        module.auxiliary.load_state_dict(predictor_weights(auxiliary))
    return module


def train(
    config: ExperimentConfig,
    out_dir: str | Path,
    resume: bool = False,
    cache_dir: str | Path | None = None,
    progress: bool = True,
    callbacks: list | None = None,
) -> dict:
    """Train one recipe into ``out_dir``; returns the run's metrics (also written to metrics.json).

    The run folder's config.yaml is the config as it ran: the recipe's fixed settings applied and the
    encoder's sizes taken from the vocabulary."""
    quiet_lightning()
    run_dir = Path(out_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    for change in config.fixed_changes():
        print(f"[parserfree train] {change}", flush=True)
    config = config.resolved()
    last = run_dir / "checkpoints" / "last.ckpt"
    resume_step = None
    if resume and last.exists():
        resume_step = check_resumable(last, config.to_dict())  # never continue a run of other settings
    L.seed_everything(config.seed, workers=True, verbose=False)
    if config.threads:
        torch.set_num_threads(config.threads)

    vocab, dep_labels, init, init_predictor = None, None, None, None
    weights_cache = cache_dir or config.data.cache_dir  # where a partial shipped model is completed
    init_path = resolve_weights(config.training.init_from, weights_cache)  # a builtin: name → its checked file
    predictor_path = resolve_weights(config.training.init_predictor_from, weights_cache)
    if predictor_path:
        init_predictor = load_trained(predictor_path)
        vocab, dep_labels = init_predictor.vocab, init_predictor.dep_labels
    if init_path:
        init = load_trained(init_path)
        vocab, dep_labels = init.vocab, init.dep_labels  # the pre-trained predictor's words and labels
    pretrained = pretrained_start(config, cache_dir)
    if pretrained is not None:
        vocab = pretrained.vocab
    data = SyntaxDataModule(config, cache_dir, vocab, progress, dep_labels)
    data.setup()  # parses through the cache once; Lightning's own prepare_data/setup calls then find it done
    if pretrained is not None:
        config.encoder = config.encoder.with_architecture(pretrained.architecture)
    config.encoder = config.model_encoder_config(len(data.vocab), data.vocab.n_features)
    save_config(config, run_dir / "config.yaml")
    module = started_module(config, data.vocab, data.label_names, data.dep_labels, init, init_predictor, pretrained)
    if config.encoder.static_vectors:  # the frozen table, row i = the vector of word i of this vocabulary
        vocab = word_vocabulary(data.vocab, "encoder.static_vectors")
        found = fill_static_vectors(
            module.model.encoder, vocab, config.encoder.static_vectors, data.cache_dir, config.data.archive
        )
        print(
            f"[parserfree train] static vectors {config.encoder.static_vectors}: {found:,} of "
            f"{len(data.vocab) - 2:,} vocabulary words have one",
            flush=True,
        )

    t = config.training
    checkpoints = run_dir / "checkpoints"
    best = ModelCheckpoint(
        dirpath=checkpoints,
        filename="best",
        monitor="val/metric",
        mode="max",
        save_last=True,
        enable_version_counter=False,
    )
    n_train = len(data.splits["train"])
    per_epoch = steps_per_epoch(t, n_train)
    epochs = epochs_for(t, per_epoch)
    if epochs != t.max_epochs:
        print(
            f"[parserfree train] {epochs} epochs, not training.max_epochs={t.max_epochs}: training.min_steps="
            f"{t.min_steps} at {per_epoch:,} steps an epoch ({n_train:,} training examples)",
            flush=True,
        )
    mid_epoch = MidEpochCheckpoint(checkpoints, mid_epoch_interval(per_epoch))
    stop = EarlyStopping(monitor="val/metric", mode="max", patience=t.early_stopping_patience, strict=False)
    trainer = L.Trainer(
        default_root_dir=run_dir,
        max_epochs=epochs,
        max_steps=t.max_steps,
        accelerator=t.accelerator,
        devices=t.devices,
        strategy=strategy(config),
        gradient_clip_val=t.grad_clip or None,
        val_check_interval=t.val_check_interval,
        limit_train_batches=t.limit_train_batches,
        callbacks=[best, mid_epoch, stop, FlushCurveAtCheckpoints(), *(callbacks or [])],
        logger=RunCurve(run_dir, resume_step),
        enable_progress_bar=progress,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        log_every_n_steps=10,
        deterministic="warn",
    )
    start = time.perf_counter()
    trainer.fit(module, datamodule=data, ckpt_path=str(last) if resume and last.exists() else None)
    seconds = time.perf_counter() - start
    if not trainer.is_global_zero:
        return {}
    best_path = Path(best.best_model_path) if best.best_model_path else last
    trained = load_trained(best_path)
    source = config.recipe_row.eval_source
    result = {
        "recipe": config.recipe,
        "best_checkpoint": str(best_path),
        "train_seconds": seconds,
        "epochs": trainer.current_epoch,
        "steps": trainer.global_step,
        "n_train": len(data.splits["train"]),
    }
    result.update(score_splits(trained, data, run_dir, source))
    write_json(run_dir / "metrics.json", result)
    return result


def score_splits(trained: TrainedModel, data: SyntaxDataModule, run_dir: Path, source: str) -> dict:
    """Dev and test metrics of a trained model read with ``source``; the test split's per-item predictions
    go to ``run_dir/predictions.jsonl`` (``distill.predictions``) when the task has labels, a masked language
    model's per-sentence scores to ``run_dir/word_scores.json`` (``distill.masked_lm``)."""
    n_classes = max(2, len(data.label_names))
    result = {}
    for split in ("dev", "test"):
        if not data.splits[split]:
            continue
        if trained.task == MASKED_LM:
            scores = masked_word_scores(trained.model, data.loader(split), source)
            result[split] = {"n_examples": len(data.splits[split]), "source": source, **scores.summary()}
            if split == "test":
                write_json(run_dir / WORD_SCORES, scores.to_dict())
            continue
        result[split], outputs = evaluate_with_outputs(
            trained.model, data.loader(split), trained.task, n_classes, source
        )
        if split == "test" and trained.task != "none" and len(outputs):
            examples = data.examples("test")
            write_predictions(run_dir / "predictions.jsonl", records_from_outputs(examples, outputs, trained.task))
    return result


def serve_trained(
    config: ExperimentConfig,
    source_run: str | Path,
    out_dir: str | Path,
    cache_dir: str | Path | None = None,
    progress: bool = True,
) -> dict:
    """A run of ``config.recipe`` made from a run whose training is exactly the one this recipe would do
    (``recipes.training_rule``: e.g. ``parser_free`` with ``teacher_forcing_end`` = 1 and its twin): the
    source's best weights, labelled with this recipe and config, scored with this recipe's inference
    source. The best epoch is the one the source chose on its own dev metric. Saves a training."""
    run_dir, source = Path(out_dir), Path(source_run)
    run_dir.mkdir(parents=True, exist_ok=True)
    config = config.resolved()
    ckpt = read_checkpoint(source / "checkpoints" / "best.ckpt")
    meta = ckpt["parserfree"]
    source_encoder = encoder_record(meta)
    config.encoder = config.encoder.with_architecture(source_encoder.get("architecture"))
    config.encoder = config.model_encoder_config(source_encoder["vocab_size"], source_encoder["n_features"])
    meta["experiment"], meta["recipe"] = config.to_dict(), config.recipe
    best = run_dir / "checkpoints" / "best.ckpt"
    best.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(best) as tmp:
        torch.save(ckpt, tmp)
    save_config(config, run_dir / "config.yaml")
    trained = load_trained(best)
    data = SyntaxDataModule(config, cache_dir, trained.vocab, progress, trained.dep_labels)
    data.setup()
    result = {
        "recipe": config.recipe,
        "best_checkpoint": str(best),
        "trained_as": str(source),
        "train_seconds": 0.0,
        "n_train": len(data.splits["train"]),
    }
    result.update(score_splits(trained, data, run_dir, config.recipe_row.eval_source))
    write_json(run_dir / "metrics.json", result)
    return result
