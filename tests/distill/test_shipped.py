"""Shipped weights (``builtin:<name>``): a float16 copy that loads as the same model, a record whose sha256
is checked on every use, never replaced by a worse one, and reachable wherever a checkpoint path is."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest
import torch

from parserfree.core.checkpoints import CheckpointError, load_trained
from parserfree.distill import shipped
from parserfree.distill.shipped import read_record, resolve_weights, ship, shipped_checkpoint, shipped_names


def scores(uas: float) -> dict:
    return {"dev": {"uas": uas}, "test": {"uuas": uas + 2, "uas": uas, "las": uas - 3}}


@pytest.fixture
def pretrained(recipe_checkpoint):
    return recipe_checkpoint("pretrain_predictor")


def test_shipped_copy_is_float16_and_loads_as_the_same_model(pretrained, tmp_path):
    record = ship(pretrained, "p", "parserfree ship --config c --name p", scores(80.0), {"d": 1}, root=tmp_path)
    path = shipped_checkpoint("p", tmp_path)
    raw = torch.load(path, map_location="cpu", weights_only=True)["state_dict"]
    assert {v.dtype for v in raw.values() if v.is_floating_point()} == {torch.float16}
    assert record["bytes"] == path.stat().st_size < pretrained.stat().st_size
    original, copy = load_trained(pretrained).model.state_dict(), load_trained(path).model.state_dict()
    for key, value in original.items():
        assert copy[key].dtype == value.dtype  # read back as float32
        torch.testing.assert_close(copy[key], value, atol=2e-3, rtol=1e-3)
    assert shipped_names(tmp_path) == ["p"] and read_record("p", tmp_path)["command"].startswith("parserfree ship")


def test_a_damaged_shipped_file_is_refused_naming_the_sha256(pretrained, tmp_path):
    ship(pretrained, "p", "cmd", scores(80.0), {}, root=tmp_path)
    path = tmp_path / "p" / shipped.WEIGHTS
    data = bytearray(path.read_bytes())
    data[-100] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="sha256 .* is not the recorded"):
        shipped_checkpoint("p", tmp_path)


def other_weights(checkpoint, path):
    """A copy of ``checkpoint`` with other weights (another training's result)."""
    ckpt = torch.load(checkpoint, map_location="cpu", weights_only=True)
    key = next(k for k, v in ckpt["state_dict"].items() if v.is_floating_point())
    ckpt["state_dict"][key] = ckpt["state_dict"][key] + 1.0
    torch.save(ckpt, path)
    return path


def test_a_worse_parser_does_not_replace_the_shipped_one(pretrained, tmp_path):
    ship(pretrained, "p", "first", scores(80.0), {}, root=tmp_path / "models")
    other = other_weights(pretrained, tmp_path / "other.ckpt")
    with pytest.raises(CheckpointError, match="not better, not replaced"):
        ship(other, "p", "worse", scores(79.0), {}, root=tmp_path / "models")
    assert read_record("p", tmp_path / "models")["command"] == "first"
    assert not (tmp_path / "models" / "p" / (shipped.WEIGHTS + ".new")).exists()  # nothing left behind
    ship(other, "p", "better", scores(81.0), {}, root=tmp_path / "models")
    assert read_record("p", tmp_path / "models")["command"] == "better"
    ship(pretrained, "p", "forced", scores(70.0), {}, root=tmp_path / "models", force=True)
    assert read_record("p", tmp_path / "models")["command"] == "forced"


def test_shipping_the_same_weights_again_updates_the_record(pretrained, tmp_path, monkeypatch):
    """A bench's scores are added to the record of the weights already shipped, whatever the scores say — also
    from another process (the float16 file's bytes must not depend on a temporary name)."""
    first = ship(pretrained, "p", "first", scores(80.0), {}, root=tmp_path)
    monkeypatch.setattr("os.getpid", lambda: 424242)  # the next ship as another process would run it
    again = ship(pretrained, "p", "again", scores(80.0), {}, {"spacy_scorer": {"uas": 79.0}}, root=tmp_path)
    assert again["sha256"] == first["sha256"] and read_record("p", tmp_path)["spacy_scorer"] == {"uas": 79.0}


def test_an_unknown_builtin_name_lists_the_shipped_ones(pretrained, tmp_path, monkeypatch):
    ship(pretrained, "p", "cmd", scores(80.0), {}, root=tmp_path)
    monkeypatch.setattr(shipped, "models_dir", lambda: tmp_path)
    with pytest.raises(CheckpointError, match=r"builtin:nope: no such shipped model \(shipped: p\)"):
        resolve_weights("builtin:nope")
    assert resolve_weights("builtin:p") == str(tmp_path / "p" / shipped.WEIGHTS)
    assert resolve_weights("runs/x/best.ckpt") == "runs/x/best.ckpt" and resolve_weights(None) is None


def test_a_builtin_start_is_fingerprinted_by_its_file_and_pretrains_nothing(pretrained, tmp_path, monkeypatch):
    from parserfree.distill.config import load_config
    from parserfree.encoder.files import sha256_file
    from parserfree.jobs.stage_records import training_fingerprint
    from parserfree.jobs.stages import pretrain_stage

    ship(pretrained, "p", "cmd", scores(80.0), {}, root=tmp_path)
    monkeypatch.setattr(shipped, "models_dir", lambda: tmp_path)
    config = load_config("configs/smoke.yaml", ["training.init_from=builtin:p", "run.predictor_start=builtin:p"])
    assert training_fingerprint(config)["inputs"]["init_from"] == sha256_file(tmp_path / "p" / shipped.WEIGHTS)
    chosen = pretrain_stage(config, str(tmp_path / "cache"), progress=False)
    assert chosen["checkpoint"] == str(tmp_path / "p" / shipped.WEIGHTS) and chosen["chosen"] == "shipped (builtin:p)"
    assert not (tmp_path / "cache").exists()  # nothing trained


def test_the_shipped_models_match_their_records():
    """Every model in the repository's models/ loads after its sha256 check (a stale record fails here): a
    parser (a predictor pre-training) or a masked-LM encoder."""
    from parserfree.encoder.masked_words import MASKED_LM

    for name in shipped_names():  # a partial one (a pre-trained encoder's) is checked without its encoder
        partial = bool(read_record(name).get(shipped.COMPLETED_FROM))
        trained = shipped_settings(name) if partial else load_trained(shipped_checkpoint(name))
        assert trained.recipe == "pretrain_predictor" or trained.task == MASKED_LM
        assert partial or trained.dep_labels
        assert read_record(name)["bytes"] <= shipped.MAX_FILE_BYTES


@pytest.mark.parametrize(
    "path", ["configs/main/agreement.yaml", "configs/main/sentiment.yaml", "configs/agreement_tower_lm.yaml"]
)
def test_the_main_jobs_rows_fit_the_shipped_encoders_they_start_from(path):
    """Each row the main job fine-tunes from a shipped masked-LM encoder gets one of its own row (parser_free:
    its twin's) whose settings fit the row's model: an encoder size changed in configs/main without a new
    encoder shipped fails here, not half an hour into `parserfree run`."""
    from parserfree.distill.config import load_config
    from parserfree.distill.starts import init_mismatch
    from parserfree.encoder.masked_words import MASKED_LM
    from parserfree.jobs.stages import recipe_config

    config = load_config(path)
    assert set(config.run.encoder_starts) == set(config.run.recipes)  # every row starts like for like
    for recipe in config.run.recipes:
        row = recipe_config(config, recipe, resolve_weights(config.run.predictor_start))
        trained = load_trained(resolve_weights(row.training.init_from))
        assert trained.task == MASKED_LM
        assert trained.recipe == {"parser_free": "parser_fed_twin"}.get(recipe, recipe)
        built = dataclasses.replace(row.encoder, vocab_size=trained.encoder_config.vocab_size)  # the start's own
        tower = row.training.init_predictor_from  # a parser tower grafted on: the encoder start gives no predictor
        assert init_mismatch(trained, built, None if tower else row.predictor) is None
        if tower:
            parser = load_trained(resolve_weights(tower))
            assert parser.vocab.to_dict() == trained.vocab.to_dict() and parser.dep_labels == trained.dep_labels
            assert init_mismatch(parser, built, row.predictor) is None


def test_the_tower_configs_rows_fit_the_shipped_parser_tower():
    """configs/agreement_tower.yaml starts every row from builtin:parser-tower-en: a tower size or predictor
    setting changed there (or in configs/main/parser_tower.yaml) without a new tower shipped fails here."""
    from parserfree.distill.config import load_config
    from parserfree.distill.starts import init_mismatch
    from parserfree.jobs.stages import recipe_config

    config = load_config("configs/agreement_tower.yaml")
    assert config.run.predictor_start == "builtin:parser-tower-en" and not config.run.encoder_starts
    trained = load_trained(resolve_weights(config.run.predictor_start))
    assert trained.predictor_config.has_tower and trained.recipe == "pretrain_predictor"
    for recipe in config.run.recipes:
        row = recipe_config(config, recipe, resolve_weights(config.run.predictor_start))
        assert row.training.init_from == resolve_weights(config.run.predictor_start)
        built = dataclasses.replace(row.encoder, vocab_size=trained.encoder_config.vocab_size)
        assert init_mismatch(trained, built, row.predictor) is None


def test_every_shipped_parser_fits_the_config_its_record_names():
    """Each shipped parser's record names the config that rebuilds it (``parserfree ship --config``): a size
    changed in that config (e.g. configs/main/parser_tower_ff256.yaml's feed-forward width) without the model
    shipped again fails here, since the recorded command would no longer make the shipped weights."""
    from parserfree.distill.config import load_config
    from parserfree.distill.starts import init_mismatch

    parsers = set()
    for name in shipped_names():
        trained = shipped_settings(name)  # a partial one's settings, without completing it from its encoder
        if trained.recipe != "pretrain_predictor":  # a masked-LM encoder: its rows are checked above
            continue
        parsers.add(name)
        record = read_record(name)
        config = load_config(record["config"], record.get("settings") or [], record.get("size", "small"))
        theirs = trained.encoder_config  # a pre-trained encoder's sizes and ids are its own, not the config's
        own = ("d_model", "n_heads", "n_layers", "d_ff", "n_features") if config.encoder.pretrained else ()
        built = dataclasses.replace(
            config.encoder, vocab_size=theirs.vocab_size, **{key: getattr(theirs, key) for key in own}
        )
        assert init_mismatch(trained, built, config.predictor) is None, name
    assert {"parser-en", "parser-tower-en", "parser-tower-en-ff256", "predictor-minilm-l6"} <= parsers


def shipped_settings(name: str) -> SimpleNamespace:
    """What ``init_mismatch`` reads of a shipped model (its settings, recipe and task), from its own file."""
    from parserfree.core.checkpoints import checkpoint_configs, read_checkpoint

    meta = read_checkpoint(shipped.shipped_file(name))["parserfree"]
    encoder, predictor = checkpoint_configs(meta)
    return SimpleNamespace(encoder_config=encoder, predictor_config=predictor, recipe=meta["recipe"], task=meta["task"])
