"""Benchmark: accuracy against speed at every model size — parser-free against its parser-fed twin, small, base, student.

For each size's main job (``parserfree run``: runs/main; ``parserfree run --size base``: runs/base;
``parserfree run --size student``: runs/student, the small rows taught by the base model; ``--size
student-wide``: runs/student-wide, the 128-wide students) and each
task, two pipelines from raw text on the task's own test texts, with onnxruntime on the same intra-op threads:

- parser-free: the bundled tokenizer (and, at base, the model's subword tokenizer) → the parser-free task
  graph (``<task>/bundle``), fp32 and, where the bundle has it, int8;
- parser-fed: spaCy's parse (tok2vec + parser) → tree distances → the twin's graph (``<task>/bundle_parser_fed_twin``).

Each is timed at batch 32 (length-sorted batches, as ``ParserFreeModel.predict`` batches a call) and at batch 1
(an even sample over the lengths), every row in turn on each pass and its fastest of ``--repeats`` kept
(``bench/lib/rows.py``). Accuracy is the row's test accuracy in the size's committed record
(``docs/results/<main|base>_<task>.json``: mean over its seeds), else in the job's own report, with the
report's paired verdict of parser-free against the twin on the same items. A point is on the
Pareto front of its task when no other point is at least as fast and at least as accurate, and better in one.
The ratio parser-free / twin end to end is the goal's (≥ 2× at base, batch 32).

    python -m bench.sizes [--small runs/main] [--base runs/base] [--student runs/student]
        [--student-wide runs/student-wide] [--threads 2] [--quick]
    python -m bench.sizes --rescore docs/bench/sizes-avx512-vnni.json --record   # accuracy re-read, no timing

``--rescore`` keeps a record's timings and reads the accuracy and verdicts again from the records (after a
job's seeds were added, say); the record's ``timed`` says when and at which commit the timings were made.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from parserfree.comparison.paired import AHEAD, BEHIND
from parserfree.comparison.pipelines import ModelSource, parser_fed_pipeline, resolve_model, tokenizer_pipeline
from parserfree.distill.teacher import SpacyTeacher
from parserfree.export.runtime import ParserFreeModel
from parserfree.export.timing import machine
from parserfree.reports.report import Report, as_report

from bench.lib.common import REPO, benchmark_texts, finish, format_table, parse, script_arguments
from bench.lib.rows import measure

SIZES = ("small", "base", "student", "student-wide")
TASKS = ("agreement", "sentiment")
FREE, FED = "parser_free", "parser_fed_twin"
GOAL_BASE_RATIO = 2.0  # parser-free ≥ 2× its parser-fed twin end to end at batch 32, at size base
GOAL_STUDENT_RATIO = 10.0  # the student parser-free ≥ 10× the base parser-fed twin end to end, batch 32 and 1


def arguments() -> argparse.ArgumentParser:
    parser = script_arguments(
        __file__, __doc__, threads=2, quick="300 texts at batch 32, 60 at batch 1, one pass", cache_dir=True
    )
    parser.add_argument("--small", default="runs/main", help="the small size's main job (default runs/main)")
    parser.add_argument("--base", default="runs/base", help="the base size's main job (default runs/base)")
    parser.add_argument("--student", default="runs/student", help="the students' job (default runs/student)")
    parser.add_argument(
        "--student-wide", default="runs/student-wide", help="the 128-wide students' job (default runs/student-wide)"
    )
    parser.add_argument("--tasks", default=",".join(TASKS), help=f"tasks to time (default {','.join(TASKS)})")
    parser.add_argument("--repeats", type=int, help="passes per row, the fastest kept (default 2; --quick 1)")
    parser.add_argument("--rescore", metavar="RECORD", help="a sizes record whose timings to keep (no timing)")
    return parser


RECORD_PREFIX = {
    "small": "main",
    "base": "base",
    "student": "student",
    "student-wide": "student_wide",
}  # docs/results/<prefix>_<task>.json: a size's recorded job


def report_of(size: str, task: str, task_dir: Path) -> tuple[Report, str]:
    """The task's report and where it was read: the size's committed record, else the job's report.json."""
    record = REPO / "docs" / "results" / f"{RECORD_PREFIX[size]}_{task}.json"
    if record.is_file():
        return as_report(json.loads(record.read_text(encoding="utf-8"))["payload"]), str(record.relative_to(REPO))
    path = task_dir / "report" / "report.json"
    return as_report(json.loads(path.read_text(encoding="utf-8"))), str(path)


def report_scores(report: Report) -> tuple[dict[str, dict], dict | None, str]:
    """Per row its test accuracy (mean, sd, seeds) in a task's report, parser-free's contrast with the twin
    (difference, interval, p_Holm, verdict) and the headline dataset."""
    domain = report.domains[report.dataset]
    rows = {name: {"accuracy": s.metric, "sd": s.metric_sd, "seeds": report.seeds} for name, s in domain.scores.items()}
    contrast = next(
        (c for c in report.contrasts if c.domain == report.dataset and c.slice == "all" and {c.a, c.b} == {FREE, FED}),
        None,
    )
    if contrast is None:
        return rows, None, report.dataset
    sign = 1 if contrast.a == FREE else -1
    lo, hi = (sign * x for x in contrast.ci95)
    found = {"difference": sign * contrast.difference, "ci95": sorted([lo, hi]), "p_holm": contrast.p_holm}
    flipped = {AHEAD: BEHIND, BEHIND: AHEAD}
    found["verdict"] = contrast.verdict if sign == 1 else flipped.get(contrast.verdict, contrast.verdict)
    return rows, found, report.dataset


def task_rows(task_dir: Path, threads: int, teacher: SpacyTeacher) -> dict[str, tuple[str, Any]]:
    """name → (runtime, pipeline) of a task's parser-free graphs and its parser-fed twin."""
    free = ParserFreeModel.load(task_dir / "bundle", threads=threads)
    rows: dict[str, tuple[str, Any]] = {}
    for variant, name in (("default", "parser-free fp32"), ("int8", "parser-free int8")):
        if variant in free.manifest.get("models", {}):
            model = (
                free
                if variant == "default"
                else ParserFreeModel.load(task_dir / "bundle", threads=threads, variant=variant)
            )
            rows[name] = (
                "onnxruntime",
                tokenizer_pipeline(ModelSource(model, None, None), free.tokenize, distances=False),
            )
    fed = resolve_model(task_dir / "bundle_parser_fed_twin", threads)
    rows["parser-fed twin"] = ("onnxruntime", parser_fed_pipeline(ModelSource(fed.bundle, None, None), teacher))
    return rows


def pareto(points: list[dict]) -> None:
    """Mark each point of one task and batch size that no other point beats on both axes."""
    for p in points:
        p["front"] = not any(
            q is not p
            and q["sentences_per_s"] >= p["sentences_per_s"]
            and q["accuracy"] >= p["accuracy"]
            and (q["sentences_per_s"] > p["sentences_per_s"] or q["accuracy"] > p["accuracy"])
            for q in points
        )


def scored(points: list[dict], found: dict[tuple[str, str], Path]) -> tuple[dict, dict]:
    """Attach to every timed point its row's test accuracy (the size's record, else the job's report);
    returns parser-free's contrast with the twin and where the accuracy was read, by size/task."""
    contrasts, accuracy_from, scores = {}, {}, {}
    for (size, task), task_dir in found.items():
        report, where = report_of(size, task, task_dir)
        scores[size, task] = report_scores(report)
        contrasts[f"{size}/{task}"] = scores[size, task][1]
        accuracy_from[f"{size}/{task}"] = where
    for p in points:
        row = FED if p["model"].startswith("parser-fed") else FREE
        accuracy = scores[p["size"], p["task"]][0].get(row, {}) if (p["size"], p["task"]) in scores else {}
        p.update({k: accuracy.get(k) for k in ("accuracy", "sd", "seeds")})
    return contrasts, accuracy_from


def ratios_of(points: list[dict]) -> dict[str, float]:
    """parser-free fp32 over its parser-fed twin (sentences/s), by size/task/batch."""
    ratios = {}
    for p in points:
        if p["model"] != "parser-free fp32":
            continue
        fed = next(
            (
                q
                for q in points
                if (q["task"], q["size"], q["batch"]) == (p["task"], p["size"], p["batch"])
                and q["model"] == "parser-fed twin"
            ),
            None,
        )
        if fed is not None:
            ratios[f"{p['size']}/{p['task']}/batch_{p['batch']}"] = p["sentences_per_s"] / fed["sentences_per_s"]
    return ratios


def student_ratios_of(points: list[dict]) -> dict[str, float]:
    """Each student size's parser-free fp32 over the base parser-fed twin (its teacher's kind), by
    size/task/batch."""
    speed = {(p["size"], p["task"], p["batch"], p["model"]): p["sentences_per_s"] for p in points}
    return {
        f"{size}/{task}/batch_{batch}": speed[size, task, batch, model] / speed["base", task, batch, "parser-fed twin"]
        for size, task, batch, model in speed
        if size.startswith("student")
        and model == "parser-free fp32"
        and ("base", task, batch, "parser-fed twin") in speed
    }


def bounds_of(points: list[dict]) -> dict[str, dict[str, float]]:
    """What the parse costs a sentence and the ratio it allows at base, by task/batch: the parse's share is the
    small twin's time less small parser-free's (the graphs cost about the same there), so at base parser-free
    can be about 1 + parse ms ÷ its own graph's ms as fast as a twin whose graph costs as much as its own."""
    ms = {(p["size"], p["task"], p["batch"], p["model"]): 1000 / p["sentences_per_s"] for p in points}
    bounds = {}
    for size, task, batch, model in ms:
        if size != "base" or model != "parser-free fp32":
            continue
        small_free, small_fed = ms.get(("small", task, batch, model)), ms.get(("small", task, batch, "parser-fed twin"))
        if small_free is None or small_fed is None:
            continue
        parse_ms, graph_ms = small_fed - small_free, ms[size, task, batch, model]
        bounds[f"{task}/batch_{batch}"] = {
            "parse_ms": parse_ms,
            "base_graph_ms": graph_ms,
            "ratio_bound": 1 + parse_ms / graph_ms,
        }
    return bounds


def timed_points(args: argparse.Namespace, found: dict[tuple[str, str], Path], tasks: list[str]) -> list[dict]:
    """Every pipeline of every size and task, timed at batch 32 and 1 (``measure``)."""
    teacher = SpacyTeacher()
    repeats = args.repeats or (1 if args.quick else 2)
    points = []
    for task in tasks:
        sized = {s: found[s, task] for s in SIZES if (s, task) in found}
        if not sized:
            continue
        dataset = report_of(*next(iter((s, task, d) for s, d in sized.items())))[0].dataset
        texts = benchmark_texts(dataset, 300 if args.quick else 1000, args.cache_dir)
        tokenize = ParserFreeModel.load(next(iter(sized.values())) / "bundle").tokenize
        words = {t: len(w) for t, w in zip(texts, tokenize(texts))}
        texts = sorted(texts, key=lambda t: words[t])
        single = texts[:: max(1, len(texts) // (60 if args.quick else 200))]
        rows = {
            f"{s} · {name}": row for s, d in sized.items() for name, row in task_rows(d, args.threads, teacher).items()
        }
        for m in measure(rows, {32: texts, 1: single}, words, repeats):
            size, name = m["model"].split(" · ")
            points.append({**m, "task": task, "size": size, "model": name})
    return points


def main(argv: list[str] | None = None) -> dict:
    args = parse(arguments(), argv)
    folders = {
        "small": Path(args.small),
        "base": Path(args.base),
        "student": Path(args.student),
        "student-wide": Path(args.student_wide),
    }
    tasks = [t for t in args.tasks.split(",") if t]
    if args.rescore:
        kept = json.loads(Path(args.rescore).read_text(encoding="utf-8"))
        old = kept["payload"]
        found = {tuple(k.split("/")): Path(v) for k, v in old["jobs"].items()}
        points = [{k: v for k, v in p.items() if k not in ("accuracy", "sd", "seeds", "front")} for p in old["points"]]
        timed = old.get("timed") or {"date": kept["date"], "commit": kept["commit"]}
        carried = {k: old[k] for k in ("machine", "threads", "quick", "repeats", "load_average")}
    else:
        found = {
            (s, t): folders[s] / t for s in SIZES for t in tasks if (folders[s] / t / "report" / "report.json").exists()
        }
        if not found:
            sys.exit("bench.sizes: no main job found; run `parserfree run` (and `parserfree run --size base`) first")
        load_before = os.getloadavg()[0]
        points = timed_points(args, found, tasks)
        timed = None
        carried = {
            "machine": machine(),
            "threads": args.threads,
            "quick": args.quick,
            "repeats": args.repeats or (1 if args.quick else 2),
            "load_average": [load_before, os.getloadavg()[0]],
        }
    contrasts, accuracy_from = scored(points, found)
    for task in dict.fromkeys(p["task"] for p in points):
        for batch in (32, 1):
            pareto([p for p in points if p["task"] == task and p["batch"] == batch and p["accuracy"] is not None])
    ratios = ratios_of(points)
    student_ratios = student_ratios_of(points)
    result = {
        "bounds": bounds_of(points),
        **carried,
        "timed": timed,
        "jobs": {f"{s}/{t}": str(d) for (s, t), d in found.items()},
        "points": points,
        "contrasts": contrasts,
        "accuracy_from": accuracy_from,
        "ratios": ratios,
        "student_ratios": student_ratios,
        "goal": {
            "base_ratio_batch_32": GOAL_BASE_RATIO,
            "met": {
                k: v >= GOAL_BASE_RATIO for k, v in ratios.items() if k.startswith("base/") and k.endswith("batch_32")
            },
            "student_over_base_twin": GOAL_STUDENT_RATIO,
            "student_met": {k: v >= GOAL_STUDENT_RATIO for k, v in student_ratios.items()},
        },
    }
    return finish(result, args, tables)


def tables(result: dict[str, Any]) -> str:
    """Per task a table of every point (size, model, batch, accuracy, speed, front), then the ratios and verdicts."""
    lines = []
    for task in dict.fromkeys(p["task"] for p in result["points"]):
        rows = [p | {"front_mark": "◆" if p.get("front") else ""} for p in result["points"] if p["task"] == task]
        lines += [
            f"**{task}**",
            "",
            format_table(
                rows,
                [
                    ("size", "size", ""),
                    ("model", "pipeline", ""),
                    ("batch", "batch", "d"),
                    ("accuracy", "test accuracy %", ".2f"),
                    ("sd", "± sd", ".2f"),
                    ("sentences_per_s", "sentences/s", ",.0f"),
                    ("latency_ms_p50", "p50 ms", ".2f"),
                    ("front_mark", "front", ""),
                ],
            ),
            "",
        ]
    lines.append(
        "parser-free fp32 over its parser-fed twin, end to end: "
        + "; ".join(f"{k} {v:.2f}×" for k, v in result["ratios"].items())
    )
    for key, c in result["contrasts"].items():
        if c:
            lines.append(
                f"- {key}: parser_free − twin {c['difference']:+.2f} [{c['ci95'][0]:+.2f}, {c['ci95'][1]:+.2f}] points, "
                f"p_Holm {c['p_holm']:.3g}, {c['verdict']}"
            )
    lines.append("- accuracy from: " + "; ".join(f"{k} {v}" for k, v in result["accuracy_from"].items()))
    if result.get("timed"):
        lines.append(
            f"- timings kept from the record of {result['timed']['date']} (commit {result['timed']['commit']})"
        )
    for key, bound in result.get("bounds", {}).items():
        lines.append(
            f"- bound at base, {key}: spaCy's parse costs {bound['parse_ms']:.2f} ms a sentence (small twin − small "
            f"parser-free), the base graph {bound['base_graph_ms']:.2f} ms, so parser-free can be about "
            f"{bound['ratio_bound']:.2f}× its twin"
        )
    met = result["goal"]["met"]
    lines.append(
        f"- goal: parser-free ≥ {GOAL_BASE_RATIO:.0f}× its twin at base, batch 32: "
        + (", ".join(f"{k} {'met' if v else 'missed'}" for k, v in met.items()) or "no base job")
    )
    student = result.get("student_ratios") or {}
    if student:
        lines.append(
            f"- goal: the student parser-free ≥ {GOAL_STUDENT_RATIO:.0f}× the base parser-fed twin end to end: "
            + ", ".join(f"{k} {v:.1f}× {'met' if v >= GOAL_STUDENT_RATIO else 'missed'}" for k, v in student.items())
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
