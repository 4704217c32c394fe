"""Schedules of the co-training: teacher forcing p(step) and the learning rate (warm-up + inverse sqrt).

Small pure functions, so tests can check their values and the LightningModule stays about training.
"""

from __future__ import annotations

import math


def teacher_forcing_probability(step: int, total_steps: int, fraction: float, end: float = 0.0) -> float:
    """Probability that a batch's biased layers see the parser's D instead of the predicted D̂.

    Decays linearly from 1 at step 0 to ``end`` at ``fraction · total_steps``, then stays at ``end``.
    ``end = 0``: the last part of training sees only D̂, what the model sees at inference; ``end = 1``:
    the biased layers always read the parser's trees (teacher forcing throughout) and meet D̂ only at
    inference. ``fraction = 0`` means ``end`` from the start.
    """
    horizon = fraction * total_steps
    if horizon <= 0:
        return end
    return end + (1.0 - end) * max(0.0, 1.0 - step / horizon)


def inverse_sqrt_factor(step: int, warmup_steps: int) -> float:
    """LR multiplier: linear warm-up to 1 over ``warmup_steps``, then decay ∝ 1/√step (Vaswani et al.)."""
    if warmup_steps <= 0:
        return 1.0 / math.sqrt(max(step, 1)) if step > 1 else 1.0
    step = step + 1
    return min(step / warmup_steps, math.sqrt(warmup_steps / step))
