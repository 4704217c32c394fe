"""The low-resource curve: nested training shares, one run per fraction × seed × recipe, honest summaries."""

from __future__ import annotations

import json
import statistics

import pytest
from PIL import Image

from parserfree.commands.cli import main
from parserfree.distill.data.datasets import Example, train_subset


def test_smaller_shares_are_subsets_of_larger_ones_and_seeds_pick_different_shares():
    examples = [Example(f"sentence {i}", i % 2, "x") for i in range(200)]
    small, large = train_subset(examples, 0.1, seed=0), train_subset(examples, 0.5, seed=0)
    assert len(small) == 20 and len(large) == 100
    assert {e.text for e in small} <= {e.text for e in large}
    assert [e.text for e in large] == [e.text for e in examples if e in large]  # original order kept
    assert {e.text for e in train_subset(examples, 0.1, seed=1)} != {e.text for e in small}


@pytest.mark.slow
def test_quick_curve_trains_every_cell_and_summarises_the_runs(smoke_overrides, tmp_path, capsys):
    out = tmp_path / "curve"
    args = [
        "curve",
        "--config",
        "configs/smoke.yaml",
        "--quick",
        "--fractions",
        "0.5,1",
        "--seeds",
        "2",
        "--recipes",
        "no_syntax,parser_fed_twin",
        "--out",
        str(out),
        "--quiet",
        *[a for o in [*smoke_overrides, "training.max_steps=4"] for a in ("--set", o)],
    ]
    code = main(args)
    assert code == 0
    curve = json.loads((out / "curve.json").read_text())
    assert len(curve["runs"]) == 2 * 2 * 2 and curve["baseline"] == "no_syntax"
    n_train = {r["fraction"]: r["n_train"] for r in curve["runs"]}
    assert n_train[0.5] < n_train[1.0]
    for fraction in ("0.5", "1"):
        for recipe in ("no_syntax", "parser_fed_twin"):
            values = [r["test"] for r in curve["runs"] if f"{r['fraction']:g}" == fraction and r["recipe"] == recipe]
            assert curve["summary"][fraction][recipe]["mean"] == statistics.fmean(values)
    assert "Gain over no_syntax" in (out / "curve.md").read_text() and "Gain over no_syntax" in capsys.readouterr().out
    # paired verdicts per fraction over seeds × test items, from the runs' own test predictions
    overall = {c["domain"]: c for c in curve["contrasts"] if c["slice"] == "all"}
    assert set(overall) == {"0.5", "1"} and not curve["no_predictions"]
    for fraction, c in overall.items():
        assert (c["a"], c["b"], c["seeds"]) == ("no_syntax", "parser_fed_twin", 2)
        test = {
            r["recipe"]: [
                x["test"] for x in curve["runs"] if f"{x['fraction']:g}" == fraction and x["recipe"] == r["recipe"]
            ]
            for r in curve["runs"]
        }
        assert c["difference"] == pytest.approx(
            statistics.fmean(test["no_syntax"]) - statistics.fmean(test["parser_fed_twin"])
        )
        assert c["verdict"] in ("ahead", "behind", "no difference shown")
    assert "Paired verdicts on the test items" in (out / "curve.md").read_text()
    # the gain at the smaller share against the gain at the largest: the twin's gain over no_syntax per fraction
    (gain,) = curve["gain_contrasts"]
    assert (gain["recipe"], gain["baseline"]) == ("parser_fed_twin", "no_syntax")
    assert (gain["fraction"], gain["against"]) == (0.5, 1.0)
    assert gain["difference"] == pytest.approx(overall["1"]["difference"] - overall["0.5"]["difference"])
    assert "Is the gain larger with less data?" in (out / "curve.md").read_text()
    with Image.open(out / "curve.png") as im:
        assert im.size[0] > 300
    # a second call reuses every finished run
    assert main(args) == 0
    assert "training" not in capsys.readouterr().out


@pytest.mark.slow
def test_predictor_curve_reports_dspr_and_plots_it_against_training_sentences(smoke_overrides, tmp_path):
    """The scaling curve of predictor pre-training: UUAS and DSpr per share, the x axis in sentences."""
    out = tmp_path / "scaling"
    code = main(
        [
            "curve",
            "--config",
            "configs/smoke.yaml",
            "--quick",
            "--fractions",
            "0.5,1",
            "--seeds",
            "1",
            "--recipes",
            "pretrain_predictor",
            "--out",
            str(out),
            "--quiet",
            *[a for o in [*smoke_overrides, "data.task=none", "training.max_steps=4"] for a in ("--set", o)],
        ]
    )
    assert code == 0
    curve = json.loads((out / "curve.json").read_text())
    for fraction, by in curve["summary"].items():
        run = next(r for r in curve["runs"] if f"{r['fraction']:g}" == fraction)
        assert run["metric_name"] == "uuas" and by["pretrain_predictor"]["dspr_mean"] == run["dspr"]
    assert "Test DSpr" in (out / "curve.md").read_text()
    with Image.open(out / "curve.png") as im:
        assert im.size[0] > 1000  # two panels: UUAS and DSpr


def test_curve_trains_at_the_size_it_is_given(monkeypatch, capsys):
    """``curve --size base`` trains the pre-trained MiniLM, and its runs go to their own folder, not the small
    size's (the curve once read the task config as it is, whatever the size)."""
    import parserfree.jobs.curve as curve_job

    seen: dict = {}

    def fake_run_curve(config, out, *args, **kwargs):
        seen.update(config=config, out=out)
        return {}

    monkeypatch.setattr(curve_job, "run_curve", fake_run_curve)
    monkeypatch.setattr(curve_job, "curve_markdown", lambda curve: "")
    assert main(["curve", "--config", "configs/main/agreement.yaml", "--size", "base", "--quiet"]) == 0
    assert seen["config"].encoder.pretrained == "builtin:minilm-l6"
    assert str(seen["out"]) == "runs/curve-agreement-base"
    assert main(["curve", "--config", "configs/main/agreement.yaml", "--quiet"]) == 0
    assert seen["config"].encoder.pretrained is None and str(seen["out"]) == "runs/curve-agreement"
