"""The agreement path end to end (run_task on a few hundred fixture pairs, no corpora): the report of each
view carries its breakdowns, minimal-pair metrics, parse leak and the noun baselines."""

from __future__ import annotations

import pytest

from parserfree.distill.config import load_config
from parserfree.jobs.main_job import run_task
from parserfree.reports.parts import ParseLeak


def _overrides(tmp_path, dataset: str) -> list[str]:
    return [
        f"data.cache_dir={tmp_path / 'cache'}",
        f"data.dataset={dataset}",
        "data.max_examples=null",
        f"run.compare_datasets=[{dataset}]",
        "run.recipes=[parser_fed_twin,parser_free]",
        "training.max_epochs=1",
        "run.latency_examples=2",
    ]


@pytest.mark.slow
def test_number_view_report_has_the_noun_baselines_whole_pair_metrics_and_no_parse_leak(tiny_agreement, tmp_path):
    report = run_task(
        load_config("configs/smoke.yaml", _overrides(tmp_path, "agreement-number")), tmp_path / "job", progress=False
    )
    domain = report.domains["agreement-number"]
    assert {"nearest_noun", "nearest_noun_s", "first_noun", "prev_word", "bag_of_words"} <= set(domain.scores)
    assert "verb_form" not in domain.scores  # the number view's text shows no verb form
    rule = domain.breakdown["nearest_noun"]["attractors"]  # the fixture's nearest noun: the subject iff no attractor
    assert rule["0"].accuracy == 100.0 and rule["1"].accuracy == 0.0 and rule["2+"].accuracy == 0.0
    for row in ("parser_fed_twin", "parser_free", "nearest_noun"):
        score = domain.scores[row]
        assert score.pair_accuracy == pytest.approx(score.metric) and score.n_pairs == domain.n_examples
    assert domain.parse_leak == ParseLeak(
        pairs=domain.n_examples, trees_differ=0.0, labels_differ=0.0, subject_arcs_differ=0.0
    )
    assert set(domain.breakdown["parser_free"]["nearest_noun"]) == {"subject's number", "attractor"}
    # the report carries parser_free's gap to its twin by tree, over every item (the order of the trees is
    # tests/app/test_tree_gap.py's), and the parts' contributions add up to the gap
    gap = domain.tree_gap
    assert gap is not None and gap.n == domain.n_examples and gap.unread == 0
    assert gap.parts["tree"]["right"].share + gap.parts["tree"]["wrong"].share == pytest.approx(100.0)
    assert set(gap.parts) == {"tree", "subject_arcs", "verb_subject"}  # agreement items name their verb
    for parts in gap.parts.values():
        assert sum(p.contribution for p in parts.values()) == pytest.approx(gap.gap)
