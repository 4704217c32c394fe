"""Experiment configuration: one YAML file fully describes one run.

The top of the data flow. A config names the recipe (``no_syntax``, ``parser_fed``, ``parser_free``,
``pretrain_predictor``), the data, the parser, the vocabulary, the encoder, the distance predictor and
the training settings. Loading validates every key: unknown or mistyped keys and impossible values stop
with an error naming the key (``training.lr='fast' must be a number``). ``--set section.key=value``
overrides a loaded file; the resolved config is saved into every run directory.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from parserfree.distill.datasets import DataConfig
from parserfree.distill.files import write_text_atomic
from parserfree.distill.parsing import ParseConfig

RECIPES = ("no_syntax", "parser_fed", "parser_free", "pretrain_predictor")


class ConfigError(ValueError):
    """An invalid experiment config; the message names the key."""


@dataclass
class VocabConfig:
    """Frequency-cut word vocabulary built from the training split, plus hashed sub-word features."""

    min_freq: int = 2
    max_size: int | None = 30000
    n_feature_buckets: int = 4096

    def validate(self) -> None:
        """Raise ValueError naming the first impossible field."""
        if self.min_freq < 1:
            raise ValueError(f"vocab.min_freq={self.min_freq} must be ≥ 1")
        if self.max_size is not None and self.max_size < 2:
            raise ValueError(f"vocab.max_size={self.max_size} must be ≥ 2")
        if self.n_feature_buckets < 2:
            raise ValueError(f"vocab.n_feature_buckets={self.n_feature_buckets} must be ≥ 2")


@dataclass
class TrainingConfig:
    """Optimisation and schedule of the co-training (Adam + warm-up + inverse-sqrt decay)."""

    max_epochs: int = 5
    max_steps: int = -1  # -1: no limit beyond max_epochs
    batch_size: int = 32
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup_steps: int = 200
    bias_lr_multiplier: float = 1.0
    grad_clip: float = 1.0
    distance_loss_weight: float = 1.0  # λ in loss = task + λ·predictor loss
    teacher_forcing_fraction: float = 0.5  # p(parser distances) decays 1 → 0 over this fraction of training
    task_grad_to_predictor: bool = True
    early_stopping_patience: int = 3
    val_check_interval: float = 1.0
    limit_train_batches: float = 1.0
    num_workers: int = 0
    threads: int | None = None  # PyTorch intra-op threads (None: PyTorch's default, one per core)
    accelerator: str = "cpu"
    devices: int = 1
    strategy: str = "auto"
    init_from: str | None = None  # a pretrain_predictor checkpoint to start a parser_free run from

    def validate(self) -> None:
        """Raise ValueError naming the first impossible field."""
        positive = {"max_epochs": self.max_epochs, "batch_size": self.batch_size, "devices": self.devices}
        for name, value in positive.items():
            if value < 1:
                raise ValueError(f"training.{name}={value} must be ≥ 1")
        if self.lr <= 0:
            raise ValueError(f"training.lr={self.lr} must be > 0")
        for name in ("weight_decay", "bias_lr_multiplier", "grad_clip", "distance_loss_weight", "warmup_steps"):
            if getattr(self, name) < 0:
                raise ValueError(f"training.{name}={getattr(self, name)} must be ≥ 0")
        if not 0 <= self.teacher_forcing_fraction <= 1:
            raise ValueError(f"training.teacher_forcing_fraction={self.teacher_forcing_fraction} must be in [0, 1]")


@dataclass
class RunConfig:
    """The main job (``parserfree run``): which recipes to train, whether to pre-train the predictor on
    the text of all domains first, and what to compare on."""

    recipes: list[str] = field(default_factory=lambda: ["no_syntax", "parser_fed", "parser_free"])
    pretrain_datasets: list[str] = field(default_factory=list)  # unlabeled text to pre-train the predictor on
    pretrain_epochs: int = 0
    compare_datasets: list[str] = field(default_factory=lambda: ["vader-movies"])
    compare_max_examples: int | None = None  # per dataset, for quick runs
    threads: int = 2
    latency_examples: int = 200
    export_parser_fed: bool = True

    def validate(self) -> None:
        """Raise ValueError naming the first impossible field."""
        for r in self.recipes:
            if r not in RECIPES[:3]:
                raise ValueError(f"run.recipes: '{r}' must be one of {RECIPES[:3]}")
        if "parser_free" not in self.recipes or "parser_fed" not in self.recipes:
            raise ValueError("run.recipes must include parser_free and parser_fed (the comparison needs both)")
        if self.pretrain_epochs < 0 or self.threads < 1 or self.latency_examples < 1:
            raise ValueError("run.pretrain_epochs must be ≥ 0, run.threads and run.latency_examples ≥ 1")
        if not self.compare_datasets:
            raise ValueError("run.compare_datasets must name at least one dataset")


@dataclass
class ExperimentConfig:
    """One experiment: recipe + the sections above. ``encoder`` and ``predictor`` stay dicts here and are
    validated by ``encoder.EncoderConfig`` / ``predictor.PredictorConfig`` (the vocabulary size is known
    only once the vocabulary is built)."""

    recipe: str = "parser_free"
    seed: int = 0
    data: DataConfig = field(default_factory=DataConfig)
    parse: ParseConfig = field(default_factory=ParseConfig)
    vocab: VocabConfig = field(default_factory=VocabConfig)
    encoder: dict = field(default_factory=dict)
    predictor: dict = field(default_factory=dict)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    run: RunConfig = field(default_factory=RunConfig)

    def validate(self) -> None:
        """Validate every section, the encoder and predictor through their own config classes."""
        from parserfree.predictor import PredictorConfig

        if self.recipe not in RECIPES:
            raise ConfigError(f"recipe='{self.recipe}' must be one of {RECIPES}")
        for section in (self.data, self.parse, self.vocab, self.training, self.run):
            try:
                section.validate()
            except ValueError as e:
                raise ConfigError(str(e)) from None
        try:
            self.encoder_config(vocab_size=2)
            PredictorConfig.from_dict(dict(self.predictor))
        except ValueError as e:
            raise ConfigError(str(e)) from None
        if self.recipe == "parser_free" and self.encoder.get("predictor_layer", 0) < 1:
            raise ConfigError("encoder.predictor_layer must be ≥ 1 for recipe parser_free (the predictor reads h_k)")
        if self.recipe == "pretrain_predictor" and self.encoder.get("predictor_layer", 0) < 1:
            raise ConfigError("encoder.predictor_layer must be ≥ 1 for recipe pretrain_predictor")

    def encoder_config(self, vocab_size: int, n_features: int = 3):
        """The EncoderConfig of this recipe: no_syntax turns the bias off, parser_fed biases all layers."""
        from parserfree.encoder import EncoderConfig

        enc = {k: v for k, v in self.encoder.items()}
        enc["vocab_size"] = vocab_size
        enc["n_features"] = n_features
        enc["n_feature_buckets"] = self.vocab.n_feature_buckets
        if self.recipe == "no_syntax":
            enc["bias"] = {**enc.get("bias", {}), "mode": "none"}
            enc["predictor_layer"] = 0
        elif self.recipe == "parser_fed":
            enc["predictor_layer"] = 0
        return EncoderConfig.from_dict(enc)

    def predictor_config(self):
        """The PredictorConfig, or None for recipes without a predictor."""
        from parserfree.predictor import PredictorConfig

        if self.recipe in ("no_syntax", "parser_fed"):
            return None
        return PredictorConfig.from_dict(dict(self.predictor))

    def to_dict(self) -> dict:
        """Plain nested dict (what is saved as the resolved config)."""
        return dataclasses.asdict(self)


def _check_type(key: str, value: Any, hint: Any) -> Any:
    """Check (and gently coerce: int → float, numeric string → float) a value against a type hint."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _check_type(key, value, option)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError(errors[0] if errors else f"{key}={value!r} has the wrong type")
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{key}={value!r} must be a list")
        (inner,) = typing.get_args(hint)
        return [_check_type(f"{key}[{i}]", v, inner) for i, v in enumerate(value)]
    if hint is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{key} must be a mapping of settings")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key}={value!r} must be true or false")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key}={value!r} must be an integer")
        return value
    if hint is float:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise ConfigError(f"{key}={value!r} must be a number") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}={value!r} must be a number")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key}={value!r} must be a string")
        return value
    return value


def build_dataclass(cls: type, data: dict, prefix: str = "") -> Any:
    """Instantiate a (nested) config dataclass from a dict; unknown keys and wrong types name the key."""
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix or 'config'} must be a mapping of settings, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        where = f"{prefix}." if prefix else ""
        raise ConfigError(f"unknown key '{where}{unknown[0]}' (known keys here: {', '.join(sorted(names))})")
    kwargs = {}
    for name, value in data.items():
        key = f"{prefix}.{name}" if prefix else name
        hint = hints[name]
        if dataclasses.is_dataclass(hint):
            kwargs[name] = build_dataclass(hint, value or {}, key)
        else:
            kwargs[name] = _check_type(key, value, hint)
    return cls(**kwargs)


def apply_overrides(data: dict, overrides: list[str]) -> dict:
    """Apply ``section.key=value`` overrides (values parsed as YAML) to a nested dict."""
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set '{item}' must look like section.key=value")
        node = data
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set '{item}': '{part}' is not a section")
        node[parts[-1]] = yaml.safe_load(raw)
    return data


def _merge(base: dict, top: dict) -> dict:
    """Nested dict merge: ``top`` wins, sections merge key by key."""
    out = dict(base)
    for key, value in top.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def read_yaml(path: str | Path, seen: tuple[Path, ...] = ()) -> dict:
    """A YAML experiment file as a dict; ``extends: other.yaml`` (relative to the file) is merged under it."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{p}: no such config file")
    if p.resolve() in seen:
        raise ConfigError(f"{p}: 'extends' loops back to itself")
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise ConfigError(f"{p}{where}: invalid YAML ({getattr(e, 'problem', e)})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: expected a mapping of sections at the top level")
    parent = data.pop("extends", None)
    if parent:
        data = _merge(read_yaml(p.parent / parent, seen + (p.resolve(),)), data)
    return data


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> ExperimentConfig:
    """Read a YAML experiment file (or the defaults), apply overrides, build and validate."""
    data = read_yaml(path) if path is not None else {}
    data = apply_overrides(data, overrides or [])
    config = build_dataclass(ExperimentConfig, data)
    config.validate()
    return config


def save_config(config: ExperimentConfig, path: str | Path) -> None:
    """Write the resolved config as YAML, atomically."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(p, yaml.safe_dump(config.to_dict(), sort_keys=False))
