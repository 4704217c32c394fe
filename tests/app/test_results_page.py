"""The results pages: README.md and docs/results.md are exactly what the committed records give."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from result_fixtures import curve_payload, report_payload, write_record, write_template

from parserfree.commands.cli import main
from parserfree.reports.records import RecordError, load_records
from parserfree.reports.results_page import (
    Context,
    expected_pages,
    render_regions,
    render_template,
    stale_pages,
    write_pages,
)

REPO = Path(__file__).resolve().parents[2]


def test_committed_readme_and_results_page_are_what_the_records_give():
    """A hand-edited number or a page not rendered after a record changed fails here."""
    assert stale_pages(REPO) == [], "run `parserfree results render`"


def test_readme_is_a_front_page_of_at_most_200_lines():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


def test_every_committed_result_table_is_followed_by_its_record_and_command():
    """A table typed into the template by hand (no record, no command) fails here."""
    page = (REPO / "docs" / "results.md").read_text(encoding="utf-8").split("## Recording a result")[0]
    paragraphs = [p.strip() for p in page.split("\n\n") if p.strip()]
    tables = [i for i, p in enumerate(paragraphs) if p.startswith("|")]
    assert len(tables) >= 4
    for i in tables:
        after = next(
            p for p in paragraphs[i + 1 :] if not p.startswith("|") and not p.startswith("**") and not p.endswith(":")
        )
        assert re.match(
            r"Source: \[`\w+\.json`\]\(results/\w+\.json\) — `parserfree [^`]+` \(\d{4}-\d\d-\d\d, commit \w+\)", after
        ), f"table {paragraphs[i][:80]!r} is not followed by its source line"


def _root_with(tmp_path: Path, template: str, **records: tuple[dict, str]) -> Path:
    write_template(tmp_path, template)
    for name, (payload, kind) in records.items():
        write_record(tmp_path, name, payload, kind)
    return tmp_path


def test_a_hand_edited_number_on_a_rendered_page_is_reported_stale(tmp_path, capsys):
    root = _root_with(tmp_path, "# R\n\n{{table curve_x}}\n", curve_x=(curve_payload(), "curve"))
    assert [p.name for p in write_pages(root)] == ["results.md"]
    assert stale_pages(root) == []
    page = root / "docs" / "results.md"
    assert "63.00 ± 2.83" in page.read_text()
    page.write_text(page.read_text().replace("63.00 ± 2.83", "64.00 ± 2.83"))
    assert stale_pages(root) == [page]
    assert main(["results", "render", "--check", "--root", str(root)]) == 1
    assert "docs/results.md: differs" in capsys.readouterr().out
    assert main(["results", "render", "--root", str(root)]) == 0 and stale_pages(root) == []


def test_a_table_names_its_record_file_command_date_and_commit(tmp_path):
    root = _root_with(tmp_path, "{{table rep}}\n", rep=(report_payload(twin=71.74), "report"))
    page = expected_pages(root)[root / "docs" / "results.md"]
    assert "| parser_fed_twin | parser_fed_twin · reference | 71.74 |" in page
    assert "Source: [`rep.json`](results/rep.json) — `parserfree curve --seeds 2` (2026-12-01, commit abc1234)." in page


def test_a_table_of_a_record_not_made_yet_is_one_line_and_a_value_of_it_is_an_error_naming_the_line(tmp_path):
    ctx = Context({}, "results/")
    assert (
        render_template("a\n{{table main_x}}\n", ctx, "t.md")
        == "a\n*Not recorded yet: no `docs/results/main_x.json`.*\n"
    )
    with pytest.raises(
        RecordError, match=r"^t\.md:3: \{\{value main_x summary/1/a/mean\}\}: no record docs/results/main_x\.json"
    ):
        render_template("a\nb\nc {{value main_x summary/1/a/mean}}\n", ctx, "t.md")


def test_values_follow_keys_with_dots_and_take_a_python_format(tmp_path):
    records = load_records(_root_with(tmp_path, "", c=(curve_payload(), "curve")))
    ctx = Context(records, "results/")
    assert (
        render_template(
            "{{value c summary/0.5/parser_fed_twin/mean .1f}} on {{value c summary/1/no_syntax/n_train}}", ctx, "t"
        )
        == "63.0 on 1,000"
    )
    assert render_template("{{gain c parser_fed_twin 0.5}} {{gain c parser_fed_twin 1 +.1f}}", ctx, "t") == "+2.00 +2.0"
    with pytest.raises(RecordError, match="no 'summary/0.25/no_syntax/mean' \\(no '0.25' there\\)"):
        render_template("{{value c summary/0.25/no_syntax/mean}}", ctx, "t")
    with pytest.raises(RecordError, match="wrong arguments for 'gain'"):
        render_template("{{gain c parser_fed_twin}}", ctx, "t")


def test_a_key_holding_a_slash_is_reached_by_its_json_pointer_escape(tmp_path):
    """A user's CSV path is a dataset name, so a report's domain key can hold '/' (runs/x/reviews.csv)."""
    payload = report_payload(dataset="runs/x/reviews.csv", twin=71.74)
    ctx = Context(load_records(_root_with(tmp_path, "", rep=(payload, "report"))), "results/")
    path = "domains/runs~1x~1reviews.csv/scores/parser_fed_twin/metric .2f"
    assert render_template("{{value rep " + path + "}}", ctx, "t") == "71.74"
    with pytest.raises(RecordError, match="no 'runs' there"):
        render_template("{{value rep domains/runs/x/reviews.csv/scores/parser_fed_twin/metric}}", ctx, "t")


def test_seeds_table_gives_each_seed_and_the_gain_per_seed(tmp_path):
    ctx = Context(load_records(_root_with(tmp_path, "", c=(curve_payload(), "curve"))), "results/")
    table = render_template("{{seeds c 1}}", ctx, "t")
    assert "| parser_fed_twin | 75.00 | 71.00 | 73.00 ± 2.83 |" in table
    assert "| gain of parser_fed_twin over no_syntax | +5.00 | -1.00 | +2.00 |" in table


def test_a_placeholder_right_after_a_backtick_is_left_as_text():
    assert (
        render_template("write `{{table NAME}}` to show one", Context({}, "results/"), "t")
        == "write `{{table NAME}}` to show one"
    )


README = """# x

Prose that stays.

<!-- results: headline main_a main_b -->
| old | numbers |
<!-- /results -->

More prose.
"""


def test_readme_headline_without_a_main_job_record_is_one_line_and_prose_is_kept():
    out = render_regions(README, Context({}, "docs/results/"), "README.md")
    lines = out.splitlines()
    body = lines[lines.index("<!-- results: headline main_a main_b -->") + 1 : lines.index("<!-- /results -->")]
    assert len(body) == 1 and body[0].startswith("No main-job result is recorded yet") and "old" not in out
    assert out.startswith("# x\n\nProse that stays.\n") and out.endswith("\nMore prose.\n")
    assert "[docs/results.md](docs/results.md)" in body[0]


def test_readme_headline_shows_each_recorded_task_and_says_which_is_missing(tmp_path):
    records = load_records(_root_with(tmp_path, "", main_a=(report_payload("agreement", free=70.5), "report")))
    out = render_regions(README, Context(records, "docs/results/"), "README.md")
    assert "**agreement**" in out and "| 70.50 |" in out and "(docs/results/main_a.json)" in out
    assert "*Not recorded yet: no `docs/results/main_b.json`.*" in out
    assert render_regions(out, Context(records, "docs/results/"), "README.md") == out  # rendering is idempotent


def test_an_unclosed_readme_marker_names_the_file():
    with pytest.raises(RecordError, match=r"^README\.md: 1 '<!-- results: … -->' marker\(s\) but 0"):
        render_regions("a\n<!-- results: headline main_a -->\nb\n", Context({}, "docs/results/"), "README.md")


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


PAGES = ["README.md", "bench/README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES)
def test_links_between_pages_lead_to_files_and_headings_that_exist(page):
    text = (REPO / page).read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        file, _, anchor = target.partition("#")
        path = (REPO / page).parent / file if file else REPO / page
        assert path.exists(), f"{page}: link to {target}: no {path.relative_to(REPO)}"
        if anchor:
            headings = re.findall(
                r"(?m)^#+ (.+)$", re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
            )
            assert anchor in {_slug(h) for h in headings}, f"{page}: link to {target}: no such heading"


def test_the_size_table_reads_each_sizes_job_and_task_reports_and_names_a_missing_size(tmp_path):
    """A row per size and task from <prefix>_job (the job's time, and the task's own stages only) and
    <prefix>_<task> (scores over seeds)."""
    stages = {"agreement/parser_fed_twin": 600.0, "agreement/report": 60.0, "sentiment/parser_fed_twin": 900.0}
    job = {"seconds": 2700.0, "stage_seconds": stages, "tasks": {"agreement": {}}}
    root = _root_with(
        tmp_path,
        "",
        base_job=(job, "json"),
        base_agreement=(report_payload("agreement-number", twin=97.25, free=96.5), "report"),
    )
    ctx = Context(load_records(root), "results/")
    out = render_regions("<!-- results: sizes small=main base=base -->\n<!-- /results -->\n", ctx, "usage.md")
    assert "| base | agreement (agreement-number) | 45.0 | 11.0 | 1 | 96.50 | 97.25 |" in out
    assert "small: *Not recorded yet: no `docs/results/main_job.json`.*" in out
    assert "base: Source: [`base_job.json`](results/base_job.json)" in out and "base_agreement.json" in out
    with pytest.raises(RecordError, match="sizes takes SIZE=PREFIX pairs"):
        render_regions("<!-- results: sizes base -->\n<!-- /results -->\n", ctx, "usage.md")
