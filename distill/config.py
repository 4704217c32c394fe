"""Experiment configuration: one YAML file fully describes one run.

A config names the recipe (a row of ``core.recipes``), the data, the parser, the vocabulary, the
encoder, the distance predictor, the training and the main job; every section is a typed dataclass of
the one schema (``encoder.schema``). Loading validates every key: unknown or mistyped keys and impossible values stop
with an error naming the key (``training.lr='fast' must be a number``). ``--set section.key=value``
overrides a loaded file; the resolved config is saved into every run directory.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..core.recipes import RECIPES, Recipe, comparison_roles, exportable_recipes, get_recipe
from ..encoder.architecture import sizes_of
from ..encoder.config import EncoderConfig
from ..encoder.files import write_text_atomic
from ..encoder.schema import ConfigError, build_dataclass, check_choice, check_int, check_number, to_settings
from ..predictor.config import PredictorConfig
from ..predictor.sources import DistanceSource
from .data.datasets import DataConfig
from .parsing import ParseConfig
from .sizes import size_settings
from .yaml_files import apply_overrides, read_yaml, set_key

__all__ = [
    "ConfigError",
    "ExperimentConfig",
    "RunConfig",
    "TrainingConfig",
    "VocabConfig",
    "config_from_record",
    "load_config",
    "save_config",
]


@dataclass
class VocabConfig:
    """Frequency-cut word vocabulary built from the training split, plus hashed sub-word features."""

    min_freq: int = 2
    """Words seen fewer times in the training split become <unk>."""
    max_size: int | None = 30000
    """At most this many entries, <pad> and <unk> included, the most frequent words first (null: no limit)."""
    n_feature_buckets: int = 4096
    """Hash buckets of the prefix, suffix and shape features (must equal encoder.n_feature_buckets)."""

    def validate(self, section: str = "vocab") -> None:
        """Raise ConfigError naming the first impossible field."""
        check_int(f"{section}.min_freq", self.min_freq, 1)
        if self.max_size is not None:
            check_int(f"{section}.max_size", self.max_size, 2)
        check_int(f"{section}.n_feature_buckets", self.n_feature_buckets, 2)


@dataclass
class TrainingConfig:
    """Optimisation and schedule of the co-training (Adam + warm-up + inverse-sqrt decay)."""

    max_epochs: int = 5
    """Passes over the training split."""
    max_steps: int = -1
    """Stop after this many optimiser steps (-1: no limit beyond max_epochs)."""
    min_steps: int = 0
    """Raise max_epochs until training takes at least this many optimiser steps (0: never), so a small training
    split gets as many updates as the task's own; early stopping may still end it sooner."""
    batch_size: int = 32
    """Examples per batch (per device)."""
    lr: float = 1e-3
    """Peak learning rate of AdamW (after the warm-up; inverse-square-root decay after it)."""
    weight_decay: float = 0.01
    """AdamW weight decay."""
    warmup_steps: int = 200
    """Steps of linear learning-rate warm-up."""
    bias_lr_multiplier: float = 30.0
    """Learning-rate multiplier of the bias table: the zero-initialised table learns its shape within a few epochs."""
    ngram_lr_multiplier: float = 3.0
    """Learning-rate multiplier of the task head's n-gram table (encoder.ngram_buckets), whose rows learn only in the batches that hold their word or pair (chosen on sentiment dev over 1, 3, 10, 30)."""
    predictor_lr_multiplier: float = 1.0
    """Learning-rate multiplier of the predictor (its tower, arc and label scorers): below 1, a shipped parser
    fine-tuned with the task (distance_loss_weight > 0) moves from its start gently."""
    freeze_embeddings: bool = False
    """The encoder's embeddings (the tables of h_0) stay as they start: with a pre-trained encoder, a predictor
    pre-training then changes only layers 1..k and the predictor, all that ``parserfree ship`` keeps of it."""
    grad_clip: float = 1.0
    """Clip the gradient norm to this (0: no clipping)."""
    grad_clip_predictor_apart: bool = False
    """With a task and a predictor: clip the predictor's own weights (tower or norm, arc and label scorers) on their
    own gradient norm and the rest (encoder, task head, auxiliary parser) on its own, so the predictor's gradients
    never shrink the task's step; false: one norm over every parameter (Lightning's clip). Without a task or a
    predictor it changes nothing."""
    distance_loss_weight: float = 1.0
    """λ in loss = task loss + λ · predictor loss; 0: the (pre-trained) predictor stays as it is and runs in
    training only where the biased layers read D̂."""
    auxiliary_parser_weight: float = 0.0
    """With a parser tower: init_from's own predictor (it reads h_k) is kept beside the model in training only, and its loss at this weight trains layers 1..k as the distance loss does without a tower; it is in no graph. 0: off."""
    teacher_forcing_fraction: float = 0.5
    """p(parser distances) decays from 1 to teacher_forcing_end over this share of training."""
    teacher_forcing_end: float = 1.0
    """p at the end: 1 = the biased layers always read the parser's D in training (D̂ at inference only),
    0 = only D̂ at the end."""
    task_grad_to_predictor: bool = False
    """The task loss reaches the predictor through D̂ (only in batches that read D̂: needs teacher_forcing_end < 1)."""
    distance_grad_to_encoder: bool = True
    """The predictor's loss trains the shared embeddings and layers 1..k it reads as well as the predictor's own
    weights; false: only the predictor's own (norm, scorers, tower), so the layers the task reads learn from
    the task alone."""
    early_stopping_patience: int = 3
    """Stop after this many validations without a better dev metric."""
    val_check_interval: float = 1.0
    """Validate every this share of an epoch (Lightning's val_check_interval)."""
    limit_train_batches: float = 1.0
    """Train on this share of the batches of each epoch (Lightning's limit_train_batches)."""
    num_workers: int = 0
    """Data-loader worker processes."""
    accelerator: str = "cpu"
    """Lightning accelerator (cpu, gpu, auto)."""
    devices: int = 1
    """Devices or processes (e.g. 2 with strategy ddp)."""
    strategy: str = "auto"
    """Lightning strategy (auto, ddp)."""
    init_from: str | None = None
    """A pretrain_predictor checkpoint whose embeddings, layers 1..k and predictor start this run (a path, or a shipped model: builtin:parser-en)."""
    init_predictor_from: str | None = None
    """A parser tower (path or builtin: name) whose predictor starts this run instead of init_from's; init_from then gives the encoder alone, and both must share the vocabulary and labels."""

    soft_labels: str | None = None
    """A teacher's soft labels (``parserfree soft-labels``: a folder, builtin:soft-labels-<dataset>, or auto: the
    shipped set of this run's dataset) that this run also learns from, on its training texts and on the set's
    transfer texts (docs/usage.md, "A student"). null: gold labels only."""
    soft_label_weight: float = 0.5
    """α in task loss = (1 − α) · gold cross-entropy + α · T² · KL(teacher ‖ student) at temperature T (with
    soft_labels; a transfer text has the soft term only)."""
    soft_label_temperature: float = 2.0
    """T, the temperature both distributions of the soft term are read at."""
    transfer_limit: int | None = None
    """Train on at most this many of the soft-label set's transfer texts (its first ones; null: all)."""

    def validate(self, section: str = "training") -> None:
        """Raise ConfigError naming the first impossible field."""
        check_number(f"{section}.soft_label_weight", self.soft_label_weight, low=0, high=1)
        check_number(f"{section}.soft_label_temperature", self.soft_label_temperature, low=0, low_open=True)
        if self.transfer_limit is not None:
            check_int(f"{section}.transfer_limit", self.transfer_limit, 0)
        if self.soft_labels is not None and (not isinstance(self.soft_labels, str) or not self.soft_labels.strip()):
            raise ConfigError(f"{section}.soft_labels={self.soft_labels!r} must name a soft-label set (null: none)")
        for name in ("max_epochs", "batch_size", "devices"):
            check_int(f"{section}.{name}", getattr(self, name), 1)
        check_int(f"{section}.min_steps", self.min_steps, 0)
        for name in ("lr", "predictor_lr_multiplier"):
            check_number(f"{section}.{name}", getattr(self, name), low=0, low_open=True)
        for name in (
            "weight_decay",
            "bias_lr_multiplier",
            "ngram_lr_multiplier",
            "grad_clip",
            "distance_loss_weight",
            "auxiliary_parser_weight",
            "warmup_steps",
        ):
            check_number(f"{section}.{name}", getattr(self, name), low=0)
        check_number(f"{section}.teacher_forcing_fraction", self.teacher_forcing_fraction, low=0, high=1)
        check_number(f"{section}.teacher_forcing_end", self.teacher_forcing_end, low=0, high=1)


@dataclass
class RunConfig:
    """The main job (``parserfree run``): which recipes to train, whether to pre-train the predictor on
    the text of all domains first, and what to compare on."""

    recipes: list[str] = field(default_factory=lambda: ["no_syntax", "locality", "parser_fed_twin", "parser_free"])
    """The recipes the main job trains and compares (like for like; add parser_fed for the published method)."""
    pretrain_datasets: list[str] = field(default_factory=lambda: ["silver-trees"])
    """Text with trees to pre-train layers 1..k and the predictor on first (silver-trees: every built-in
    sentence, held-out text left out)."""
    pretrain_epochs: int = 3
    """Epochs of that pre-training (0: none)."""
    pretrain_fraction: float = 1.0
    """Share of the pre-training text's training sentences that pre-training reads (the main job's budget)."""
    pretrain_predictor: dict[str, Any] = field(default_factory=dict)
    """Predictor settings of that pre-training where they differ from the task's (empty: the task's predictor).
    A graft (training.init_predictor_from: a shipped tower) pre-trains the predictor on h_k that its encoder and
    auxiliary parser start from: {tower_layers: 0} (docs/usage.md, "A parser tower beside a pre-trained encoder")."""
    predictor_start: str = "auto"
    """Where the rows' predictor starts: auto (the best cached one of these settings — see
    `parserfree pretrain` — else train one), train (the one of exactly these settings), a checkpoint path, or
    a shipped model (builtin:parser-en; nothing is pre-trained)."""
    encoder_starts: dict[str, str] = field(default_factory=dict)
    """Per recipe, a masked-LM encoder of ours it starts from instead (training.init_from: the whole encoder and
    its predictor; a checkpoint path or builtin:<name>, e.g. parser_free: builtin:encoder-en-parser_fed_twin;
    docs/language_model.md); recipes not named start from run.predictor_start, names of recipes the run does not
    train are unused."""
    compare_datasets: list[str] = field(
        default_factory=lambda: ["vader-movies", "vader-nyt", "vader-amazon", "vader-tweets"]
    )
    """Datasets the comparison runs on; the first is the headline."""
    compare_max_examples: int | None = None
    """Compare on at most this many examples per dataset (null: all; for quick runs)."""
    latency_examples: int = 200
    """Examples timed one at a time for the latency at batch 1."""

    def validate(self, section: str = "run") -> None:
        """Raise ConfigError naming the first impossible field."""
        for i, name in enumerate(self.recipes):
            check_choice(f"{section}.recipes[{i}]", name, exportable_recipes())
        roles = comparison_roles(self.recipes)
        if roles.parser_free is None or roles.reference is None:
            raise ConfigError(
                f"{section}.recipes must include a parser-free recipe and a parser-fed one "
                "(the comparison needs both), e.g. parser_free and parser_fed_twin"
            )
        check_int(f"{section}.pretrain_epochs", self.pretrain_epochs, 0)
        check_number(f"{section}.pretrain_fraction", self.pretrain_fraction, low=0, high=1)
        if self.pretrain_fraction == 0:
            raise ConfigError(f"{section}.pretrain_fraction=0 must be in (0, 1]")
        if not isinstance(self.pretrain_predictor, dict):
            raise ConfigError(
                f"{section}.pretrain_predictor must map predictor settings to values, e.g. {{tower_layers: 0}}"
            )
        if not isinstance(self.predictor_start, str) or not self.predictor_start:
            raise ConfigError(
                f"{section}.predictor_start={self.predictor_start!r} must be 'auto', 'train', a checkpoint path or builtin:<name>"
            )
        if not isinstance(self.encoder_starts, dict):
            raise ConfigError(f"{section}.encoder_starts must map recipes to checkpoints, e.g. {{no_syntax: PATH}}")
        for name, ref in self.encoder_starts.items():
            check_choice(f"{section}.encoder_starts key", name, RECIPES)
            if not RECIPES[name].predictor:
                raise ConfigError(
                    f"{section}.encoder_starts.{name}: the recipe has no predictor, a masked-LM encoder's "
                    "shape is not its own"
                )
            if not isinstance(ref, str) or not ref:
                raise ConfigError(
                    f"{section}.encoder_starts.{name}={ref!r} must be a checkpoint path or builtin:<name>"
                )
        check_int(f"{section}.latency_examples", self.latency_examples, 1)
        if not self.compare_datasets:
            raise ConfigError(f"{section}.compare_datasets must name at least one dataset")


@dataclass
class ExperimentConfig:
    """One experiment: the recipe (a row of ``core.recipes.RECIPES``) and every section of settings.

    ``resolved()`` applies what the recipe fixes (its row's ``fixed`` settings); ``model_encoder_config``
    adds the sizes that come from the vocabulary. Both are saved with a run, so its config.yaml says
    exactly what ran.
    """

    recipe: str = "parser_free"
    """The recipe: a row of the recipe table (parserfree.core.recipes), e.g. parser_free, parser_fed_twin,
    no_syntax."""
    seed: int = 0
    """Seed of the initialisation (per model part) and of the data order."""
    threads: int | None = 2
    """PyTorch and onnxruntime intra-op threads of every stage (null: one per core)."""
    data: DataConfig = field(default_factory=DataConfig)
    """Where the examples come from and how they are labelled and split."""
    parse: ParseConfig = field(default_factory=ParseConfig)
    """The spaCy teacher."""
    vocab: VocabConfig = field(default_factory=VocabConfig)
    """The word vocabulary and sub-word features."""
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    """The syntax-biased encoder."""
    predictor: PredictorConfig = field(default_factory=PredictorConfig)
    """The distance predictor (recipes with a predictor)."""
    training: TrainingConfig = field(default_factory=TrainingConfig)
    """Optimisation and teacher forcing."""
    run: RunConfig = field(default_factory=RunConfig)
    """The main job (parserfree run)."""

    @property
    def recipe_row(self) -> Recipe:
        """The recipe's row of the recipe table."""
        return get_recipe(self.recipe)

    def validate(self) -> None:
        """Validate every section; each error names its key."""
        check_choice("recipe", self.recipe, RECIPES)
        if self.threads is not None:
            check_int("threads", self.threads, 1)
        for name in ("data", "parse"):  # sections whose classes live with their data code
            getattr(self, name).validate()
        for name in ("vocab", "encoder", "predictor", "training", "run"):
            getattr(self, name).validate(name)
        if self.training.soft_labels is not None and self.data.task not in ("binary", "classification"):
            raise ConfigError(
                f"training.soft_labels: a teacher's soft labels teach a classifier; data.task is '{self.data.task}'"
            )
        if self.encoder.n_feature_buckets != self.vocab.n_feature_buckets:
            raise ConfigError(
                f"encoder.n_feature_buckets={self.encoder.n_feature_buckets} must equal "
                f"vocab.n_feature_buckets={self.vocab.n_feature_buckets} (the vocabulary hashes into them)"
            )
        if self.run.pretrain_predictor:  # unknown keys and bad values named as the section they override
            self.pretrain_predictor_config()
        if self.encoder.pretrained:
            self.check_pretrained()
        if self.recipe_row.needs_predictor_layer:  # h_k of layers 1..k, or a parser tower on h_0 (k = 0)
            self.predictor.check_encoder(self.resolved().encoder, self.recipe)
        t = self.training
        scheduled = self.recipe_row.train_source == DistanceSource.SCHEDULED
        if t.grad_clip_predictor_apart and not t.grad_clip:
            raise ConfigError(
                "training.grad_clip_predictor_apart=true does nothing with training.grad_clip=0 (nothing is clipped): "
                "set one of them differently"
            )
        if scheduled and t.teacher_forcing_end >= 1 and t.task_grad_to_predictor:
            raise ConfigError(
                "training.task_grad_to_predictor=true does nothing with training.teacher_forcing_end=1 "
                "(the biased layers never read D̂ in training): set one of them differently"
            )

    def check_pretrained(self) -> None:
        """ConfigError for settings a pre-trained encoder (``encoder.pretrained``) cannot take: they read the
        project's word vocabulary or start the encoder from another kind of run (``training.init_from`` may
        name a predictor pre-training of the same encoder: its layers 1..k and predictor start the run)."""
        name = f"encoder.pretrained={self.encoder.pretrained}"
        if self.data.task == "masked_lm":
            raise ConfigError(f"data.task=masked_lm pre-trains the project's own encoder; {name} is pre-trained")
        if self.predictor.has_tower:
            raise ConfigError(
                f"predictor.tower_layers={self.predictor.tower_layers}: a parser tower embeds the project's word "
                f"vocabulary, which {name} does not have; its predictor reads layer k's word vectors (tower_layers: 0)"
            )
        if self.training.init_predictor_from:
            raise ConfigError(
                f"training.init_predictor_from={self.training.init_predictor_from}: it gives a parser tower, which "
                f"{name} cannot take (training.init_from: a predictor pre-training of the same encoder)"
            )

    def resolved(self) -> ExperimentConfig:
        """A copy with the settings the recipe fixes (its row's ``fixed``) applied."""
        data = self.to_dict()
        for key, value in self.recipe_row.fixed.items():
            set_key(data, key, value)
        return build_dataclass(ExperimentConfig, data)

    def fixed_changes(self) -> list[str]:
        """The settings the recipe fixes that differ in this config, as "key: config → recipe" lines."""
        mine, fixed = self.to_dict(), self.resolved().to_dict()
        out = []
        for key in self.recipe_row.fixed:
            a, b = mine, fixed
            for part in key.split("."):
                a, b = a[part], b[part]
            if a != b:
                out.append(f"{key}: {a!r} → {b!r} (fixed by recipe {self.recipe})")
        return out

    def model_encoder_config(self, vocab_size: int, n_features: int) -> EncoderConfig:
        """The encoder section with the vocabulary's sizes; a size set in the config must match. With a
        pre-trained encoder (``encoder.pretrained``) its ``encoder.architecture`` gives every size instead."""
        if self.encoder.pretrained:
            architecture = self.encoder.architecture
            if architecture is None:
                raise ConfigError(f"encoder.pretrained={self.encoder.pretrained}: its config.json was not read")
            changes: dict[str, Any] = {**sizes_of(architecture), "n_features": n_features}
            sized = dataclasses.replace(self.encoder, **changes)
            sized.validate()
            return sized
        if self.encoder.vocab_size not in (0, vocab_size):
            raise ConfigError(
                f"encoder.vocab_size={self.encoder.vocab_size} but the vocabulary built from the data "
                f"has {vocab_size} entries (set 0 to take it from the vocabulary)"
            )
        if self.encoder.n_features != n_features:
            raise ConfigError(
                f"encoder.n_features={self.encoder.n_features} but the vocabulary gives {n_features} features per word"
            )
        return dataclasses.replace(self.encoder, vocab_size=vocab_size, n_features=n_features)

    def predictor_config(self) -> PredictorConfig | None:
        """The PredictorConfig, or None for recipes without a predictor."""
        return self.predictor if self.recipe_row.predictor else None

    @property
    def clips_predictor_apart(self) -> bool:
        """Whether training clips the predictor's own weights on their own norm: ``training.grad_clip_predictor_apart``
        in a recipe with a task and a predictor (elsewhere there is one part to clip, and the setting changes nothing)."""
        row = self.recipe_row
        return self.training.grad_clip_predictor_apart and row.predictor and row.task

    def pretrain_predictor_config(self) -> PredictorConfig:
        """The predictor a job's pre-training trains: this predictor with ``run.pretrain_predictor`` over it."""
        return PredictorConfig.from_dict(
            {**self.predictor.to_dict(), **self.run.pretrain_predictor}, "run.pretrain_predictor"
        )

    def to_dict(self) -> dict:
        """Plain nested dict (what is saved as the resolved config)."""
        return to_settings(self)


# Keys that were renamed, old → new: a config a person writes is refused with the new name; a record that
# parserfree wrote (a run's config.yaml, a checkpoint's experiment) is read with the new name.
RENAMED_KEYS = {"run.pretrained": "run.predictor_start", "run.pretrained_encoders": "run.encoder_starts"}


def renamed_keys(data: dict, source: str, record: bool = False) -> dict:
    """``data`` with every old key of ``RENAMED_KEYS`` under its new name (``record``), else ConfigError
    naming the first old key and its new name."""
    for old, new in RENAMED_KEYS.items():
        section, _, key = old.partition(".")
        node = data.get(section)
        if not isinstance(node, dict) or key not in node:
            continue
        if not record:
            raise ConfigError(f"{source}: {old} is now {new}")
        node = dict(node)
        node[new.partition(".")[2]] = node.pop(key)
        data = {**data, section: node}
    return data


def config_from_record(data: dict) -> ExperimentConfig:
    """The config a record of parserfree holds (a run's config.yaml, a checkpoint's ``experiment``), read
    whatever version of the keys it was written with."""
    return build_dataclass(ExperimentConfig, renamed_keys(data, "record", record=True))


def load_config(
    path: str | Path | None = None, overrides: list[str] | None = None, size: str = "small", record: bool = False
) -> ExperimentConfig:
    """Read a YAML experiment file (or the defaults) at a model ``size`` (``SIZES``), apply overrides,
    build and validate. ``record``: the file is a run's own config.yaml (renamed keys are read, not refused)."""
    data = read_yaml(path) if path is not None else {}
    for key, value in size_settings(size).items():
        set_key(data, key, value)
    data = apply_overrides(data, overrides or [])
    data = renamed_keys(data, str(path) if path is not None else "--set", record)
    config = build_dataclass(ExperimentConfig, data)
    config.validate()
    return config


def save_config(config: ExperimentConfig, path: str | Path) -> None:
    """Write the resolved config as YAML, atomically."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(p, yaml.safe_dump(config.to_dict(), sort_keys=False))
