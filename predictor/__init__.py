"""The distance predictor: encoder states h_k → D̂, so the biased layers need no parser at inference.

Sits between the unbiased lower layers (1..k) and the biased upper layers (k+1..N) of the encoder and
learns the parser's tree distances D during training (docs/design.md §4). Plain PyTorch in the model path
(config, sources, distance_predictor, tree_ops, loss; syntax_model: the whole model) and numpy/scipy for
evaluation (decoding, metrics).
Names are imported on first use, so the numpy/scipy evaluation code loads without PyTorch.
"""

from typing import TYPE_CHECKING

from ..encoder.lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:  # the public names, written once: editors read them here, run time imports each on first use
    from ..encoder.conventions import CROSS_TREE_DISTANCE, PAD_DISTANCE
    from .config import PredictorConfig
    from .decoding import mst_edges
    from .distance_predictor import ArcScorer, DistancePredictor, PredictorOutput, StructuralProbe
    from .loss import arc_loss, probe_loss
    from .metrics import (
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
    from .sources import DistanceSource
    from .syntax_model import SyntaxModel, TaskHead, masked_mean
    from .tree_ops import (
        ancestor_matrix,
        distances_from_heads,
        distances_from_parents,
        parents_from_heads,
        steps_for_length,
    )

_WHERE = type_checking_exports(__file__)
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
