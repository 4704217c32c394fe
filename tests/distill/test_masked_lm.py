"""Masked-LM pre-training end to end on fixture text: runs, scores paired by sentence, the start it gives a
task model, and the zero-shot judgment of minimal pairs."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

from parserfree.distill.checkpoints import CheckpointError, load_pretrained, load_trained
from parserfree.distill.config import load_config
from parserfree.distill.masked_lm import WordScores
from parserfree.distill.train import train
from parserfree.language_model import TRAINED_ROWS, language_model_report, perplexity_contrast, sentence_draws


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
    from parserfree.cli import main
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


def test_a_row_named_in_pretrained_encoders_starts_from_its_own_encoder():
    from parserfree.distill.config import ConfigError
    from parserfree.job_stages import recipe_config

    config = load_config(
        "configs/smoke.yaml", ["run.pretrained_encoders={no_syntax: lm/none.ckpt, parser_free: lm/twin.ckpt}"]
    )
    assert recipe_config(config, "no_syntax", "parser.ckpt").training.init_from == "lm/none.ckpt"
    assert recipe_config(config, "parser_free", "parser.ckpt").training.init_from == "lm/twin.ckpt"
    assert recipe_config(config, "parser_fed_twin", "parser.ckpt").training.init_from == "parser.ckpt"
    with pytest.raises(ConfigError, match="pretrained_encoders.plain: the recipe has no predictor"):
        load_config("configs/smoke.yaml", ["run.pretrained_encoders={plain: lm/none.ckpt}"])
    with pytest.raises(ConfigError, match="pretrained_encoders key='nope' must be one of"):
        load_config("configs/smoke.yaml", ["run.pretrained_encoders={nope: lm/none.ckpt}"])
