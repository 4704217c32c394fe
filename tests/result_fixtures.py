"""Tiny result payloads and a records folder for the results-page tests: two models, two tasks, two seeds."""

from __future__ import annotations

import json
from pathlib import Path


def report_payload(dataset: str = "agreement", twin: float = 71.74, free: float = 71.02) -> dict:
    """A comparison report.json with the fields its headline table reads."""
    def model(recipe: str, metric: float, speed: float) -> dict:
        return {"recipe": recipe, "metric_name": "accuracy", "metric": metric, "sentences_per_s": speed,
                "words_per_s": 12 * speed, "latency_ms_p50": 1.25, "latency_ms_p95": 2.5}

    return {"dataset": dataset, "split": "test", "n_examples": 3054, "threads": 2,
            "models": {"parser_fed_twin": model("parser_fed_twin", twin, 210.0),
                       "parser_free (onnx)": model("parser_free", free, 1050.0)},
            "distance": {"uuas": 81.6, "dspr": 0.77, "l1": 1.5}, "speedup_end_to_end": 5.0, "agreement": 0.97,
            "versions": {"parserfree": "0"}}


def curve_payload() -> dict:
    """A curve.json: two fractions (keys with a dot), two seeds, a baseline and one other recipe."""
    runs = [{"fraction": f, "seed": s, "recipe": r, "n_train": int(1000 * f), "metric_name": "accuracy", "dev": 0.0,
             "test": test} for (f, s, r, test) in [
                 (0.5, 0, "no_syntax", 60.0), (0.5, 1, "no_syntax", 62.0), (0.5, 0, "parser_fed_twin", 61.0),
                 (0.5, 1, "parser_fed_twin", 65.0), (1.0, 0, "no_syntax", 70.0), (1.0, 1, "no_syntax", 72.0),
                 (1.0, 0, "parser_fed_twin", 75.0), (1.0, 1, "parser_fed_twin", 71.0)]]
    from parserfree.curve import summarise

    return {"dataset": "agreement", "fractions": [0.5, 1.0], "seeds": 2, "recipes": ["no_syntax", "parser_fed_twin"],
            "baseline": "no_syntax", "runs": runs, "summary": summarise(runs)}


def write_record(root: Path, name: str, payload: dict, kind: str, command: str = "parserfree curve --seeds 2",
                 **extra) -> Path:
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
