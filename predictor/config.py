"""Predictor configuration: which distance predictor reads the encoder, how big it is, and its label scorer.

One small validated dataclass, the `predictor` section of an experiment config. The training code
builds a ``DistancePredictor`` from it; the exported bundle stores it (``to_dict``) so the same head can
be rebuilt at load time (``from_dict``). Errors name the offending key and say what was expected.
``check_encoder`` checks the combinations with the encoder section (a parser tower needs
``encoder.predictor_layer: 0``), and ``tower_shape`` resolves the tower's sizes that default to the
encoder's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..encoder.config import EncoderConfig
from ..encoder.schema import ConfigError, check_choice, check_int, check_number, from_settings, to_settings

FORMS = ("heads", "probe")
# settings that weigh the predictor's losses: they change how it trains, not the weights it has, so a
# pre-trained predictor may initialise a model whose config weighs them otherwise (training.init_from)
LOSS_FIELDS = ("label_loss_weight",)
TOWER_SIZE_FIELDS = ("tower_d_model", "tower_heads", "tower_d_ff")  # unset: the encoder's sizes (``tower_shape``)


@dataclass(frozen=True)
class TowerShape:
    """The resolved sizes of a parser tower: layers, width, attention heads and feed-forward width."""

    layers: int
    d_model: int
    n_heads: int
    d_ff: int


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
    label_dim: int = 32
    """heads: size of the dependent and head projections of the biaffine label scorer (distance_predictor.py); 0: no
    label scorer. It exists only when the training data carries dependency labels (its inventory comes from them)."""
    label_loss_weight: float = 1.0
    """heads: predictor loss = arc cross-entropy + this × label cross-entropy (each word's label at its gold head)."""
    tower_layers: int = 0
    """0: the predictor reads h_k of the shared encoder; else the unbiased Transformer layers of its own (a parser
    tower) that read the embeddings h_0, and every encoder layer is biased in one pass (encoder.predictor_layer: 0)."""
    tower_d_model: int | None = None
    """The tower's width (null: the encoder's d_model; a linear projection maps h_0 to it when it differs)."""
    tower_heads: int | None = None
    """The tower's attention heads (null: the encoder's n_heads)."""
    tower_d_ff: int | None = None
    """The tower's feed-forward width (null: 4 × the tower's width)."""

    def validate(self, section: str = "predictor") -> PredictorConfig:
        """Raise ``ConfigError`` naming the first bad field; return ``self`` so calls can chain."""
        check_choice(f"{section}.form", self.form, FORMS)
        for name, minimum in (
            ("arc_dim", 1),
            ("max_relative_position", 0),
            ("rank", 1),
            ("label_dim", 0),
            ("tower_layers", 0),
        ):
            check_int(f"{section}.{name}", getattr(self, name), minimum)
        if not isinstance(self.soft, bool):
            raise ConfigError(f"{section}.soft={self.soft!r} must be true or false")
        check_number(f"{section}.label_loss_weight", self.label_loss_weight, low=0)
        for name in ("tower_d_model", "tower_heads", "tower_d_ff"):
            if getattr(self, name) is not None:
                check_int(f"{section}.{name}", getattr(self, name), 1)
        width, heads = self.tower_d_model, self.tower_heads
        if width is not None and heads is not None and width % heads:
            raise ConfigError(f"{section}.tower_heads={heads} must divide {section}.tower_d_model={width}")
        return self

    @property
    def has_tower(self) -> bool:
        """Whether the predictor has Transformer layers of its own."""
        return self.tower_layers > 0

    @property
    def labelled(self) -> bool:
        """Whether the predictor gets a label scorer (given labelled training data)."""
        return self.form == "heads" and self.label_dim > 0

    def tower_shape(self, encoder: EncoderConfig) -> TowerShape:
        """The tower's sizes, those left unset taken from the encoder (``tower_layers`` 0: no tower)."""
        width = self.tower_d_model or encoder.d_model
        return TowerShape(self.tower_layers, width, self.tower_heads or encoder.n_heads, self.tower_d_ff or 4 * width)

    def check_encoder(self, encoder: EncoderConfig, recipe: str, section: str = "predictor") -> None:
        """Raise ``ConfigError`` unless this predictor can sit on ``encoder`` in recipe ``recipe``: without a
        tower it reads h_k, so ``encoder.predictor_layer`` ≥ 1; a tower embeds the ids itself, so the encoder
        runs in one pass: every layer biased (``encoder.predictor_layer: 0``), or layers 1..k unbiased and the
        rest biased (k ≥ 1 with ``encoder.bias_all_layers: false``, the layout of an encoder pre-trained beside
        a predictor on h_k); the tower's heads divide its width."""
        if not self.has_tower:
            if encoder.predictor_layer < 1:
                raise ConfigError(
                    f"encoder.predictor_layer must be ≥ 1 for recipe {recipe} (the predictor reads "
                    f"h_k), or give the predictor a tower of its own ({section}.tower_layers ≥ 1 "
                    "with encoder.predictor_layer: 0)"
                )
            return
        if encoder.predictor_layer != 0 and encoder.bias_all_layers:
            raise ConfigError(
                f"{section}.tower_layers={self.tower_layers} with encoder.predictor_layer="
                f"{encoder.predictor_layer} needs encoder.bias_all_layers: false (the tower reads its own "
                "embeddings, so the encoder runs in one pass: layers 1..k unbiased, the rest biased), or "
                "encoder.predictor_layer: 0 (every layer biased)"
            )
        shape = self.tower_shape(encoder)
        if shape.d_model % shape.n_heads:
            raise ConfigError(
                f"{section}.tower_heads={shape.n_heads} must divide the tower's width "
                f"{shape.d_model} ({section}.tower_d_model, default encoder.d_model)"
            )

    @classmethod
    def from_dict(cls, values: dict[str, Any], section: str = "predictor") -> PredictorConfig:
        """Build and validate a config from a mapping; unknown keys are an error (typos must not pass)."""
        return from_settings(cls, values, section)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of all fields (for the resolved run config and the export bundle)."""
        return to_settings(self)
