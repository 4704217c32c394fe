"""The distance predictor: encoder states h_k → D̂, so the biased layers need no parser at inference.

Sits between the unbiased lower layers (1..k) and the biased upper layers (k+1..N) of the encoder and
learns the parser's tree distances D during training (docs/design.md §4). Plain PyTorch in the model path
(config, arc_scorer, tree_ops, probe, head, loss) and numpy/scipy for evaluation (decoding, metrics).
Names are imported on first use, so the numpy/scipy evaluation code loads without PyTorch.
"""

from parserfree.encoder.lazy import lazy_exports

_WHERE = {
    "ArcScorer": ".arc_scorer",
    "CROSS_TREE_DISTANCE": "..encoder.conventions",
    "DistanceMetrics": ".metrics",
    "DistanceSource": ".sources",
    "DistancePredictor": ".head",
    "PAD_DISTANCE": "..encoder.conventions",
    "PredictorConfig": ".config",
    "PredictorOutput": ".head",
    "StructuralProbe": ".probe",
    "ancestor_matrix": ".tree_ops",
    "arc_loss": ".loss",
    "chain_baseline": ".metrics",
    "distances_from_heads": ".tree_ops",
    "distances_from_parents": ".tree_ops",
    "dspr": ".metrics",
    "gold_distances": ".metrics",
    "l1_error": ".metrics",
    "mst_edges": ".decoding",
    "parents_from_heads": ".tree_ops",
    "probe_loss": ".loss",
    "root_correct": ".metrics",
    "row_spearman": ".metrics",
    "sentence_dspr": ".metrics",
    "steps_for_length": ".tree_ops",
    "uuas": ".metrics",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
