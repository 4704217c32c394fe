"""Conventions: the special values a distance matrix or a label row may hold, defined once for every layer.

Distance matrices (the parser's D from ``core.trees``, the predictor's D̂ from ``predictor.tree_ops``,
the graph inputs of ``export``) are B×T×T with 0-based word positions. A pair that touches a padding
position holds ``PAD_DISTANCE``; a pair of words in different sentences of one example (different trees
of a forest) has no path and holds ``CROSS_TREE_DISTANCE``, larger than any in-tree path of an example
of up to 1000 words. The syntax bias clamps it into its last bucket; the probe loss pushes such pairs
only as far as the bias can tell (≥ its max_distance) and the L1 metric skips them (docs/design.md §3).
"""

PAD_DISTANCE = -1
CROSS_TREE_DISTANCE = 1000
NO_LABEL = -1  # dependency-label id of padding, of a word without a label and of a label outside the inventory
NO_TASK_LABEL = -100  # task label of a transfer text, which has soft labels only (cross-entropy's ignore_index)
