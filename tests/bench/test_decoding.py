"""bench.decoding: its graph side is the exported graph's own trees, its Eisner side is a projective tree
with one root, and the two are compared on the same words."""

from __future__ import annotations

import json

import numpy as np
import pytest

from parserfree.core.parse import DEFAULT_MODEL
from parserfree.predictor.metrics import attachment

import bench.decoding as decoding_script
from bench.lib.eisner import is_projective, root_count
from bench.lib.held_out_trees import held_out, predict
from bench.lib.parse_speed import checkpoint_system


def test_graph_side_scores_the_graphs_own_trees_and_eisner_side_one_root_projective_trees(
    smoke_checkpoint, sentiment_file, smoke_overrides, tmp_path
):
    cache = next(o for o in smoke_overrides if o.startswith("data.cache_dir=")).split("=", 1)[1]
    out = tmp_path / "decoding.json"
    args = ["--checkpoint", str(smoke_checkpoint), "--dataset", str(sentiment_file), "--split", "test"]
    decoding_script.main([*args, "--cache-dir", cache, "--threads", "1", "--quick", "--out", str(out)])
    got = json.loads(out.read_text())["payload"]
    examples = [
        e for exs in held_out(str(sentiment_file), "test", cache, DEFAULT_MODEL, 200, 256).values() for e in exs
    ]
    system, _ = checkpoint_system(str(smoke_checkpoint), 1, tmp_path)
    counts = np.zeros(3, dtype=int)
    for e, t in zip(examples, predict(system, [e.words for e in examples]), strict=True):
        counts += attachment(t.heads, e.heads, e.punct, np.array(t.labels), np.array(e.deps))
    uas, las = got["comparisons"]
    assert got["words"] == counts[0] and got["sentences"] == len(examples) > 1
    assert uas["b"] == pytest.approx(100 * counts[1] / counts[0]) and las["b"] == pytest.approx(
        100 * counts[2] / counts[0]
    )
    assert uas["a"] - uas["b"] == pytest.approx(uas["difference"])
    trees = decoding_script.decode(str(smoke_checkpoint), examples)["eisner"]
    assert all(is_projective(h) and root_count(h) == 1 for h, _ in trees)
    assert 0 <= got["graph_several_roots_pct"] <= 100 and got["reference_projective_pct"] > 50
