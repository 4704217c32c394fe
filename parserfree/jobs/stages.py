"""The stages of the main job below its comparison, each skipped, resumed or rebuilt per its stage record.

``pretrain_stage``: the pre-trained lower layers and predictor a task starts from — a shipped model, a
given checkpoint, the best finished pre-training of its family in the cache (``cached_predictors``), or one
trained there (``pretrain_config``, keyed by ``pretrain_keys``: ``<cache>/predictors/<family>/<settings>``);
``cached_init`` resolves ``training.init_from: cached`` from the same cache. ``train_recipes``: each
recipe's config (``recipe_config``) trained once per training rule (``train_stage``), a recipe that trains
exactly as one already trained served from its run (``serve_stage``). ``export_stage``: a checkpoint to a
bundle. Each stage's record (``stages.StageRecord``) says whether it is done; ``log`` writes the job's
progress lines. Strung together per task by ``main_job.run_task``; ``parserfree pretrain``, ``train``,
``ship``, ``curve`` and the benchmarks call single stages.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import yaml

from ..core.recipes import training_rule
from ..distill.config import ExperimentConfig
from ..distill.data.archives import default_cache_dir
from ..distill.data.datasets import DataConfig
from ..distill.fingerprints import digest, file_digest, without
from ..distill.shipped import SCHEME, is_shipped, models_dir, read_record, shipped_checkpoint
from .stage_records import StageRecord, export_fingerprint, training_fingerprint


def log(message: str) -> None:
    """One progress line of the main job (``[parserfree run] …``), flushed."""
    print(f"[parserfree run] {message}", flush=True)


PREDICTORS = "predictors"  # the cache's folder of pre-trained predictors: <family>/<settings>/


def pretrain_config(config: ExperimentConfig) -> ExperimentConfig:
    """The pre-training run of a task's config: recipe ``pretrain_predictor`` on the text of
    ``run.pretrain_datasets`` for ``run.pretrain_epochs`` epochs, with the task's encoder, predictor and
    vocabulary settings. Several datasets are joined as one (each keeps its own split, so nothing a dataset
    holds out is pre-trained on); one with trees (``silver-trees``) is used as it is, parsing nothing. The
    predictor is the task's with ``run.pretrain_predictor`` over it (a graft's: the predictor on h_k beside the
    shipped tower). With a parser tower only the tower (its own embeddings and layers) and the scorers learn, so
    the encoder is set to one minimal unused layer: tasks whose encoders differ share the pre-training (its
    family)."""
    pre = copy.deepcopy(config)
    pre.recipe = "pretrain_predictor"
    pre.training.max_epochs = config.run.pretrain_epochs
    pre.training.init_from = None  # pre-training starts from scratch
    pre.training.init_predictor_from = None
    pre.training.auxiliary_parser_weight = 0.0  # the predictor's own loss is the pre-training
    if config.encoder.pretrained:  # its embeddings stay the encoder's: layers 1..k and the predictor are pre-trained
        pre.training.freeze_embeddings = True
    if pre.training.distance_loss_weight == 0:  # a task's "keep the predictor as it is" would train nothing
        pre.training.distance_loss_weight = 1.0
    pre.predictor = config.pretrain_predictor_config()
    names = list(config.run.pretrain_datasets)
    pre.data = DataConfig(
        dataset=names[0] if len(names) == 1 else names,
        task="none",
        split=config.data.split,
        text_column=config.data.text_column,
        cache_dir=config.data.cache_dir,
        archive=config.data.archive,
        train_fraction=config.run.pretrain_fraction,
        train_sample_seed=config.seed,
        builtin_corpora=config.data.builtin_corpora,
    )
    if (
        pre.predictor.tower_layers > 0
    ):  # a tower pre-trains the embeddings and itself only: the encoder's layers are not part of it
        shape = pre.predictor.tower_shape(pre.encoder)
        pre.predictor = dataclasses.replace(
            pre.predictor, tower_d_model=shape.d_model, tower_heads=shape.n_heads, tower_d_ff=shape.d_ff
        )
        pre.encoder = dataclasses.replace(
            pre.encoder,
            d_model=8,
            n_layers=1,
            n_heads=1,
            d_ff=1,
            predictor_layer=0,  # the tower reads its own embeddings, whatever layers 1..k the task leaves unbiased
            bias_all_layers=False,
            bias=dataclasses.replace(pre.encoder.bias, mode="none"),
        )
    pre.validate()
    return pre


def pretrain_keys(pre: ExperimentConfig) -> tuple[str, str]:
    """(family, settings) digests of a pre-training: the family is what the predictor is — its settings but
    the training schedule, and the digests of its text — so a longer training of the same predictor is of
    the same family; the second digest adds the schedule."""
    fingerprint = training_fingerprint(pre)
    family = {**fingerprint, "settings": without(fingerprint["settings"], ("training",))}
    return digest(family)[:12], digest(fingerprint)[:12]


def cached_predictors(pre: ExperimentConfig, cache: Path) -> list[dict]:
    """Finished pre-trainings of ``pre``'s family in the cache that read at least as many sentences as ``pre``
    would (a shorter one is never preferred to training its own), best dev UUAS first: folder and metrics."""
    family, _ = pretrain_keys(pre)
    found = []
    for run_dir in sorted((cache / PREDICTORS / family).glob("*")):
        metrics = read_json(run_dir / "metrics.json")
        record = read_json(run_dir.parent / "stages" / f"{run_dir.name}.json")
        if metrics and record and record.get("finished") and (run_dir / "checkpoints" / "best.ckpt").is_file():
            if sentences_read(metrics, run_dir) >= 0.99 * budget_sentences(pre, metrics, run_dir):
                found.append({"run_dir": str(run_dir), "metrics": metrics})
    return sorted(found, key=lambda f: -(f["metrics"].get("dev", {}).get("uuas") or 0.0))


def _settings(run_dir: Path) -> dict:
    try:
        return yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}


def sentences_read(metrics: dict, run_dir: Path) -> float:
    """Training sentences a finished pre-training read: its steps × its batch size."""
    return float(metrics.get("steps", 0)) * float(_settings(run_dir).get("training", {}).get("batch_size", 0))


def budget_sentences(pre: ExperimentConfig, metrics: dict, run_dir: Path) -> float:
    """Training sentences ``pre`` would read: its epochs × its share of the text's training split (the split's
    size from a cached run of the same text: its sentences over its own share) × its batch limit."""
    settings = _settings(run_dir)
    their_fraction = float(settings.get("data", {}).get("train_fraction", 1.0)) or 1.0
    full = float(metrics.get("n_train", 0)) / their_fraction
    limit = pre.training.limit_train_batches if pre.training.limit_train_batches <= 1 else 1.0
    budget = pre.training.max_epochs * pre.data.train_fraction * limit * full
    if pre.training.max_steps > 0:
        budget = min(budget, pre.training.max_steps * pre.training.batch_size)
    return budget


def pretrain_stage(
    config: ExperimentConfig, cache_dir: str | None, progress: bool, mode: str | None = None
) -> dict | None:
    """The pre-trained lower layers and predictor a task starts from (when ``run.pretrain_epochs`` > 0):
    with ``run.predictor_start: auto`` the best finished one of its family in the cache (``parserfree pretrain``
    writes them there, whatever the output folder), else the one of its own settings, trained (or resumed)
    into ``<cache>/predictors/<family>/<settings>``; ``train`` always the latter; a path that checkpoint.
    Returns {"checkpoint", "run_dir", "metrics", "chosen"} (and "shipped": the name, for a shipped model)
    or None without pre-training."""
    mode = mode or config.run.predictor_start
    if is_shipped(mode):  # a shipped model: nothing to pre-train
        name = mode.removeprefix(SCHEME)
        path = shipped_checkpoint(name, cache_dir=cache_dir or config.data.cache_dir)
        return {
            "checkpoint": str(path),
            "run_dir": str(
                models_dir() / name
            ),  # the model's folder (a partial one's checkpoint is completed in the cache)
            "metrics": read_record(name).get("scores"),
            "chosen": f"shipped ({mode})",
            "shipped": mode,
        }
    if not config.run.pretrain_datasets or config.run.pretrain_epochs <= 0:
        return None
    if mode not in ("auto", "train"):
        path = Path(mode)
        if not path.is_file():
            raise FileNotFoundError(f"run.predictor_start={mode}: no such checkpoint")
        return {
            "checkpoint": str(path),
            "run_dir": str(path.parent.parent),
            "metrics": read_json(path.parent.parent / "metrics.json"),
            "chosen": "given by run.predictor_start",
        }
    pre = pretrain_config(config)
    cache = Path(cache_dir or config.data.cache_dir or default_cache_dir())
    if mode == "auto":
        found = cached_predictors(pre, cache)
        if found:
            best = found[0]
            log(
                f"pretrain: using the cached predictor {best['run_dir']} (dev UUAS {best['metrics']['dev'].get('uuas', 0):.1f}, "
                f"the best of {len(found)} of these settings)"
            )
            return {
                "checkpoint": str(Path(best["run_dir"]) / "checkpoints" / "best.ckpt"),
                **best,
                "chosen": "best cached",
            }
    family, settings = pretrain_keys(pre)
    run_dir = cache / PREDICTORS / family / settings
    metrics = train_stage(pre, run_dir, cache_dir, progress)
    return {
        "checkpoint": str(run_dir / "checkpoints" / "best.ckpt"),
        "run_dir": str(run_dir),
        "metrics": metrics,
        "chosen": "trained for these settings",
    }


def cached_init(config: ExperimentConfig, cache_dir: str | None) -> ExperimentConfig:
    """``training.init_from: cached`` replaced by the best cached pre-training of the config's family (see
    ``pretrain_stage``); a one-line error when there is none yet."""
    if config.training.init_from != "cached":
        return config
    cache = Path(cache_dir or config.data.cache_dir or default_cache_dir())
    found = cached_predictors(pretrain_config(config), cache) if config.run.pretrain_datasets else []
    if not found:
        raise FileNotFoundError(
            "training.init_from=cached: no pre-trained predictor of these settings in the cache "
            f"({cache / PREDICTORS}); run `parserfree pretrain` with this config first"
        )
    out = copy.deepcopy(config)
    out.training.init_from = str(Path(found[0]["run_dir"]) / "checkpoints" / "best.ckpt")
    return out


def recipe_config(config: ExperimentConfig, recipe: str, pretrained: str | None) -> ExperimentConfig:
    """The task's config for one recipe: the like-for-like rows (those with a predictor) all start from
    the pre-training when there is one, or from their own masked-LM encoder (``run.encoder_starts``). Beside
    a grafted tower (``training.init_predictor_from``) a row without its own encoder start starts from fresh
    weights: the tower is its predictor's start, never its encoder's."""
    cfg = copy.deepcopy(config)
    cfg.recipe = recipe
    if recipe in cfg.run.encoder_starts:
        cfg.training.init_from = cfg.run.encoder_starts[recipe]
    elif pretrained and cfg.recipe_row.predictor and not cfg.training.init_predictor_from:
        cfg.training.init_from = pretrained
    cfg.validate()
    return cfg


def read_json(path: Path) -> dict | None:
    """A stage's JSON output, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _plan_run(record: StageRecord, run_dir: Path, recipe: str, redo: str) -> tuple[str, dict | None]:
    """The plan of a run stage (``StageRecord.plan``) and, when it is skipped, the run's metrics; says why
    an existing run is redone."""
    metrics = read_json(run_dir / "metrics.json")
    action, why = record.plan(intact=metrics is not None)
    if action == "skip":
        log(f"{recipe}: finished earlier, skipping ({run_dir})")
    elif why:
        log(f"{recipe}: {why} — {redo}")
    return action, metrics


def train_stage(config: ExperimentConfig, run_dir: Path, cache_dir: str | None, progress: bool) -> dict:
    """Train one recipe into ``run_dir``, or skip / resume it per its stage record."""
    from ..core.checkpoints import CheckpointError
    from ..distill.train import train

    record = StageRecord(run_dir, training_fingerprint(config, cache_dir))
    action, metrics = _plan_run(record, run_dir, config.recipe, "training again from the start")
    if action == "skip":
        return metrics
    record.start(fresh=action == "build")
    last = run_dir / "checkpoints" / "last.ckpt"
    resume = action == "resume" and last.exists()
    log(f"{config.recipe}: training{' (resuming)' if resume else ''} → {run_dir}")
    try:
        result = train(config, run_dir, resume=resume, cache_dir=cache_dir, progress=progress)
    except CheckpointError as e:
        if resume and str(e).startswith(str(last)):
            raise CheckpointError(f"{e} — delete it to train {config.recipe} from the start") from None
        raise
    log(f"{config.recipe}: trained in {record.finish():.0f}s")
    return result


def train_recipes(
    config: ExperimentConfig,
    recipes: list[str],
    pretrained: str | None,
    out: Path,
    cache_dir: str | None,
    progress: bool,
) -> dict[str, dict]:
    """Train each recipe into ``out/<recipe>`` — once per training rule: a recipe that would train exactly
    as one already trained (``parser_free`` with ``teacher_forcing_end`` = 1 and its twin) is served from
    that run instead (``serve_stage``). Returns each recipe's metrics."""
    results: dict[str, dict] = {}
    trained: dict[tuple, str] = {}  # training rule → the recipe trained with it
    for recipe in recipes:
        cfg = recipe_config(config, recipe, pretrained)
        rule = training_rule(cfg.recipe_row, cfg.training.teacher_forcing_end)
        if rule in trained:
            results[recipe] = serve_stage(cfg, out / trained[rule], out / recipe, cache_dir, progress)
        else:
            results[recipe] = train_stage(cfg, out / recipe, cache_dir, progress)
            trained[rule] = recipe
    return results


def serve_stage(
    config: ExperimentConfig, source_run: Path, run_dir: Path, cache_dir: str | None, progress: bool
) -> dict:
    """A recipe whose training is exactly that of a recipe already trained (``recipes.training_rule``): the
    source run's weights served with this recipe's distances (``distill.train.serve_trained``), or skip."""
    from ..distill.train import serve_trained

    fingerprint = training_fingerprint(config, cache_dir)
    fingerprint["inputs"]["trained_as"] = file_digest(source_run / "checkpoints" / "best.ckpt")
    record = StageRecord(run_dir, fingerprint)
    action, metrics = _plan_run(record, run_dir, config.recipe, "again")
    if action == "skip":
        return metrics
    record.start(fresh=True)
    log(
        f"{config.recipe}: trains exactly as {source_run.name} → its weights, served with its own distances ({run_dir})"
    )
    result = serve_trained(config, source_run, run_dir, cache_dir, progress)
    log(f"{config.recipe}: scored in {record.finish():.0f}s")
    return result


def _bundle_intact(bundle: Path) -> bool:
    from ..export.bundle import verify_bundle
    from ..export.errors import BundleError

    try:
        verify_bundle(bundle)
        return True
    except BundleError:
        return False


def export_stage(config: ExperimentConfig, checkpoint: Path, bundle: Path, full: bool = False) -> None:
    """Export ``checkpoint`` to ``bundle`` (with the optimised and int8 variants when ``full``), unless the
    bundle on disk is intact and was built from the same checkpoint and settings."""
    from .exporting import export_checkpoint

    optimize, quantize = full, "int8" if full else None
    variants = {"optimize": optimize, "quantize": quantize}
    record = StageRecord(bundle, export_fingerprint(config, checkpoint, variants))
    action, why = record.plan(intact=_bundle_intact(bundle))
    if action == "skip":
        log(f"export: {bundle} exists, skipping")
        return
    log(f"export: {why} — exporting again" if why else f"export: {checkpoint} → {bundle}")
    record.start(fresh=True)
    export_checkpoint(checkpoint, bundle, optimize=optimize, quantize=quantize, overwrite=True)
    log(f"export: {bundle.name} in {record.finish():.0f}s")
