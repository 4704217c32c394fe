"""bench.parser_pair: the words it scores are the project's attachment rule's, and its verdicts resample
whole sentences (a gain on the words of one long sentence is one observation, not forty)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from parserfree.comparison.paired import AHEAD, NO_DIFFERENCE
from parserfree.core.parse import DEFAULT_MODEL
from parserfree.predictor.metrics import attachment

import bench.parser_pair as pair_script
from bench.lib.held_out_trees import held_out, predict
from bench.lib.paired_words import compare
from bench.lib.parse_speed import checkpoint_system


def test_a_parser_against_itself_scores_the_attachment_rules_words_and_shows_no_difference(
    smoke_checkpoint, sentiment_file, smoke_overrides, tmp_path
):
    cache = next(o for o in smoke_overrides if o.startswith("data.cache_dir=")).split("=", 1)[1]
    out = tmp_path / "pair.json"
    args = ["--a", str(smoke_checkpoint), "--b", str(smoke_checkpoint), "--dataset", str(sentiment_file)]
    pair_script.main([*args, "--split", "test", "--cache-dir", cache, "--threads", "1", "--quick", "--out", str(out)])
    got = json.loads(out.read_text())["payload"]
    groups = held_out(str(sentiment_file), "test", cache, DEFAULT_MODEL, 200, 256)
    examples = [e for exs in groups.values() for e in exs]
    system, _ = checkpoint_system(str(smoke_checkpoint), 1, tmp_path)
    trees = predict(system, [e.words for e in examples])
    counts = np.zeros(3, dtype=int)
    for e, t in zip(examples, trees, strict=True):
        counts += attachment(t.heads, e.heads, e.punct, np.array(t.labels), np.array(e.deps))
    uas, las = got["comparisons"]
    assert got["words"] == counts[0] and got["sentences"] == len(examples) > 1
    assert uas["a"] == pytest.approx(100 * counts[1] / counts[0]) and las["a"] == pytest.approx(
        100 * counts[2] / counts[0]
    )
    assert uas["difference"] == 0 and uas["verdict"] == las["verdict"] == NO_DIFFERENCE


def _words(per_sentence: list[tuple[int, int, int]]) -> tuple[dict, dict]:
    """Two parsers' word correctness from (words, right under a, right under b) per sentence."""
    a, b, sentence = [], [], []
    for i, (n, right_a, right_b) in enumerate(per_sentence):
        a += [True] * right_a + [False] * (n - right_a)
        b += [True] * right_b + [False] * (n - right_b)
        sentence += [i] * n
    s = np.array(sentence)
    return {"uas": np.array(a), "las": np.array(a), "sentence": s}, {
        "uas": np.array(b),
        "las": np.array(b),
        "sentence": s,
    }


def test_a_gain_on_one_long_sentence_is_not_a_verdict_but_one_word_in_each_of_forty_is():
    one_long = _words([(40, 40, 0)] + [(2, 2, 2)] * 50)  # 40 words better, all in one sentence
    assert {r["verdict"] for r in compare(*one_long)} == {NO_DIFFERENCE}
    spread = _words([(3, 3, 2)] * 40 + [(2, 2, 2)] * 50)  # 40 words better, one in each of 40 sentences
    rows = compare(*spread)
    assert {r["verdict"] for r in rows} == {AHEAD} and rows[0]["difference"] == pytest.approx(100 * 40 / 220)
