"""The typed report: report.json reads back into the same Report, an old report.json is refused with a line
saying what to do, and report.md / the index show the verdicts, the power and the margin over baselines."""

from __future__ import annotations

import json

import numpy as np
import pytest
from result_fixtures import one_seed_report
from test_scoring import agreement_fixture, noisy

from parserfree.comparison.like_for_like import Pairing
from parserfree.comparison.scoring import score_domain
from parserfree.reports.markdown import write_index, write_markdown
from parserfree.reports.parts import DistanceQuality
from parserfree.reports.report import BASELINE, MODEL, DomainResult, ModelRow, Report, Speed
from parserfree.reports.tables import headline_table


def agreement_report() -> Report:
    """A report of three model rows and two baselines on minimal pairs, built from ``score_domain``."""
    gold, columns = agreement_fixture(pairs=150, seed=4)
    rng = np.random.default_rng(5)
    preds = {
        "parser_fed_twin": noisy(gold, 0.9, rng),
        "parser_free": noisy(gold, 0.88, rng),
        "no_syntax": noisy(gold, 0.7, rng),
        "majority": np.ones((1, gold.size), dtype=int),
        "verb_form": noisy(gold, 0.55, rng),
    }
    kinds = {n: BASELINE if n in ("majority", "verb_form") else MODEL for n in preds}
    like = [
        Pairing(
            "no_syntax",
            "parser_fed_twin",
            ("no_syntax", "parser_fed_twin"),
            "distance source: none→none vs parser→parser",
        ),
        Pairing(
            "parser_free",
            "parser_fed_twin",
            ("parser_free", "parser_fed_twin"),
            "distance source: scheduled→predicted vs parser→parser",
        ),
    ]
    scored = score_domain("agreement", "binary", gold, columns, preds, kinds, like, 2, resamples=300)
    roles = {"parser_free": "parser_free", "reference": "parser_fed_twin", "baseline": "no_syntax"}
    speed = Speed(sentences_per_s=100.0, words_per_s=900.0, latency_ms_p50=1.0, latency_ms_p95=2.0)
    models = {
        n: ModelRow(name=n, kind=MODEL, role=role, recipe=n, runtime="onnxruntime", seeds=1, speed=speed)
        for role, n in roles.items()
    }
    models |= {
        n: ModelRow(name=n, kind=BASELINE, role=None, recipe=None, runtime="numpy", seeds=1, description="a rule")
        for n in ("majority", "verb_form")
    }
    domain = DomainResult(
        dataset="agreement",
        task="binary",
        n_examples=gold.size,
        n_pairs=scored.n_pairs,
        scores=scored.scores,
        agreement=0.95,
        distance=DistanceQuality(uuas=70.0, dspr=0.7, l1=1.0, chain_uuas=40.0, chain_dspr=0.5),
        breakdown=scored.breakdown,
    )
    return one_seed_report(domain, models, roles, scored.contrasts, resamples=300, speedup=3.0)


def test_report_json_reads_back_into_the_same_report():
    report = agreement_report()
    again = Report.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again == report
    assert again.headline.scores["parser_fed_twin"].over_best_baseline.baseline == "verb_form"
    assert type(again.contrasts[0]).__name__ == "Contrast" and again.statistics.resampling_unit == "minimal pair"


def test_an_old_report_is_refused_with_what_to_do():
    with pytest.raises(ValueError, match="report format 1 is not 2: compare again"):
        Report.from_dict({"dataset": "agreement", "models": {}})


def test_markdown_shows_verdicts_by_bucket_power_pairs_and_the_margin_over_baselines(tmp_path):
    report = agreement_report()
    write_markdown(report.to_dict(), tmp_path / "report.md")  # the JSON form renders as the typed one
    md = (tmp_path / "report.md").read_text()
    assert (
        "## Paired verdicts — agreement" in md
        and "bootstrap over minimal pairs" in md
        and "Holm over the 8 contrasts" in md
    )
    assert "By subject number / attractors: a − b in points" in md and "| sg/2+ (n=" in md
    twin = report.headline.scores["parser_fed_twin"]
    row = next(line for line in headline_table(report).splitlines() if line.startswith("| parser_fed_twin |"))
    assert (
        f"{twin.pair_accuracy:.1f}" in row
        and f"{twin.over_best_baseline.difference:+.1f}" in row
        and "(verb_form)" in row
    )
    ahead = next(c for c in report.contrasts if c.slice == "all" and (c.a, c.b) == ("no_syntax", "parser_fed_twin"))
    line = next(x for x in md.splitlines() if x.startswith("| no_syntax | parser_fed_twin | distance source"))
    assert f"{ahead.difference:+.2f}" in line and f"**{ahead.verdict}**" in line and f"±{ahead.detectable:.2f}" in line
    write_index({"agreement": report}, tmp_path, 60.0)
    index = json.loads((tmp_path / "index.json").read_text())["tasks"]["agreement"]
    assert {(c["a"], c["b"]) for c in index["contrasts"] if c["kind"] == "like_for_like"} == {
        ("no_syntax", "parser_fed_twin"),
        ("parser_free", "parser_fed_twin"),
    }
    assert "Like-for-like verdicts on all 300 items" in (tmp_path / "index.md").read_text()
