"""Predictor configuration: which distance predictor reads h_k and how big it is.

One small validated dataclass, the `predictor` section of an experiment config. The training code
builds a ``DistancePredictor`` from it; the exported bundle stores it (``to_dict``) so the same head can
be rebuilt at load time (``from_dict``). Errors name the offending key and say what was expected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from parserfree.encoder.schema import ConfigError, check_choice, check_int, from_settings, to_settings

FORMS = ("heads", "probe")


@dataclass
class PredictorConfig:
    """Settings of the distance predictor; each field's meaning is its docstring.

    ``soft`` applies in training and at inference; without it the task gradient (with
    ``training.task_grad_to_predictor``) passes straight through the predicted tree to the arc scores.
    """

    form: str = "heads"
    """heads (an arc scorer; D̂ = the predicted tree's path lengths, in the graph) or probe (structural probe)."""
    arc_dim: int = 128
    """heads: size of the dependent and head projections of the biaffine arc scorer."""
    max_relative_position: int = 16
    """heads: offsets j − i are clipped to [−R, R], one learned score each."""
    soft: bool = False
    """heads: D̂ = expected path lengths under the arc probabilities (O(T³ log T)) instead of the predicted tree's."""
    rank: int = 64
    """probe: rank r of the probe matrix B (r×d)."""

    def validate(self, section: str = "predictor") -> PredictorConfig:
        """Raise ``ConfigError`` naming the first bad field; return ``self`` so calls can chain."""
        check_choice(f"{section}.form", self.form, FORMS)
        for name, minimum in (("arc_dim", 1), ("max_relative_position", 0), ("rank", 1)):
            check_int(f"{section}.{name}", getattr(self, name), minimum)
        if not isinstance(self.soft, bool):
            raise ConfigError(f"{section}.soft={self.soft!r} must be true or false")
        return self

    @classmethod
    def from_dict(cls, values: dict[str, Any], section: str = "predictor") -> PredictorConfig:
        """Build and validate a config from a mapping; unknown keys are an error (typos must not pass)."""
        return from_settings(cls, values, section)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of all fields (for the resolved run config and the export bundle)."""
        return to_settings(self)
