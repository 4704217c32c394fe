import math

import pytest

from parserfree.distill.schedules import inverse_sqrt_factor, teacher_forcing_probability


def test_teacher_forcing_decays_linearly_then_stays_zero():
    values = [teacher_forcing_probability(s, 100, 0.5) for s in (0, 25, 50, 75, 100)]
    assert values == [1.0, 0.5, 0.0, 0.0, 0.0]
    assert teacher_forcing_probability(10, 100, 0.0) == 0.0
    assert teacher_forcing_probability(99, 100, 1.0) == pytest.approx(0.01)


def test_warmup_then_inverse_sqrt():
    assert inverse_sqrt_factor(0, 100) == pytest.approx(0.01)
    assert inverse_sqrt_factor(99, 100) == pytest.approx(1.0)
    assert inverse_sqrt_factor(399, 100) == pytest.approx(0.5)
    assert inverse_sqrt_factor(1599, 100) == pytest.approx(math.sqrt(100 / 1600))


def test_teacher_forcing_end_holds_p_after_the_decay_instead_of_dropping_to_zero():
    values = [teacher_forcing_probability(s, 100, 0.5, end=0.5) for s in (0, 25, 50, 75, 100)]
    assert values == [1.0, 0.75, 0.5, 0.5, 0.5]
    assert all(teacher_forcing_probability(s, 100, 0.5, end=1.0) == 1.0 for s in range(0, 120, 7))
    assert teacher_forcing_probability(10, 100, 0.0, end=0.25) == 0.25
