"""Tiny result payloads and a records folder for the results-page tests: two models, two tasks, two seeds."""

from __future__ import annotations

import json
from pathlib import Path


def report_payload(dataset: str = "agreement", twin: float = 71.74, free: float = 71.02) -> dict:
    """A comparison report.json (``reports.report.Report``) with two model rows and no baselines."""
    from parserfree.reports.parts import DistanceQuality
    from parserfree.reports.report import MODEL, DomainResult, ModelRow, Score, Speed

    def row(recipe: str, role: str, speed: float) -> ModelRow:
        return ModelRow(
            name=recipe,
            kind=MODEL,
            role=role,
            recipe=recipe,
            runtime="onnxruntime",
            seeds=1,
            speed=Speed(sentences_per_s=speed, words_per_s=12 * speed, latency_ms_p50=1.25, latency_ms_p95=2.5),
        )

    def score(metric: float) -> Score:
        per_seed = [{"metric_name": "accuracy", "metric": metric, "accuracy": metric}]
        return Score(metric_name="accuracy", metric=metric, metric_sd=None, per_seed=per_seed)

    domain = DomainResult(
        dataset=dataset,
        task="binary",
        n_examples=3054,
        n_pairs=0,
        scores={"parser_fed_twin": score(twin), "parser_free": score(free)},
        agreement=0.97,
        distance=DistanceQuality(uuas=81.6, dspr=0.77, l1=1.5),
    )
    models = {
        "parser_fed_twin": row("parser_fed_twin", "reference", 210.0),
        "parser_free": row("parser_free", "parser_free", 1050.0),
    }
    roles = {"parser_free": "parser_free", "reference": "parser_fed_twin", "baseline": None}
    return one_seed_report(domain, models, roles, speedup=5.0).to_dict()


def one_seed_report(domain, models: dict, roles: dict, contrasts=(), resamples: int = 100, speedup: float = 5.0):
    """A one-seed binary ``Report`` of one domain (its headline) on the test split of a test machine."""
    from parserfree.comparison.scoring import statistics_note
    from parserfree.reports.report import Report

    return Report(
        dataset=domain.dataset,
        split="test",
        task="binary",
        seeds=1,
        threads=2,
        batch_size=32,
        machine="test machine",
        roles=roles,
        models=models,
        domains={domain.dataset: domain},
        contrasts=list(contrasts),
        statistics=statistics_note(1, domain.n_pairs > 0, resamples),
        speedup_end_to_end=speedup,
        versions={"parserfree": "0"},
    )


def curve_payload() -> dict:
    """A curve.json: two fractions (keys with a dot), two seeds, a baseline and one other recipe."""
    runs = [
        {
            "fraction": f,
            "seed": s,
            "recipe": r,
            "n_train": int(1000 * f),
            "metric_name": "accuracy",
            "dev": 0.0,
            "test": test,
        }
        for (f, s, r, test) in [
            (0.5, 0, "no_syntax", 60.0),
            (0.5, 1, "no_syntax", 62.0),
            (0.5, 0, "parser_fed_twin", 61.0),
            (0.5, 1, "parser_fed_twin", 65.0),
            (1.0, 0, "no_syntax", 70.0),
            (1.0, 1, "no_syntax", 72.0),
            (1.0, 0, "parser_fed_twin", 75.0),
            (1.0, 1, "parser_fed_twin", 71.0),
        ]
    ]
    from parserfree.reports.curve_tables import summarise

    return {
        "dataset": "agreement",
        "fractions": [0.5, 1.0],
        "seeds": 2,
        "recipes": ["no_syntax", "parser_fed_twin"],
        "baseline": "no_syntax",
        "runs": runs,
        "summary": summarise(runs),
    }


def write_record(
    root: Path, name: str, payload: dict, kind: str, command: str = "parserfree curve --seeds 2", **extra
) -> Path:
    """A record file under root/docs/results, as ``parserfree results add`` writes one."""
    folder = root / "docs" / "results"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    data = {"command": command, "date": "2026-12-01", "commit": "abc1234", "kind": kind, **extra, "payload": payload}
    path.write_text(json.dumps(data))
    return path


def write_template(root: Path, text: str) -> None:
    """The results page's template under root."""
    folder = root / "docs" / "results"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "template.md").write_text(text)
