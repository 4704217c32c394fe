"""The distance predictor: encoder states h_k → D̂, so the biased layers need no parser at inference.

Sits between the unbiased lower layers (1..k) and the biased upper layers (k+1..N) of the encoder and
learns the parser's tree distances D during training (DESIGN §1). Plain PyTorch in the model path
(config, arc_scorer, tree_ops, probe, head, loss) and numpy/scipy for evaluation (decoding, metrics).
"""

from parserfree.predictor.arc_scorer import ArcScorer
from parserfree.predictor.config import PredictorConfig
from parserfree.predictor.decoding import mst_edges
from parserfree.predictor.head import DistancePredictor, PredictorOutput
from parserfree.predictor.loss import arc_loss, probe_loss
from parserfree.predictor.metrics import (
    DistanceMetrics,
    chain_baseline,
    dspr,
    gold_distances,
    l1_error,
    root_correct,
    row_spearman,
    sentence_dspr,
    uuas,
)
from parserfree.predictor.probe import StructuralProbe
from parserfree.encoder.conventions import CROSS_TREE_DISTANCE, PAD_DISTANCE
from parserfree.predictor.tree_ops import (
    ancestor_matrix,
    distances_from_heads,
    distances_from_parents,
    parents_from_heads,
    steps_for_length,
)

__all__ = [
    "ArcScorer",
    "CROSS_TREE_DISTANCE",
    "DistanceMetrics",
    "DistancePredictor",
    "PAD_DISTANCE",
    "PredictorConfig",
    "PredictorOutput",
    "StructuralProbe",
    "ancestor_matrix",
    "arc_loss",
    "chain_baseline",
    "distances_from_heads",
    "distances_from_parents",
    "dspr",
    "gold_distances",
    "l1_error",
    "mst_edges",
    "parents_from_heads",
    "probe_loss",
    "root_correct",
    "row_spearman",
    "sentence_dspr",
    "steps_for_length",
    "uuas",
]
