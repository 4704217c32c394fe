"""The A/B timing's ratio: ``other`` twice as fast as the baseline reads 2 (not 0.5), with an interval that
covers the per-pass ratios and the share of passes it won."""

from __future__ import annotations

from bench.lib.paired import ratio_summary


def test_a_graph_that_takes_half_the_time_is_twice_as_fast():
    base = [1.0, 1.1, 0.9, 1.0, 1.2, 1.0]
    got = ratio_summary(base, [t / 2 for t in base])
    assert got["median"] == 2.0 and got["low"] == 2.0 and got["high"] == 2.0 and got["faster"] == 1.0


def test_noise_around_no_difference_gives_an_interval_across_one():
    base = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    other = [0.9, 1.1, 0.95, 1.05, 0.92, 1.08, 1.0, 1.0]
    got = ratio_summary(base, other)
    assert got["low"] < 1.0 < got["high"] and 0.0 < got["faster"] < 1.0
