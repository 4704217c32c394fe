"""Masked-LM pre-training end to end on fixture text: runs, scores paired by sentence, the start it gives a
task model, and the zero-shot judgment of minimal pairs."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import torch

from parserfree.comparison.language_model import language_model_report, perplexity_contrast, sentence_draws
from parserfree.comparison.lm_rows import TRAINED_ROWS
from parserfree.core.checkpoints import CheckpointError, load_trained
from parserfree.distill.config import load_config
from parserfree.distill.data_module import SyntaxDataModule
from parserfree.distill.masked_lm import WordScores, masked_word_scores, sentence_scores, with_hidden
from parserfree.distill.starts import load_pretrained
from parserfree.distill.train import train
from parserfree.predictor.sources import DistanceSource
from parserfree.predictor.syntax_model import Outputs
from parserfree.reports.language_model import render_markdown


def _lm_overrides(tmp_path, recipe: str) -> list[str]:
    return [
        f"data.cache_dir={tmp_path / 'cache'}",
        "data.dataset=agreement",  # the fixture minimal pairs' text: both verb forms are vocabulary words
        "data.task=masked_lm",
        "data.max_examples=null",
        f"recipe={recipe}",
        "training.max_epochs=1",
        "training.max_steps=3",
    ]


@pytest.fixture(scope="module")
def lm_runs(tiny_agreement_module, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("lm")
    runs = tmp_path / "lm"
    for recipe in TRAINED_ROWS:
        train(load_config("configs/smoke.yaml", _lm_overrides(tmp_path, recipe)), runs / recipe, progress=False)
    scheduled = [*_lm_overrides(tmp_path, "parser_free"), "training.teacher_forcing_end=0"]  # trained on D̂ too
    train(load_config("configs/smoke.yaml", scheduled), runs.parent / "scheduled", progress=False)
    return runs


@pytest.mark.slow
def test_every_row_is_scored_on_the_same_hidden_words_and_judges_the_pairs(lm_runs):
    metrics = {r: json.loads((lm_runs / r / "metrics.json").read_text()) for r in TRAINED_ROWS}
    assert all(m["test"]["perplexity"] > 1 and 0 <= m["test"]["accuracy"] <= 100 for m in metrics.values())
    hidden = {m["test"]["hidden_words"] for m in metrics.values()}
    assert len(hidden) == 1 and hidden.pop() > 0
    saved = json.loads((lm_runs / "no_syntax" / "word_scores.json").read_text())
    assert len(saved["n"]) == metrics["no_syntax"]["test"]["n_examples"]  # one entry per test sentence, in order

    report = language_model_report(lm_runs, extra={"scheduled": lm_runs.parent / "scheduled"})
    assert set(report.perplexity) == {*TRAINED_ROWS, "parser_free", "scheduled"}
    assert set(report.places) == {"parser_free", "scheduled"}  # every row read with D̂ has its place
    assert {("scheduled", "no_syntax"), ("scheduled", "parser_fed_twin")} <= {(c.a, c.b) for c in report.contrasts}
    assert report.perplexity["no_syntax"] == pytest.approx(metrics["no_syntax"]["test"]["perplexity"])
    assert report.perplexity["parser_free"] != report.perplexity["parser_fed_twin"]  # D̂, not the parser's D
    assert {(c.a, c.b) for c in report.contrasts} >= {
        ("parser_fed_twin", "no_syntax"),
        ("parser_free", "parser_fed_twin"),
    }
    pairs = report.zero_shot_pairs
    assert pairs["all"] >= 20 and pairs["all"] == pairs["0 attractors"] + pairs["attractors ≥ 1"]
    assert report.zero_shot_left_out < pairs["all"]
    assert all(0 <= v <= 100 for row in report.zero_shot.values() for v in row.values())


@pytest.mark.slow
@torch.no_grad()
def test_the_text_tree_row_reads_the_predictors_tree_of_the_unmasked_text(lm_runs):
    report = language_model_report(lm_runs, text_trees=True)
    assert "parser_free_text" in report.places and "parser_free_text" in report.zero_shot
    assert set(report.trees) == set(report.places)  # each row read with D̂: the trees it reads, scored
    assert report.trees["parser_free_text"] != report.trees["parser_free"]  # unmasked and masked text
    assert all(0 <= v <= 100 for scores in report.trees.values() for v in scores.values())
    assert {("parser_free_text", "no_syntax"), ("parser_free_text", "parser_fed_twin")} <= {
        (c.a, c.b) for c in report.contrasts
    }
    # by hand: the twin reading, as its parser's distances, the predictor's tree of the text before any word
    # is hidden, while the encoder sees the hidden words masked
    twin = load_trained(lm_runs / "parser_fed_twin" / "checkpoints" / "best.ckpt")
    model = twin.model.eval()
    data = SyntaxDataModule(
        load_config(lm_runs / "parser_fed_twin" / "config.yaml"), None, twin.vocab, False, twin.dep_labels
    )
    data.setup()
    nll = hidden = 0.0
    for batch in data.loader("test"):
        predicted = model.predict(batch["word_ids"], batch["feature_ids"], batch["mask"])
        tree = model.bias_distances(DistanceSource.PREDICTED, None, predicted, batch["mask"])
        fed = with_hidden({**batch, "distances": tree}, batch["lm_chosen"], batch["lm_chosen"])
        args = (fed["word_ids"], fed["feature_ids"], fed["mask"], fed["distances"])
        states = model(*args, source=DistanceSource.PARSER, outputs=Outputs.TASK).task
        sentence_nll, sentence_hidden, _ = sentence_scores(model, states, fed["lm_targets"])
        nll, hidden = nll + sentence_nll.sum(), hidden + sentence_hidden.sum()
    assert report.perplexity["parser_free_text"] == pytest.approx(math.exp(nll / hidden))
    # the fixture tells the trees apart: the masked text's D̂ and the parser's D give other perplexities
    assert report.perplexity["parser_free_text"] != pytest.approx(report.perplexity["parser_free"])
    assert report.perplexity["parser_free_text"] != pytest.approx(report.perplexity["parser_fed_twin"])
    assert "parser_free_text" not in language_model_report(lm_runs, pairs=False).perplexity  # asked for only


@pytest.mark.slow
def test_the_masked_parse_row_reads_spacys_tree_of_the_sentence_the_encoder_reads(lm_runs):
    """Parsed with the hidden words kept, spaCy's trees are the twin's own (the same words, in the same
    order): the row is the twin to the last digit; with the hidden words replaced it reads other trees."""
    from parserfree.comparison.language_model import masked_parse_scores

    twin = load_trained(lm_runs / "parser_fed_twin" / "checkpoints" / "best.ckpt")
    config = load_config(lm_runs / "parser_fed_twin" / "config.yaml")
    data = SyntaxDataModule(config, None, twin.vocab, False, twin.dep_labels)
    data.setup()
    report = language_model_report(lm_runs, pairs=False, masked_parse=["[MASK]"])
    kept, kept_trees = masked_parse_scores(twin, data, None, config.parse.spacy_model, batch_size=5)
    own = masked_word_scores(twin.model, data.loader("test"), DistanceSource.PARSER)
    np.testing.assert_array_equal(kept.n, own.n)  # sentence by sentence, in the dataset's order
    np.testing.assert_allclose(kept.nll, own.nll, rtol=1e-5)
    assert kept.perplexity == pytest.approx(report.perplexity["parser_fed_twin"], rel=1e-6)
    replaced = report.perplexity["twin_masked_parse([MASK])"]
    assert replaced != pytest.approx(report.perplexity["parser_fed_twin"], rel=1e-6)
    assert "twin_masked_parse([MASK])" in report.places
    pairs = {(c.a, c.b) for c in report.contrasts}
    assert {("twin_masked_parse([MASK])", "parser_fed_twin"), ("parser_free", "twin_masked_parse([MASK])")} <= pairs
    assert 0 < report.trees["twin_masked_parse([MASK])"]["uuas"] < 100  # some hidden word's arcs moved
    assert kept_trees["uuas"] == pytest.approx(100)  # the twin's own trees, parsed again
    assert "twin_masked_parse([MASK])'s place" in render_markdown(report)


@pytest.mark.slow
def test_the_shipped_encoders_are_compared_as_their_runs_are(lm_runs, tmp_path, monkeypatch):
    """``lm-compare --runs builtin:PREFIX`` reads the shipped encoders PREFIX-<recipe> with the config their
    checkpoints record: the rows' numbers are their runs' up to float16, and a prefix that names no shipped
    encoder of a required row stops with its name."""
    from parserfree.distill import shipped

    for recipe in ("no_syntax", "parser_fed_twin"):  # locality is optional: not shipped here
        best = lm_runs / recipe / "checkpoints" / "best.ckpt"
        shipped.ship(best, f"enc-{recipe}", "test", {}, "fixture", root=tmp_path / "models")
    monkeypatch.setattr(shipped, "models_dir", lambda: tmp_path / "models")
    from_runs = language_model_report(lm_runs, pairs=False)
    from_shipped = language_model_report("builtin:enc", pairs=False)
    assert set(from_shipped.perplexity) == {"no_syntax", "parser_fed_twin", "parser_free"}
    for row, perplexity in from_shipped.perplexity.items():
        assert perplexity == pytest.approx(from_runs.perplexity[row], rel=1e-2)
    assert from_shipped.runs == "builtin:enc"
    with pytest.raises(FileNotFoundError, match="builtin:other-no_syntax"):
        language_model_report("builtin:other", pairs=False)


@pytest.mark.slow
def test_a_task_model_starts_from_the_whole_pretrained_encoder_of_its_row(lm_runs):
    source = load_trained(lm_runs / "parser_fed_twin" / "checkpoints" / "best.ckpt")
    config = load_config(
        "configs/smoke.yaml", [*_lm_overrides(lm_runs.parent, "parser_fed_twin"), "data.task=binary"]
    ).resolved()
    from parserfree.predictor.syntax_model import SyntaxModel

    enc = config.model_encoder_config(len(source.vocab), source.vocab.n_features)
    model = SyntaxModel(enc, config.predictor_config(), "binary", 2, seed=5, dep_labels=source.dep_labels)
    load_pretrained(model, source.path, source)
    theirs = source.model.state_dict()
    for key, value in model.state_dict().items():
        if key.startswith(("encoder.", "predictor.")):
            assert torch.equal(value, theirs[key]), key  # every encoder layer, not only the predictor's layer 1
    assert not any(
        k.startswith("head.") and k in theirs and theirs[k].shape == v.shape for k, v in model.state_dict().items()
    )

    deeper = SyntaxModel(dataclasses.replace(enc, n_layers=enc.n_layers + 1), config.predictor_config(), "binary", 2)
    with pytest.raises(CheckpointError, match="masked-LM encoder of other settings"):
        load_pretrained(deeper, source.path, source)  # a whole encoder only starts a model of its own shape


@pytest.mark.slow
def test_an_ngram_term_added_to_a_pretrained_encoder_starts_at_zero(lm_runs):
    """A masked-LM encoder starts a model whose head has the n-gram term (a head's part: never copied, zero
    at the start), rather than being refused as an encoder of other settings."""
    source = load_trained(lm_runs / "parser_fed_twin" / "checkpoints" / "best.ckpt")
    config = load_config(
        "configs/smoke.yaml", [*_lm_overrides(lm_runs.parent, "parser_fed_twin"), "data.task=binary"]
    ).resolved()
    from parserfree.predictor.syntax_model import SyntaxModel

    enc = config.model_encoder_config(len(source.vocab), source.vocab.n_features)
    model = SyntaxModel(
        dataclasses.replace(enc, ngram_buckets=64), config.predictor_config(), "binary", 2, dep_labels=source.dep_labels
    )
    load_pretrained(model, source.path, source)
    theirs = source.model.state_dict()
    assert all(torch.equal(v, theirs[k]) for k, v in model.state_dict().items() if k.startswith("encoder."))
    assert not model.head.ngrams.table.weight.any()


@pytest.mark.slow
def test_static_vectors_added_to_a_pretrained_encoder_start_as_the_same_function(lm_runs):
    """A masked-LM encoder without static vectors starts a model that reads them: every weight it has is
    copied and the projection stays at zero, so the start computes what the encoder did; the reverse (a
    start that learnt beside vectors, for a model without them) is refused."""
    source = load_trained(lm_runs / "parser_fed_twin" / "checkpoints" / "best.ckpt")
    config = load_config(
        "configs/smoke.yaml", [*_lm_overrides(lm_runs.parent, "parser_fed_twin"), "data.task=binary"]
    ).resolved()
    from parserfree.predictor.syntax_model import SyntaxModel

    enc = config.model_encoder_config(len(source.vocab), source.vocab.n_features)
    with_vectors = dataclasses.replace(enc, static_vectors="en_core_web_md")
    model = SyntaxModel(with_vectors, config.predictor_config(), "binary", 2, dep_labels=source.dep_labels)
    model.encoder.set_static_vectors(torch.randn(enc.vocab_size, 300))
    load_pretrained(model, source.path, source)
    theirs = source.model.state_dict()
    assert all(torch.equal(v, theirs[k]) for k, v in model.state_dict().items() if k in theirs and "head" not in k)
    assert not model.encoder.static_projection.weight.any()  # zero: the vectors add nothing until trained
    words = torch.randint(2, enc.vocab_size, (3, 7))
    features = torch.zeros(3, 7, enc.n_features, dtype=torch.long)
    model.eval(), source.model.eval()
    assert torch.equal(model.encoder.embed(words, features), source.model.encoder.embed(words, features))

    vectors_source = dataclasses.replace(source, encoder_config=with_vectors)
    plain = SyntaxModel(enc, config.predictor_config(), "binary", 2, dep_labels=source.dep_labels)
    with pytest.raises(CheckpointError, match="masked-LM encoder of other settings"):
        load_pretrained(plain, source.path, vectors_source)


TOWER = {"tower_layers": 1, "tower_d_model": 16, "tower_heads": 2, "tower_d_ff": 32}


def _grafted_starts(lm_runs, tmp_path):
    """(a masked-LM encoder with unbiased layer 1 and its meta, a parser tower checkpoint of the same vocabulary
    with random weights) written to ``tmp_path``: the two starts of a grafted model."""
    from checkpoint_edits import edited_meta, model_of, save_checkpoint

    state, meta = edited_meta(lm_runs / "parser_fed_twin" / "checkpoints" / "best.ckpt", bias_all_layers=False)
    encoder = tmp_path / "encoder.ckpt"
    torch.save({"state_dict": {f"model.{k}": v for k, v in state.items()}, "parserfree": meta}, encoder)
    tower_meta = json.loads(json.dumps(meta))  # a parser tower: a predictor pre-training of its own
    tower_meta["predictor"].update(TOWER)
    tower_meta["experiment"]["predictor"].update(TOWER)
    tower_meta.update(task="none", recipe="pretrain_predictor")
    torch.manual_seed(7)
    save_checkpoint(model_of(tower_meta), tower_meta, tmp_path / "tower.ckpt")
    return encoder, tmp_path / "tower.ckpt"


def _grafted_overrides(lm_runs, encoder_path, tower_path) -> list[str]:
    """A binary task's settings grafting the tower beside the masked-LM encoder, the tower kept as it is."""
    return [
        *_lm_overrides(lm_runs.parent, "parser_fed_twin"),
        "data.task=binary",
        "encoder.bias_all_layers=false",
        *(f"predictor.{k}={v}" for k, v in TOWER.items()),
        f"training.init_from={encoder_path}",
        f"training.init_predictor_from={tower_path}",
        "training.distance_loss_weight=0",
    ]


@pytest.mark.slow
def test_a_parser_tower_starts_the_predictor_beside_a_masked_lm_encoder(lm_runs, tmp_path):
    """training.init_predictor_from: the encoder (every layer) from the masked-LM run, the predictor (tower and
    scorers) from the tower — neither overwrites the other; a tower of other words, or a predictor without a
    tower (it would need lower layers it does not bring), is refused in one line."""
    from parserfree.distill.starts import load_pretrained_predictor
    from parserfree.predictor import PredictorConfig
    from parserfree.predictor.syntax_model import SyntaxModel

    encoder_path, tower_path = _grafted_starts(lm_runs, tmp_path)
    encoder, tower = load_trained(encoder_path), load_trained(tower_path)
    predictor = PredictorConfig.from_dict({**encoder.predictor_config.to_dict(), **TOWER})
    model = SyntaxModel(encoder.encoder_config, predictor, "binary", 2, seed=3, dep_labels=encoder.dep_labels)
    load_pretrained(model, encoder_path, encoder, with_predictor=False)
    load_pretrained_predictor(model, tower_path, tower, encoder.vocab, encoder.dep_labels)
    ours, enc_state, tower_state = model.state_dict(), encoder.model.state_dict(), tower.model.state_dict()
    assert all(torch.equal(v, enc_state[k]) for k, v in ours.items() if k.startswith("encoder."))
    assert all(torch.equal(v, tower_state[k]) for k, v in ours.items() if k.startswith("predictor."))
    assert any(not torch.equal(tower_state[k], enc_state[k]) for k in ours if k.startswith("encoder."))

    words = tower.vocab.to_dict()  # the same words in another order: ids that mean other words
    other_words = dataclasses.replace(
        tower, vocab=type(tower.vocab).from_dict({**words, "words": words["words"][::-1]})
    )
    with pytest.raises(CheckpointError, match="vocabulary or dependency labels differ"):
        load_pretrained_predictor(model, tower_path, other_words, encoder.vocab, encoder.dep_labels)
    with pytest.raises(CheckpointError, match="no tower of its own"):
        load_pretrained_predictor(model, encoder_path, encoder, encoder.vocab, encoder.dep_labels)


@pytest.mark.slow
def test_a_grafted_tower_without_the_distance_loss_stays_the_shipped_parser(lm_runs, tmp_path):
    """Trained from both starts with λ = 0, the twin's predictor is the tower it started from, weight for
    weight (it never runs in training, so the served D̂ is the pre-trained parser's), while its encoder learnt;
    the stage record covers the tower's file."""
    from parserfree.jobs.stage_records import training_fingerprint

    encoder_path, tower_path = _grafted_starts(lm_runs, tmp_path)
    sets = _grafted_overrides(lm_runs, encoder_path, tower_path)
    config = load_config("configs/smoke.yaml", sets)
    train(config, tmp_path / "run", progress=False)
    trained = load_trained(tmp_path / "run" / "checkpoints" / "last.ckpt").model.state_dict()
    tower, start = load_trained(tower_path).model.state_dict(), load_trained(encoder_path).model.state_dict()
    assert all(torch.equal(v, tower[k]) for k, v in trained.items() if k.startswith("predictor."))
    assert not all(torch.equal(v, start[k]) for k, v in trained.items() if k.startswith("encoder.layers."))
    assert "init_predictor_from" in training_fingerprint(config)["inputs"]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:You are trying to `self.log\\(\\)`")  # a training step outside a Trainer
def test_the_auxiliary_parser_trains_the_shared_layers_beside_a_tower_and_stays_out_of_the_model(lm_runs, tmp_path):
    """training.auxiliary_parser_weight: init_from's own predictor (on h_1) is kept in training beside the
    tower and its loss reaches layer 1 — the gradient layer 1 gets differs with and without it, from the same
    batch and weights — reading the step's own h_k (layers 1..k run once a step), while the trained model
    (checkpoint, graphs) has no trace of it; a config without a tower is refused in one line."""
    from parserfree.distill.config import ConfigError
    from parserfree.distill.train import auxiliary_parser, started_module

    encoder_path, tower_path = _grafted_starts(lm_runs, tmp_path)
    sets = _grafted_overrides(lm_runs, encoder_path, tower_path)
    start = load_trained(encoder_path)
    grads = {}
    for weight in (0.0, 1.0):
        config = load_config("configs/smoke.yaml", [*sets, f"training.auxiliary_parser_weight={weight}"]).resolved()
        config.encoder = start.encoder_config
        module = started_module(config, start.vocab, ["a", "b"], start.dep_labels, start, load_trained(tower_path))
        if module.auxiliary is not None:  # the encoder start's own predictor, weight for weight
            theirs = start.model.state_dict()
            assert all(torch.equal(v, theirs[f"predictor.{k}"]) for k, v in module.auxiliary.state_dict().items())
        torch.manual_seed(0)
        mask = torch.ones(2, 6, dtype=torch.bool)
        heads = torch.tensor([[1, 1, 1, 2, 3, 4]] * 2)
        from parserfree.predictor.tree_ops import distances_from_heads, steps_for_length

        batch = {
            "word_ids": torch.randint(2, 20, (2, 6)),
            "feature_ids": torch.zeros(2, 6, start.encoder_config.n_features, dtype=torch.long),
            "mask": mask,
            "labels": torch.tensor([0, 1]),
            "heads": heads,
            "distances": distances_from_heads(heads, mask, steps_for_length(6)),
        }
        module.train()
        module.training_step(batch, 0).backward()
        grads[weight] = module.model.encoder.layers[0].feed_forward[0].weight.grad.clone()
    assert not torch.allclose(grads[0.0], grads[1.0])
    assert sum(p.numel() for p in module.auxiliary.parameters()) > 0
    # the auxiliary parser reads the step's own h_k: layers 1..k run once a step, not a second time for it
    passes = []
    lower_from = module.model.encoder.lower_from
    module.model.encoder.lower_from = lambda *a: passes.append(1) or lower_from(*a)  # type: ignore[method-assign]
    module.training_step(batch, 0)
    assert len(passes) == 1
    assert not any(k.startswith("auxiliary") for k in module.model.state_dict())

    with pytest.raises(ConfigError, match="needs a parser tower"):
        plain = load_config(
            "configs/smoke.yaml",
            [
                *_lm_overrides(lm_runs.parent, "parser_fed_twin"),
                "data.task=binary",
                "training.auxiliary_parser_weight=1",
            ],
        ).resolved()
        auxiliary_parser(plain, start)


def test_perplexity_contrast_pairs_sentences_and_refuses_other_hidden_words():
    rng = np.random.default_rng(0)
    n = rng.integers(1, 5, size=400)
    base = rng.gamma(2.0, 2.0, size=400) * n
    a, b = WordScores(base * 0.9, n, n // 2), WordScores(base, n, n // 2)
    diff, ci, p = perplexity_contrast(a, b, sentence_draws(400))
    assert diff < 0 and ci[0] < diff < ci[1] < 0 and p < 1e-3
    noisy = WordScores(base + rng.normal(0, 0.01, 400), n, n // 2)
    assert perplexity_contrast(noisy, b, sentence_draws(400))[2] > 0.05
    with pytest.raises(ValueError, match="same hidden words"):
        perplexity_contrast(WordScores(base, n + 1, n), b, sentence_draws(400))


@pytest.mark.slow
def test_shipping_an_encoder_trains_it_once_then_reuses_the_run(lm_runs, tmp_path, capsys):
    """``parserfree ship --run``: the config's masked-LM run trained into DIR with its stage record, shipped with
    its perplexity; the same command again reuses the finished run (same weights: the record is refreshed)
    instead of training again, and a task config is refused in one line."""
    from parserfree.commands.cli import main
    from parserfree.distill.shipped import read_record

    sets = [f"--set={s}" for s in _lm_overrides(lm_runs.parent, "no_syntax")]
    command = ["ship", "--config", "configs/smoke.yaml", "--run", str(tmp_path / "run"), "--name", "enc"]
    command += ["--models-dir", str(tmp_path / "models"), "--quiet", *sets]
    assert main(command) == 0
    first = read_record("enc", tmp_path / "models")
    assert first["scores"]["test"]["perplexity"] > 1 and "--run" in first["command"]
    assert (tmp_path / "run" / "metrics.json").is_file() and (tmp_path / "stages" / "run.json").is_file()
    capsys.readouterr()
    assert main(command) == 0
    assert "finished earlier, skipping" in capsys.readouterr().out
    assert read_record("enc", tmp_path / "models")["sha256"] == first["sha256"]
    task = [*command[: -len(sets)], *sets, "--set=data.task=binary"]
    assert main(task) == 2
    assert "--run ships a masked-LM encoder" in capsys.readouterr().err


def test_an_encoder_with_a_higher_perplexity_does_not_replace_the_shipped_one():
    from parserfree.distill.shipped import better

    shipped = {"scores": {"test": {"perplexity": 300.0, "accuracy": 20.0}}}
    assert not better({"scores": {"test": {"perplexity": 310.0, "accuracy": 21.0}}}, shipped)
    assert better({"scores": {"test": {"perplexity": 290.0, "accuracy": 19.0}}}, shipped)
    assert better({"scores": {"test": {"uas": 80.0}}}, {"scores": {"test": {"uas": 79.0}}})  # parsers: higher


def test_a_row_named_in_encoder_starts_starts_from_its_own_encoder():
    from parserfree.distill.config import ConfigError
    from parserfree.jobs.stages import recipe_config

    config = load_config(
        "configs/smoke.yaml", ["run.encoder_starts={no_syntax: lm/none.ckpt, parser_free: lm/twin.ckpt}"]
    )
    assert recipe_config(config, "no_syntax", "parser.ckpt").training.init_from == "lm/none.ckpt"
    assert recipe_config(config, "parser_free", "parser.ckpt").training.init_from == "lm/twin.ckpt"
    assert recipe_config(config, "parser_fed_twin", "parser.ckpt").training.init_from == "parser.ckpt"
    with pytest.raises(ConfigError, match="encoder_starts.plain: the recipe has no predictor"):
        load_config("configs/smoke.yaml", ["run.encoder_starts={plain: lm/none.ckpt}"])
    with pytest.raises(ConfigError, match="encoder_starts key='nope' must be one of"):
        load_config("configs/smoke.yaml", ["run.encoder_starts={nope: lm/none.ckpt}"])


def test_beside_a_grafted_tower_a_row_without_an_encoder_start_does_not_take_the_tower_as_its_encoder():
    """Catches the 128-wide student's first failure: with no masked-LM start, each row took the shipped tower
    (its predictor start) as training.init_from, which a tower cannot initialise."""
    from parserfree.jobs.stages import recipe_config

    config = load_config("configs/main/agreement.yaml", size="student-wide")
    assert config.run.encoder_starts == {} and config.training.init_predictor_from
    for recipe in config.run.recipes:
        row = recipe_config(config, recipe, "tower.ckpt")
        assert row.training.init_from is None
        assert row.training.init_predictor_from == config.training.init_predictor_from
