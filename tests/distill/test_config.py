from pathlib import Path

import pytest

from parserfree.core.parse import DEFAULT_MODEL
from parserfree.distill.config import ConfigError, load_config, save_config


def test_every_shipped_config_loads():
    for name in ("default", "parser_free", "parser_fed", "no_syntax", "pretrain_predictor", "smoke"):
        config = load_config(f"configs/{name}.yaml")
        assert config.recipe in name or name in ("default", "smoke")


def test_extends_and_overrides():
    config = load_config("configs/smoke.yaml", ["training.lr=5e-4", "encoder.bias.max_distance=5"])
    assert config.training.lr == 5e-4 and config.encoder.bias.max_distance == 5
    assert config.encoder.d_model == 32  # from smoke.yaml
    assert config.parse.spacy_model == DEFAULT_MODEL  # the code default


@pytest.mark.parametrize(
    "override, key",
    [
        ("training.lrr=0.1", "training.lrr"),
        ("trainin.lr=0.1", "trainin"),
        ("training.lr=fast", "training.lr"),
        ("training.batch_size=2.5", "training.batch_size"),
        ("training.min_steps=-1", "training.min_steps"),
        ("training.predictor_lr_multiplier=0", "training.predictor_lr_multiplier=0.0 must be > 0"),
        ("training.lr=0", "training.lr=0.0 must be > 0"),
        ("training.lr=.nan", "training.lr=nan must be a finite number"),
        ("encoder.n_head=3", "n_head"),
        ("encoder.n_heads=3", "encoder.n_heads=3 must divide"),
        ("predictor.form=tree", "predictor.form"),
        ("recipe=magic", "recipe"),
        ("training.teacher_forcing_fraction=2", "training.teacher_forcing_fraction"),
        ("training.teacher_forcing_end=-0.5", "training.teacher_forcing_end"),
        ("run.recipes=[parser_free]", "run.recipes"),
        ("threads=0", "threads"),
        ("encoder.n_feature_buckets=64", "encoder.n_feature_buckets=64 must equal vocab.n_feature_buckets"),
        ("encoder.dropout=1.5", "encoder.dropout"),
        ("predictor.arc_dim=big", "predictor.arc_dim"),
    ],
)
def test_bad_settings_name_the_key(override, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config("configs/smoke.yaml", [override])


def test_parser_free_needs_a_predictor_layer():
    with pytest.raises(ConfigError, match="predictor_layer"):
        load_config("configs/smoke.yaml", ["encoder.predictor_layer=0"])


def test_clipping_apart_is_refused_where_nothing_is_clipped():
    """With training.grad_clip=0, grad_clip_predictor_apart=true would silently do nothing."""
    with pytest.raises(ConfigError, match="grad_clip_predictor_apart=true does nothing"):
        load_config("configs/smoke.yaml", ["training.grad_clip=0", "training.grad_clip_predictor_apart=true"])
    assert load_config("configs/smoke.yaml", ["training.grad_clip_predictor_apart=true"]).training.grad_clip == 1.0


def test_task_gradient_setting_is_refused_where_the_task_never_reads_predicted_distances():
    """With teacher forcing throughout, task_grad_to_predictor=true would silently do nothing."""
    with pytest.raises(ConfigError, match="task_grad_to_predictor=true does nothing"):
        load_config("configs/smoke.yaml", ["training.teacher_forcing_end=1", "training.task_grad_to_predictor=true"])
    config = load_config(
        "configs/smoke.yaml", ["training.teacher_forcing_end=0.5", "training.task_grad_to_predictor=true"]
    )
    assert config.training.task_grad_to_predictor  # it acts on the batches that read D̂
    load_config("configs/smoke.yaml", ["recipe=parser_fed_twin", "training.teacher_forcing_end=1"])


def test_invalid_yaml_names_the_line(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("recipe: parser_free\ntraining:\n  lr: [1,\n")
    with pytest.raises(ConfigError, match=r"bad.yaml:\d+: invalid YAML"):
        load_config(p)


def test_resolved_config_round_trips(tmp_path):
    config = load_config("configs/smoke.yaml", ["seed=3"])
    save_config(config, tmp_path / "config.yaml")
    again = load_config(tmp_path / "config.yaml")
    assert again.to_dict() == config.to_dict()


def test_recipes_fix_their_settings_visibly():
    fed = load_config("configs/smoke.yaml", ["recipe=parser_fed"])
    assert fed.encoder.predictor_layer == 1  # as configured: nothing rewritten behind the user's back
    assert fed.fixed_changes() == ["encoder.predictor_layer: 1 → 0 (fixed by recipe parser_fed)"]
    assert fed.resolved().encoder.predictor_layer == 0 and fed.resolved().encoder.bias.mode == "learned"
    twin = load_config("configs/smoke.yaml", ["recipe=parser_fed_twin"])
    assert twin.fixed_changes() == [] and twin.resolved().to_dict() == twin.to_dict()
    assert fed.predictor_config() is None
    assert load_config("configs/smoke.yaml").fixed_changes() == []  # parser_free fixes nothing


def test_vocabulary_sizes_fill_the_encoder_and_a_stale_size_is_refused():
    config = load_config("configs/smoke.yaml")
    assert config.model_encoder_config(vocab_size=812, n_features=3).vocab_size == 812
    stale = load_config("configs/smoke.yaml", ["encoder.vocab_size=500"])
    with pytest.raises(ConfigError, match="encoder.vocab_size=500 but the vocabulary"):
        stale.model_encoder_config(vocab_size=812, n_features=3)


def test_a_config_without_extends_gets_what_default_yaml_gives(tmp_path):
    """The defaults live in the dataclasses: a user file that does not extend default.yaml must not get other
    settings (it got 2 layers, no layer bias below k and bias LR ×1 while default.yaml said 4, all, ×30)."""
    bare, extending = tmp_path / "bare.yaml", tmp_path / "extending.yaml"
    bare.write_text("data:\n  dataset: vader-nyt\n")
    extending.write_text(f"extends: {Path('configs/default.yaml').resolve()}\ndata:\n  dataset: vader-nyt\n")
    assert load_config(bare) == load_config(extending)
    assert load_config("configs/default.yaml") == load_config(None)


@pytest.mark.parametrize(
    ("old", "new", "value"),
    [
        ("pretrained", "predictor_start", "builtin:parser-en"),
        ("pretrained_encoders", "encoder_starts", {"no_syntax": "builtin:encoder-en-no_syntax"}),
    ],
)
def test_a_renamed_run_key_is_refused_naming_its_new_name_and_read_in_a_record(tmp_path, old, new, value):
    """``run.pretrained`` meant a predictor checkpoint beside ``encoder.pretrained`` (a Hugging Face model):
    the start keys were renamed; a config a person writes with the old key is told the new one, a run's own
    config.yaml (a record) still reads."""
    import yaml

    from parserfree.distill.config import config_from_record, load_config

    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump({"run": {old: value}}))
    with pytest.raises(ConfigError, match=rf"old.yaml: run\.{old} is now run\.{new}$"):
        load_config(path)
    with pytest.raises(ConfigError, match=rf"run\.{old} is now run\.{new}"):
        load_config(None, [f"run.{old}={yaml.safe_dump(value, default_flow_style=True).strip()}"])
    assert getattr(load_config(path, record=True).run, new) == value
    assert getattr(config_from_record({"run": {old: value}}).run, new) == value
