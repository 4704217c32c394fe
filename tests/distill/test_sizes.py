"""Model sizes (--size): base replaces the task's model and keeps its task; a size's file is checked."""

from __future__ import annotations

import pytest

from parserfree.distill import sizes
from parserfree.distill.config import load_config
from parserfree.encoder.schema import ConfigError


@pytest.mark.parametrize(
    "task", ["configs/main/agreement.yaml", "configs/main/sentiment.yaml", "configs/examples/user_csv.yaml"]
)
def test_size_base_replaces_the_model_and_keeps_the_task(task):
    """Catches a merge that keeps the task's per-recipe encoders or its parser tower under the pre-trained one."""
    small, base = load_config(task), load_config(task, size="base")
    assert base.encoder.pretrained == "builtin:minilm-l6" and small.encoder.pretrained is None
    assert base.run.encoder_starts == {} and small.run.encoder_starts  # replaced, not merged
    assert base.training.init_predictor_from is None and base.predictor.tower_layers == 0
    assert (base.data, base.run.recipes, base.run.compare_datasets) == (
        small.data,
        small.run.recipes,
        small.run.compare_datasets,
    )


def test_an_unknown_size_and_a_size_file_of_sections_are_refused(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="--size 'huge' must be one of small, base"):
        load_config("configs/smoke.yaml", size="huge")
    (tmp_path / "odd.yaml").write_text("encoder:\n  d_model: 8\n")
    monkeypatch.setitem(sizes.SIZES, "odd", str(tmp_path / "odd.yaml"))
    with pytest.raises(ConfigError, match="odd.yaml: 'encoder' is not a section.key setting"):
        load_config("configs/smoke.yaml", size="odd")


def test_set_overrides_apply_after_the_size():
    config = load_config("configs/main/agreement.yaml", ["training.lr=1e-4"], size="base")
    assert config.training.lr == 1e-4


def test_a_size_that_extends_another_keeps_its_settings_and_replaces_its_own(tmp_path, monkeypatch):
    """Catches an extends that drops the parent's settings (a wide student without its teacher labels) or that
    lets the parent win over the child."""
    wide = load_config("configs/main/agreement.yaml", size="student-wide")
    student = load_config("configs/main/agreement.yaml", size="student")
    assert (wide.training.soft_labels, wide.training.soft_label_weight, wide.training.transfer_limit) == (
        student.training.soft_labels,
        student.training.soft_label_weight,
        student.training.transfer_limit,
    )
    assert (wide.encoder.d_model, student.encoder.d_model) == (128, 64)
    (tmp_path / "a.yaml").write_text("extends: b.yaml\ntraining.lr: 0.5\n")
    (tmp_path / "b.yaml").write_text("extends: a.yaml\n")
    monkeypatch.setitem(sizes.SIZES, "loop", str(tmp_path / "a.yaml"))
    with pytest.raises(ConfigError, match="a.yaml: 'extends' loops back to itself"):
        load_config("configs/smoke.yaml", size="loop")
