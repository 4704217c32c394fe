"""Which graph of a parser-free bundle a comparison runs where: its speed row (throughput and latency) and
its predictions come from the task graph, which computes only the task output; D̂, heads and labels for
the quality tables from one untimed pass of the tree graph over the split. (The bug: the timed passes ran
the tree graph, so the parser-free speed row timed the label scorer and tree outputs no user reads.)"""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest

import parserfree.comparison.pipelines as pipelines
from parserfree.comparison.compare import ComparedModels, CompareOptions, compare, dataset_slug
from parserfree.export.runtime import ParserFreeModel

EXAMPLES = 30


@pytest.fixture
def graph_calls(monkeypatch):
    """Every run of a bundle's graph during the comparison: (tree graph?, sentences, inside a timed call?)."""
    calls: list[tuple[bool, int, bool]] = []
    timing = [False]
    run_outputs, time_calls = ParserFreeModel.run_outputs, pipelines.time_calls

    def recorded(self, words, distances=None, tree=False):
        calls.append((tree, len(words), timing[0]))
        return run_outputs(self, words, distances, tree)

    @contextmanager
    def timed():
        timing[0] = True
        try:
            yield
        finally:
            timing[0] = False

    def timed_calls(*args, **kwargs):
        with timed():
            return time_calls(*args, **kwargs)

    monkeypatch.setattr(ParserFreeModel, "run_outputs", recorded)
    monkeypatch.setattr(pipelines, "time_calls", timed_calls)
    return calls


def test_a_comparison_whose_parser_free_speed_row_runs_the_tree_graph_is_a_bug(
    smoke_bundle, recipe_checkpoint, sentiment_file, tmp_path, graph_calls
):
    models = ComparedModels(parser_free=[smoke_bundle[0]], reference=[recipe_checkpoint("parser_fed_twin")])
    options = CompareOptions(max_examples=EXAMPLES, latency_examples=2, threads=1, progress=False, baselines=False)
    report = compare(models, [str(sentiment_file)], tmp_path / "report", options)

    timed = [(tree, n) for tree, n, in_timing in graph_calls if in_timing]
    assert timed, "the parser-free row was not timed through its bundle"
    assert not [c for c in timed if c[0]], "a timed pass of the parser-free row ran the tree graph"
    assert report.models["parser_free"].speed is not None
    untimed_tree = [n for tree, n, in_timing in graph_calls if tree and not in_timing]
    assert sum(untimed_tree) == EXAMPLES  # the split once through the tree graph: D̂, heads and labels together

    distance = report.domains[str(sentiment_file)].distance
    assert distance is not None and distance.skipped == 0 and distance.root_acc is not None
    assert distance.tree is not None  # UAS / LAS of the graph's heads and labels

    free = ParserFreeModel.load(smoke_bundle[0], threads=1)
    items = (tmp_path / "report" / "predictions" / dataset_slug(str(sentiment_file)) / "parser_free.jsonl").read_text()
    kept = [json.loads(line) for line in items.splitlines()]
    expected = free.predict([k["text"] for k in kept])  # the task graph: predict without trees
    assert [free.label_names[k["prediction"]] for k in kept] == [e["label"] for e in expected]
