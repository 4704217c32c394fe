"""The students' report: every student row against its teacher, against the row it was before distillation,
and the student rows against each other, with paired verdicts on every item and on the attractor items.

Reads three jobs' task folders: the students (``parserfree run --size student``), the teacher's job
(``--size base``: the teacher row is the one the student's soft-label record names) and, optionally, the
undistilled small job (``parserfree run``). Every verdict pairs the same test items
(``comparison.across_runs``).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from ..comparison.across_runs import RunRow, compare_across_runs
from ..distill.config import load_config
from ..distill.data.readers import DataError
from ..distill.soft_labels import read_soft_labels, resolve
from ..reports.report import as_report
from ..reports.slices import ALL, slice_name

ATTRACTOR = slice_name("nearest_noun", "attractor")  # items whose nearest noun before the verb misleads
SHOWN_SLICES = (ALL, ATTRACTOR)
FREE, TWIN, UNBIASED = "parser_free", "parser_fed_twin", "no_syntax"


def student_pairs(recipes: list[str], undistilled: bool) -> list[tuple[str, str, str]]:
    """(a, b, what differs) of the report: each student row against the teacher and (with the undistilled
    job) against its own undistilled row, the student twin against the student no_syntax and the student
    parser_free against the student twin."""
    pairs = [(f"student · {r}", "teacher", "student against teacher") for r in recipes]
    if undistilled:
        pairs += [(f"student · {r}", f"small · {r}", "the teacher's labels") for r in recipes]
    if TWIN in recipes and UNBIASED in recipes:
        pairs.append((f"student · {TWIN}", f"student · {UNBIASED}", "the syntax bias (parser trees)"))
    if FREE in recipes and TWIN in recipes:
        pairs.append((f"student · {FREE}", f"student · {TWIN}", "predicted trees against the parser's"))
    return pairs


def task_report(student: Path, teacher_job: Path, small: Path | None, seeds: int | None = None) -> dict:
    """The report of one task folder of the student job (rows, scores, verdicts on the shown slices)."""
    config = load_config(student / "config.yaml", record=True)
    if not config.training.soft_labels:
        raise DataError(f"{student}/config.yaml: not a student's job (training.soft_labels is null)")
    report = as_report(_read_json(student / "report" / "report.json"))
    soft = read_soft_labels(resolve(config.training.soft_labels, report.dataset))
    teacher_row = Path(soft.record["teacher"]["checkpoint"]).parts[1]  # task/row/checkpoints/best.ckpt
    recipes = [r for r in config.run.recipes if (student / r).is_dir()]
    rows = [RunRow(teacher_job / student.name, teacher_row, "teacher")]
    rows += [RunRow(student, r, f"student · {r}") for r in recipes]
    if small is not None:
        rows += [RunRow(small / student.name, r, f"small · {r}") for r in recipes]
    found = compare_across_runs(
        rows,
        student_pairs(recipes, small is not None),
        report.dataset,
        config.data.task,
        len(soft.record["label_names"]),
        seeds,
    )
    return {
        "task": student.name,
        "dataset": report.dataset,
        "teacher": {**soft.record["teacher"], "row": teacher_row},
        "soft_labels": {k: soft.record[k] for k in ("n_train", "n_transfer", "transfer", "sha256")},
        "settings": {
            "soft_label_weight": config.training.soft_label_weight,
            "soft_label_temperature": config.training.soft_label_temperature,
            "transfer_limit": config.training.transfer_limit,
        },
        "rows": {r.name: str(r.task_dir / r.row) for r in rows},
        "scores": {name: asdict(s) for name, s in found.scores.items()},
        "contrasts": [asdict(c) for c in found.contrasts if c.slice in SHOWN_SLICES],
    }


def student_report(student_job: Path, teacher_job: Path, small_job: Path | None, seeds: int | None = None) -> dict:
    """Every task of the student job that has a report (each row's first ``seeds``; None: all)."""
    tasks = sorted(p.parent.parent for p in Path(student_job).glob("*/report/report.json"))
    if not tasks:
        raise DataError(f"{student_job}: no task with a report here (run parserfree run --size student first)")
    return {"tasks": [task_report(t, Path(teacher_job), small_job and Path(small_job), seeds) for t in tasks]}


def markdown(result: dict) -> str:
    """One table per task: each row's accuracy, then each verdict on all items and on the attractor items."""
    lines: list[str] = []
    for task in result["tasks"]:
        t = task["teacher"]
        lines += [
            f"**{task['task']}** ({task['dataset']}): teacher {t.get('encoder')} {t['row']} "
            f"(dev {t.get('dev_metric', float('nan')):.2f}, test {t.get('test_metric', float('nan')):.2f}); soft labels on {task['soft_labels']['n_train']:,} training texts + "
            f"{task['soft_labels']['n_transfer']:,} transfer texts ({task['soft_labels']['transfer']}), "
            f"α {task['settings']['soft_label_weight']}, T {task['settings']['soft_label_temperature']}, "
            f"transfer limit {task['settings']['transfer_limit']}",
            "",
            "| row | accuracy |",
            "|---|---:|",
        ]
        for name, score in task["scores"].items():
            sd = f" ± {score['metric_sd']:.2f}" if score["metric_sd"] is not None else ""
            lines.append(f"| {name} | {score['metric']:.2f}{sd} |")
        lines += ["", "| a | b | items | a − b (points) | 95 % interval | p (Holm) | detectable | verdict |"]
        lines.append("|---|---|---|---:|---|---:|---:|---|")
        for c in task["contrasts"]:
            lo, hi = c["ci95"]
            det = f"±{c['detectable']:.2f}" if c.get("detectable") is not None else "–"
            lines.append(
                f"| {c['a']} | {c['b']} | {c['slice']} ({c['n_items']}) | {c['difference']:+.2f} | "
                f"[{lo:+.2f}, {hi:+.2f}] | {c['p_holm']:.3g} | {det} | {c['verdict']} |"
            )
        lines.append("")
    return "\n".join(lines)


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: missing (the task's comparison has not run)") from None
