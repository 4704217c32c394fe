"""Co-training end to end on the tiny fixture data: recipes, resume, pre-training (DDP: test_ddp.py)."""

import csv
import math

import pytest
import torch

from parserfree.core.checkpoints import load_trained
from parserfree.core.recipes import exportable_recipes, get_recipe
from parserfree.distill.config import TrainingConfig, load_config
from parserfree.distill.train import epochs_for, steps_per_epoch, train

from tiny_models import StartWeights


def _train(overrides, out, extra=()):
    return train(load_config("configs/smoke.yaml", [*overrides, *extra]), out, progress=False)


@pytest.mark.slow
@pytest.mark.parametrize("recipe", exportable_recipes())
def test_each_recipe_trains_a_few_steps(recipe, smoke_overrides, request, tmp_path):
    row = get_recipe(recipe)
    data = []
    if "parse.tree_text_column" in row.fixed:  # the parse-leak control needs agreement's grammatical versions
        request.getfixturevalue("tiny_agreement")
        data = ["data.dataset=agreement", "data.max_examples=null", "data.agreement_train_pairs=true"]
    result = _train(
        smoke_overrides, tmp_path, [f"recipe={recipe}", "training.max_steps=4", "training.max_epochs=1", *data]
    )
    assert result["steps"] == 4
    dev = result["dev"]
    assert dev["source"] == row.eval_source
    assert ("uuas" in dev) == row.predictor  # every predictor is trained and scored against the parser
    trained = load_trained(tmp_path / "checkpoints" / "last.ckpt")
    assert trained.recipe == recipe and (trained.model.predictor is not None) == row.predictor
    saved = load_config(tmp_path / "config.yaml")  # what ran: the row's fixed settings and the vocabulary size
    assert saved.encoder.vocab_size == trained.encoder_config.vocab_size > 2
    assert saved.fixed_changes() == [] and (tmp_path / "metrics.json").exists()


def test_recipes_start_from_the_same_weights(smoke_overrides):
    """The like-for-like rows share their initial weights part by part, whatever parts each one has."""
    from parserfree.distill.co_training import CoTrainingModule
    from parserfree.encoder import Vocabulary

    vocab = Vocabulary.build([["a", "film"], ["the", "story"]], min_freq=1)
    states = {}
    for recipe in ("parser_free", "parser_fed_twin", "locality", "no_syntax"):
        config = load_config("configs/smoke.yaml", [*smoke_overrides, f"recipe={recipe}"]).resolved()
        encoder = config.model_encoder_config(len(vocab), vocab.n_features)
        states[recipe] = CoTrainingModule(
            config, encoder, config.predictor_config(), vocab, ["neg", "pos"]
        ).model.state_dict()
    reference = states["parser_free"]
    for recipe, state in states.items():
        shared = [k for k in state if k in reference]
        assert len(shared) > 10
        for key in shared:
            assert torch.equal(state[key], reference[key]), (recipe, key)


def test_the_ngram_table_the_bias_table_and_the_predictor_learn_at_their_own_rates(smoke_overrides):
    """Each table's parameters and the predictor's sit in exactly one optimiser group, at lr × its multiplier
    (a part left in the main group would learn at the base rate, or twice if in two groups); at the default
    predictor multiplier the groups are those checkpoints written before it was added hold."""
    from parserfree.distill.co_training import CoTrainingModule
    from parserfree.encoder import Vocabulary

    vocab = Vocabulary.build([["a", "film"], ["the", "story"]], min_freq=1)
    settings = ["encoder.ngram_buckets=64", "training.ngram_lr_multiplier=7", "training.bias_lr_multiplier=30"]
    for predictor_rate in (1.0, 0.1):
        extra = [*settings, f"training.predictor_lr_multiplier={predictor_rate}"]
        config = load_config("configs/smoke.yaml", [*smoke_overrides, "recipe=parser_free", *extra]).resolved()
        encoder = config.model_encoder_config(len(vocab), vocab.n_features)
        module = CoTrainingModule(config, encoder, config.predictor_config(), vocab, ["neg", "pos"])
        groups = module.configure_optimizers()["optimizer"].param_groups
        grouped = [id(p) for g in groups for p in g["params"]]
        assert sorted(grouped) == sorted(id(p) for p in module.model.parameters())  # each exactly once
        lr = config.training.lr
        rate = {id(p): g["initial_lr"] for g in groups for p in g["params"]}
        assert rate[id(module.model.head.ngrams.table.weight)] == pytest.approx(7 * lr)
        assert rate[id(module.model.encoder.bias.table.weight)] == pytest.approx(30 * lr)
        assert rate[id(module.model.head.proj.weight)] == pytest.approx(lr)
        predictor = [id(p) for p in module.model.predictor.parameters()]
        assert predictor and all(rate[i] == pytest.approx(predictor_rate * lr) for i in predictor)
        assert len(groups) == (3 if predictor_rate == 1.0 else 4)


def test_smoke_run_learns_and_logs_teacher_forcing_held_at_its_end_value(smoke_run):
    """The default teacher_forcing_end = 1 keeps parser trees throughout (a module ignoring it would decay to 0)."""
    out, metrics = smoke_run
    assert metrics["dev"]["metric"] > 60  # the fixture sentences are easy: well above chance
    rows = list(csv.DictReader(open(out / "logs" / "metrics.csv")))
    p = [float(r["train/p"]) for r in rows if r.get("train/p")]
    assert len(p) > 3 and all(v == 1.0 for v in p)
    assert any(r.get("val/uuas") for r in rows) and any(r.get("train/distance_loss") for r in rows)


@pytest.mark.slow
def test_resume_continues_from_the_same_step(smoke_overrides, tmp_path):
    first = _train(smoke_overrides, tmp_path / "a", ["training.max_epochs=1"])
    steps = first["steps"]
    ckpt = torch.load(tmp_path / "a" / "checkpoints" / "last.ckpt", weights_only=False)
    assert ckpt["global_step"] == steps
    config = load_config("configs/smoke.yaml", [*smoke_overrides, "training.max_epochs=2"])
    resumed = train(config, tmp_path / "a", resume=True, progress=False)
    assert resumed["steps"] == 2 * steps and resumed["epochs"] == 2
    straight = _train(smoke_overrides, tmp_path / "b", ["training.max_epochs=2"])
    assert resumed["dev"]["metric"] == straight["dev"]["metric"]
    assert resumed["dev"]["uuas"] == straight["dev"]["uuas"]


@pytest.mark.slow
def test_min_steps_trains_a_small_split_as_long_as_the_task_asks(smoke_overrides, tmp_path):
    """A split of four batches with max_epochs=1 would stop after 4 steps (a warm-up longer than the training)."""
    extra = ["data.max_examples=80", "training.max_epochs=1", "training.min_steps=10"]
    extra += ["training.early_stopping_patience=10"]
    result = _train(smoke_overrides, tmp_path, extra)
    per_epoch = result["steps"] // result["epochs"]
    assert result["epochs"] == math.ceil(10 / per_epoch) > 1 and result["steps"] >= 10
    assert load_config(tmp_path / "config.yaml").training.max_epochs == 1  # config.yaml: what was asked


def test_min_steps_leaves_a_split_that_already_reaches_them_alone():
    t = TrainingConfig(max_epochs=2, batch_size=10, min_steps=30)
    assert [steps_per_epoch(t, n) for n in (100, 150, 1000)] == [10, 15, 100]
    assert epochs_for(t, 10) == 3 and epochs_for(t, 15) == 2 and epochs_for(t, 100) == 2
    assert epochs_for(TrainingConfig(max_epochs=2, batch_size=10), 1) == 2  # 0: never raised


@pytest.mark.slow
def test_pretrained_predictor_initialises_a_parser_free_run(smoke_overrides, tmp_path):
    def run(out, extra):
        start = StartWeights()
        config = load_config("configs/smoke.yaml", [*smoke_overrides, *extra])
        return train(config, out, progress=False, callbacks=[start]), start.state

    pre, fresh = run(tmp_path / "pre", ["recipe=pretrain_predictor", "data.task=none", "training.max_epochs=1"])
    assert "uuas" in pre["dev"] and "metric_name" not in pre["dev"]
    ckpt = tmp_path / "pre" / "checkpoints" / "best.ckpt"
    pretrained = load_trained(ckpt).model.state_dict()
    free, start = run(tmp_path / "free", ["training.max_steps=2", f"training.init_from={ckpt}"])
    assert free["steps"] == 2
    k = load_trained(ckpt).encoder_config.predictor_layer
    moved = (
        "encoder.word_embedding.",
        "encoder.feature_embedding.",
        "encoder.position_embedding.",
        "predictor.",
        *(f"encoder.layers.{i}." for i in range(k)),
    )
    transferred = [key for key in pretrained if key.startswith(moved)]
    assert any(key.startswith("predictor.") for key in transferred) and any(
        key.startswith("encoder.layers.") for key in transferred
    )
    assert any(not torch.equal(fresh[key], pretrained[key]) for key in transferred)  # pre-training changed them
    for key in transferred:  # the parser-free run starts from exactly the pre-trained weights
        assert torch.equal(start[key], pretrained[key]), key


def test_without_a_distance_loss_the_predictor_neither_runs_nor_changes_in_training(
    smoke_overrides, tmp_path, monkeypatch
):
    """λ = 0 (a frozen pre-trained parser): the twin reads the parser's trees, so its predictor must not cost a
    forward pass per step, and its weights must end as they started."""
    from parserfree.predictor.distance_predictor import DistancePredictor

    calls = []
    real = DistancePredictor.forward
    monkeypatch.setattr(
        DistancePredictor, "forward", lambda self, *a, **k: calls.append(self.training) or real(self, *a, **k)
    )
    _train(
        smoke_overrides,
        tmp_path,
        [
            "recipe=parser_fed_twin",
            "training.distance_loss_weight=0",
            "training.max_steps=3",
            "training.max_epochs=1",
            "training.limit_train_batches=3",
        ],
    )
    assert True not in calls  # run in evaluation only (D̂ quality), never in a training step
    trained = load_trained(tmp_path / "checkpoints" / "last.ckpt")
    from parserfree.predictor.syntax_model import SyntaxModel

    fresh = SyntaxModel(
        trained.encoder_config,
        trained.predictor_config,
        trained.task,
        max(2, len(trained.label_names)),
        seed=trained.experiment["seed"],
        dep_labels=trained.dep_labels,
    ).predictor.state_dict()
    assert all(torch.equal(v, fresh[k]) for k, v in trained.model.predictor.state_dict().items())


@pytest.mark.slow
def test_clipped_apart_the_predictors_gradients_do_not_move_the_encoders_step(smoke_overrides, tmp_path):
    """At λ > 0 with the predictor's loss kept off the encoder, one clipped norm over every parameter still ties
    the encoder's step to the predictor's gradients (a predictor with other gradients, here a larger λ, gives
    the encoder other weights); ``training.grad_clip_predictor_apart`` clips each on its own norm, so the
    encoder ends exactly as it would beside any predictor."""
    common = [
        "recipe=parser_fed_twin",
        "training.distance_grad_to_encoder=false",
        "training.grad_clip=0.001",  # binding at every step
        "training.max_steps=4",
        "training.max_epochs=1",
        "training.limit_train_batches=4",
    ]

    def encoder_after(weight: float, apart: bool) -> dict:
        out = tmp_path / f"{weight}-{apart}"
        _train(
            smoke_overrides,
            out,
            [
                *common,
                f"training.distance_loss_weight={weight}",
                f"training.grad_clip_predictor_apart={str(apart).lower()}",
            ],
        )
        state = load_trained(out / "checkpoints" / "last.ckpt").model.state_dict()
        return {k: v for k, v in state.items() if not k.startswith("predictor.")}

    joint = [encoder_after(weight, apart=False) for weight in (1.0, 20.0)]
    assert any(not torch.equal(joint[0][k], joint[1][k]) for k in joint[0])  # the fixture shows the tie
    apart = [encoder_after(weight, apart=True) for weight in (1.0, 20.0)]
    assert all(torch.equal(apart[0][k], apart[1][k]) for k in apart[0]), "the predictor moved the encoder"
