"""Stage records of the main job: a re-run with one changed setting rebuilds exactly the stages that depend on
it (saying what changed) and never resumes a ``last.ckpt`` of other settings; a damaged resume point is one
line and exit status 2."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from parserfree.commands.cli import main
from parserfree.core.checkpoints import load_trained
from parserfree.distill.config import load_config
from parserfree.distill.fingerprints import changes
from parserfree.jobs.main_job import run_task
from parserfree.jobs.stage_records import training_fingerprint
from parserfree.reports.parts import to_json

from damage import DAMAGE, damage_file


@pytest.fixture(scope="module")
def job(smoke_overrides, sentiment_file, tmp_path_factory):
    """A small finished task (parser_fed and parser_free, a third of an epoch): (folder, the overrides it ran with)."""
    overrides = [
        *smoke_overrides,
        f"run.compare_datasets=[{sentiment_file}]",
        "run.recipes=[parser_fed,parser_free]",
        "training.max_epochs=1",
        "training.limit_train_batches=0.3",
        "run.compare_max_examples=20",
        "run.latency_examples=2",
    ]
    out = tmp_path_factory.mktemp("stages") / "job"
    run_task(load_config("configs/smoke.yaml", overrides), out, progress=False)
    return out, overrides


def _copy(job, tmp_path):
    target = tmp_path / "job"
    shutil.copytree(job[0], target)
    return target


def test_a_changed_setting_rebuilds_what_depends_on_it_and_nothing_else(job, tmp_path, capsys):
    out = _copy(job, tmp_path)
    before = json.loads((out / "report" / "report.json").read_text())
    (out / "parser_free" / "metrics.json").unlink()  # as if killed at the end: its last.ckpt is of the old settings
    capsys.readouterr()
    report = run_task(load_config("configs/smoke.yaml", [*job[1], "predictor.arc_dim=16"]), out, progress=False)
    printed = capsys.readouterr().out
    assert "parser_fed: finished earlier, skipping" in printed  # parser_fed has no predictor
    assert "parser_free: settings.predictor.arc_dim 32 → 16 — training again from the start" in printed
    assert "(resuming)" not in printed
    assert "export: inputs.checkpoint " in printed and "bundle_parser_fed exists, skipping" in printed
    assert "compare: inputs.bundles.parser_free " in printed
    assert load_trained(out / "parser_free" / "checkpoints" / "best.ckpt").predictor_config.arc_dim == 16
    assert yaml.safe_load((out / "bundle" / "config.yaml").read_text())["predictor"]["arc_dim"] == 16
    assert (
        to_json(report.headline.distance) != before["domains"][before["dataset"]]["distance"]
    )  # the report is of the new model
    assert json.loads((out / "report" / "report.json").read_text())["domains"][report.dataset]["distance"] == to_json(
        report.headline.distance
    )


def test_the_same_settings_skip_every_stage(job, tmp_path, capsys):
    out = _copy(job, tmp_path)
    capsys.readouterr()
    run_task(load_config("configs/smoke.yaml", job[1]), out, progress=False)
    printed = capsys.readouterr().out
    assert printed.count("skipping") == 5 and "training" not in printed and "again" not in printed


def test_fingerprint_of_a_training_run_names_what_changed(smoke_overrides, sentiment_file, tmp_path):
    base = load_config("configs/smoke.yaml", smoke_overrides)
    wider = load_config("configs/smoke.yaml", [*smoke_overrides, "encoder.d_model=64", "encoder.d_ff=128"])
    assert changes(training_fingerprint(base), training_fingerprint(wider)) == [
        "settings.encoder.d_ff 64 → 128",
        "settings.encoder.d_model 32 → 64",
    ]
    edited = tmp_path / "data.jsonl"
    edited.write_text(sentiment_file.read_text().replace("great", "grand", 1))
    other = load_config("configs/smoke.yaml", [*smoke_overrides, f"data.dataset={edited}"])
    assert any(c.startswith("inputs.data ") for c in changes(training_fingerprint(base), training_fingerprint(other)))
    same_place = load_config("configs/smoke.yaml", [*smoke_overrides, "threads=1", "data.cache_dir=/elsewhere"])
    assert changes(training_fingerprint(base), training_fingerprint(same_place)) == []


@pytest.mark.parametrize("kind", DAMAGE)
def test_run_with_a_damaged_resume_point_is_one_line(job, tmp_path, capsys, kind):
    out = _copy(job, tmp_path)
    shutil.copy(out / "config.yaml", tmp_path / "job.yaml")  # `run` names a task's folder after its config
    (out / "parser_free" / "metrics.json").unlink()
    record = out / "stages" / "parser_free.json"
    record.write_text(json.dumps({**json.loads(record.read_text()), "finished": False}))  # killed mid-training
    last = out / "parser_free" / "checkpoints" / "last.ckpt"
    damage_file(last, kind)
    assert main(["run", "--config", str(tmp_path / "job.yaml"), "--out", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"parserfree: error: {last}: ") and "\n" not in err
    assert err.endswith("delete it to train parser_free from the start")


def test_report_shows_the_int8_variant_next_to_fp32(job):
    out, _ = job
    report = json.loads((out / "report" / "report.json").read_text())
    manifest = json.loads((out / "bundle" / "manifest.json").read_text())
    assert report["variants"] == manifest["evaluation"] and set(report["variants"]["variants"]) >= {"default", "int8"}
    int8 = report["variants"]["variants"]["int8"]
    row = next(line for line in (out / "report" / "report.md").read_text().splitlines() if line.startswith("| int8 |"))
    assert f"{100 * int8['agreement_with_fp32']:.1f}%" in row and f"{int8['metric']:.2f}" in row


def test_a_setting_added_later_at_its_old_value_leaves_earlier_records_fresh():
    """data.split_column came after records were written: at null it computes what they did, so a record
    without it is not stale; set, it is a change."""
    from parserfree.distill.config import load_config
    from parserfree.distill.fingerprints import changes, without
    from parserfree.jobs.stage_records import training_fingerprint

    now = training_fingerprint(load_config("configs/smoke.yaml", []))
    before = {**now, "settings": without(now["settings"], ("data.split_column",))}
    assert "split_column" not in now["settings"]["data"] and not changes(before, now)
    set_ = training_fingerprint(load_config("configs/smoke.yaml", ["data.dataset=my.csv", "data.split_column=split"]))
    assert "settings.data.split_column (new) split" in changes(before, set_)


@pytest.mark.parametrize(
    "recipe, stale",
    [
        ("plain", False),
        ("parser_fed", False),
        ("pretrain_predictor", False),
        ("no_syntax", True),
        ("parser_fed_twin", True),
    ],
)
def test_clipping_the_predictor_apart_stales_only_the_records_it_changes(recipe, stale):
    """training.grad_clip_predictor_apart changes nothing in a run without a predictor or without a task (one part
    to clip): its record stays fresh there, and is stale in a row that co-trains a predictor with its task."""
    from parserfree.distill.config import load_config
    from parserfree.distill.fingerprints import changes
    from parserfree.jobs.stage_records import training_fingerprint

    off, on = (
        training_fingerprint(load_config("configs/smoke.yaml", [f"recipe={recipe}", *extra]))
        for extra in ([], ["training.grad_clip_predictor_apart=true"])
    )
    assert changes(off, on) == (["settings.training.grad_clip_predictor_apart (new) true"] if stale else [])
