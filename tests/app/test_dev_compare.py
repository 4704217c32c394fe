"""``parserfree dev-compare``: two sets of runs re-evaluated on dev and paired item by item, seed by seed."""

from __future__ import annotations

import json
import shutil

import pytest

from parserfree.comparison.dev_compare import compare_dev, dev_correctness, dev_markdown
from parserfree.encoder.errors import UsageError


def test_a_run_compared_with_itself_differs_by_nothing_and_reads_its_saved_dev_metric(smoke_run):
    run, metrics = smoke_run
    correct, examples = dev_correctness(run)
    assert len(correct) == metrics["dev"]["n_examples"] > 1 and len(examples) == len(correct)
    assert 100 * correct.mean() == pytest.approx(metrics["dev"]["metric"], abs=1e-6)
    result = compare_dev((str(run), str(run)), ["smoke"], ["parser_free"], seeds=1, progress=False)
    paired = result["smoke/parser_free"]["paired"]
    assert paired["difference"] == 0 and paired["discordant"] == [0, 0] and paired["p"] == 1
    assert "+0.00 [+0.00, +0.00]" in dev_markdown(result, ("a", "b"))


def test_a_run_whose_checkpoint_is_not_its_metrics_is_refused(smoke_run, tmp_path):
    run, metrics = smoke_run
    stale = tmp_path / "stale"
    shutil.copytree(run, stale)
    metrics = json.loads((stale / "metrics.json").read_text())
    metrics["dev"]["metric"] += 1.0  # another run's metrics beside this checkpoint
    (stale / "metrics.json").write_text(json.dumps(metrics))
    with pytest.raises(UsageError, match=r"stale.*dev accuracy .* is not its metrics.json's"):
        dev_correctness(stale)
    with pytest.raises(UsageError, match="not a finished training run"):
        dev_correctness(tmp_path / "missing")
