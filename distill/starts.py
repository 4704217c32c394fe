"""Where a run starts: the weights of a pre-trained run (``training.init_from``, ``training.init_predictor_from``)
or its own ``last.ckpt`` (``--resume``), each refused in one line when it does not fit.

``init_mismatch`` says why a checkpoint cannot initialise a model of given configs ("checkpoint of a
d_model 64 model, config says 128"); ``load_pretrained`` and ``load_pretrained_predictor`` copy the parts
that fit; ``check_resumable`` refuses to continue a ``last.ckpt`` written under other settings. The
checkpoint format itself, read by training and export alike, is ``core/checkpoints.py``.
"""

from __future__ import annotations

from pathlib import Path

from ..core.checkpoints import CheckpointError, TrainedModel, load_trained, read_checkpoint
from ..encoder import EncoderConfig, Vocabulary
from ..encoder.masked_words import MASKED_LM
from ..predictor import PredictorConfig
from ..predictor.config import LOSS_FIELDS, TOWER_SIZE_FIELDS
from ..predictor.syntax_model import SyntaxModel
from .fingerprints import changes, summary, without, without_added_at_their_old_value

# settings a resumed run may change: how long it trains and where things live, nothing it has learned from;
# and the sizes taken from the vocabulary (known only after the data is read; the data settings are compared)
RESUMABLE_CHANGES = (
    "training.max_epochs",
    "training.max_steps",
    "training.min_steps",
    "training.early_stopping_patience",
    "training.num_workers",
    "threads",
    "training.threads",
    "data.cache_dir",
    "data.archive",
    "encoder.vocab_size",
    "encoder.n_features",
    "run",  # what `parserfree run` trains around a run (its recipes, starts, comparison), never the run itself
)
# encoder settings that fix what the ids a pre-trained predictor run reads mean (a parser tower embeds them
# itself), those of the shared embeddings, and of the shared layers 1..k (both only without a tower)
INIT_ID_FIELDS = ("max_len", "n_feature_buckets", "n_features", "predictor_layer")
INIT_EMBEDDING_FIELDS = ("d_model",)
INIT_LAYER_FIELDS = ("n_heads", "d_ff")


def init_mismatch(trained: TrainedModel, encoder: EncoderConfig, predictor: PredictorConfig | None) -> str | None:
    """Why ``trained`` cannot initialise a model of these configs (one phrase), or None when it can."""
    ours, theirs = trained.encoder_config.to_dict(), encoder.to_dict()
    if trained.task == MASKED_LM:  # a pre-trained encoder: every encoder setting but dropout must match,
        # and static vectors may be added to one without them (below: the projection starts at zero)
        # and so may the task head's n-gram term (a head's part, zero at the start; no head is ever copied)
        free = ("dropout", "ngram_buckets", *(("static_vectors",) if ours.get("static_vectors") is None else ()))
        diff = changes(without(ours, free), without(theirs, free))
        if diff:
            return f"a masked-LM encoder of other settings ({summary(diff)})"
    if trained.predictor_config is None:
        if trained.task == MASKED_LM and predictor is None:
            return None
        return f"a {trained.recipe} checkpoint has no distance predictor to start from"
    if predictor is None and trained.predictor_config.has_tower and trained.task != MASKED_LM:
        return "its predictor has a tower of its own: no lower layers to share with a row without a predictor"
    tower = predictor is not None and predictor.has_tower
    shared = () if tower else (*INIT_EMBEDDING_FIELDS, *INIT_LAYER_FIELDS)  # a tower shares nothing
    ids = tuple(f for f in INIT_ID_FIELDS if not (tower and f == "predictor_layer"))  # nor reads h_k
    for name in ("pretrained", *ids, *shared):  # a pre-trained encoder's layers fit only the same encoder
        if ours.get(name) != theirs.get(name):
            return f"checkpoint of a {name} {ours.get(name)} model, config says {theirs.get(name)}"
    # static vectors may be added to a start without them (the projection starts at zero: the same function),
    # never dropped or swapped, since the shared embeddings learnt beside them
    if shared and ours.get("static_vectors") not in (None, theirs.get("static_vectors")):
        return f"checkpoint of a static_vectors {ours.get('static_vectors')} model, config says {theirs.get('static_vectors')}"
    if predictor is None:  # a row without a predictor takes the embeddings and layers 1..k only
        return None
    old, new = trained.predictor_config.tower_shape(trained.encoder_config), predictor.tower_shape(encoder)
    if predictor.has_tower and old != new:  # sizes compared as resolved (unset ones are the encoder's)
        return f"checkpoint of a predictor tower {_tower(old)} model, config says {_tower(new)}"
    ignored = (*LOSS_FIELDS, *TOWER_SIZE_FIELDS)
    diff = changes(without(trained.predictor_config.to_dict(), ignored), without(predictor.to_dict(), ignored))
    if diff:
        key, _, rest = diff[0].partition(" ")
        before, _, after = rest.partition(" → ")
        return f"checkpoint of a predictor.{key} {before} model, config says {after or '?'}"
    return None


def _tower(shape) -> str:
    return f"{shape.layers} × {shape.d_model} (heads {shape.n_heads}, ff {shape.d_ff})"


def load_pretrained(
    model: SyntaxModel, path: str | Path, trained: TrainedModel | None = None, with_predictor: bool = True
) -> None:
    """Initialise ``model`` from a pre-trained run. From a predictor pre-training: the predictor with its
    label scorer and, without a tower, the embeddings and the unbiased layers 1..k it reads (a tower has its
    own embeddings: the rest keeps its fresh weights); a row without a predictor takes those embeddings and
    layers only. From a masked-LM pre-training (``distill.masked_lm``): the whole encoder (embeddings, every
    layer, the bias table, the final norm) and its predictor where both have one; never a head.
    ``with_predictor=False``: the predictor is left alone (``load_pretrained_predictor`` gives it from
    another run). CheckpointError when the checkpoint is not of the same shape and settings (``trained``:
    the checkpoint already loaded; the model must be built with its label inventory)."""
    trained = trained or load_trained(path)
    encoder = model.encoder.config
    ours = model.predictor if with_predictor else None
    reason = init_mismatch(trained, encoder, ours.config if ours is not None else None)
    if reason:
        raise CheckpointError(f"{path}: cannot initialise from it: {reason} (training.init_from)")
    keep: tuple[str, ...] = ("predictor.",) if ours is not None else ()
    if trained.task == MASKED_LM:
        keep += ("encoder.",)
    elif ours is None or ours.tower is None:  # the embeddings (static vectors where both read them), layers 1..k
        keep += tuple(f"encoder.{prefix}" for prefix in model.encoder.lower_keys())
    _load_parts(model, path, weights_of(trained, keep))


def load_pretrained_predictor(
    model: SyntaxModel, path: str | Path, trained: TrainedModel, vocab: Vocabulary, dep_labels: tuple[str, ...]
) -> None:
    """Initialise ``model``'s predictor alone (its tower, arc and label scorers) from a pre-trained parser
    (``training.init_predictor_from``), beside an encoder that came from another run (``training.init_from``):
    the predictor must have a tower, which shares nothing with the encoder, and the two runs the same
    vocabulary and dependency labels, so the ids mean the same to both. CheckpointError naming the file and
    what does not fit."""
    where = f"{path}: cannot initialise the predictor from it"
    if model.predictor is None:
        raise CheckpointError(f"{where}: the recipe has no distance predictor (training.init_predictor_from)")
    if trained.predictor_config is None or not trained.predictor_config.has_tower:
        raise CheckpointError(
            f"{where}: its predictor has no tower of its own, so it reads lower layers it would not bring "
            "(training.init_predictor_from takes a parser tower; without one, training.init_from alone)"
        )
    if trained.vocab.to_dict() != vocab.to_dict() or tuple(trained.dep_labels) != tuple(dep_labels):
        raise CheckpointError(
            f"{where}: its vocabulary or dependency labels differ from training.init_from's "
            "(training.init_predictor_from)"
        )
    reason = init_mismatch(trained, model.encoder.config, model.predictor.config)
    if reason:
        raise CheckpointError(f"{where}: {reason} (training.init_predictor_from)")
    _load_parts(model, path, weights_of(trained, ("predictor.",)))


def weights_of(trained: TrainedModel, prefixes: tuple[str, ...]) -> dict:
    """A trained model's weights whose names start with one of ``prefixes``, named as in the whole model."""
    return {k: v for k, v in trained.model.state_dict().items() if k.startswith(prefixes)}


def predictor_weights(trained: TrainedModel) -> dict:
    """A trained model's predictor weights, named as in the predictor itself."""
    return {k.removeprefix("predictor."): v for k, v in weights_of(trained, ("predictor.",)).items()}


def _load_parts(model: SyntaxModel, path: str | Path, state: dict) -> None:
    """Load ``state`` (some of the model's weights) into ``model``; CheckpointError on a shape that differs."""
    target = model.state_dict()
    for key, value in state.items():
        if key not in target or target[key].shape != value.shape:
            raise CheckpointError(
                f"{path}: cannot initialise from it: weight {key} has shape {tuple(value.shape)}, "
                f"the model needs {tuple(target[key].shape) if key in target else 'none'}"
            )
    model.load_state_dict(state, strict=False)


def check_resumable(path: str | Path, experiment: dict) -> int:
    """Refuse to resume ``path`` (a run's last.ckpt) for a run whose resolved settings ``experiment`` differ
    in anything but RESUMABLE_CHANGES (a setting added since, at the value that computes what ran before, is no
    change: ``fingerprints.ADDED_SETTINGS``); the message says what changed and how to start over. Returns the
    training step the run resumes at."""
    checkpoint = read_checkpoint(path)
    saved = without_added_at_their_old_value(checkpoint["parserfree"]["experiment"])
    experiment = without_added_at_their_old_value(experiment)
    diff = changes(without(saved, RESUMABLE_CHANGES), without(experiment, RESUMABLE_CHANGES))
    if diff:
        run_dir = Path(path).parent.parent
        raise CheckpointError(
            f"{path}: written under other settings ({summary(diff)}); will not resume it — "
            f"delete {run_dir} or train without --resume to start over"
        )
    return int(checkpoint.get("global_step", 0))
