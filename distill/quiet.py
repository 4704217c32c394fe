"""Quiet training output: what Lightning prints that says nothing about the run is turned off at its source.

A training run shows its stages, the progress bars and the results. Lightning's informational messages
(the device summary "GPU available: False, used: False", "TPU available", advertising tips, "`Trainer(…)`
was configured so …", "`Trainer.fit` stopped: …") go through its rank-zero loggers, whose level is
raised to WARNING; a few warnings that are noise for this project are ignored by exact message: the
checkpoint and log folders of a resumed or rerun run are expected to hold files (a resumed run keeps its
curve: ``distill/train.py``), tiny runs log less often than every 10 steps, and a deprecation inside
Lightning's own use of PyTorch that users cannot act on. Every other warning still shows.
"""

from __future__ import annotations

import logging
import warnings

LIGHTNING_INFO_LOGGERS = ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero")

# (message regex, category) of the warnings that are noise here
NOISE = (
    (r"Checkpoint directory .* exists and is not empty", UserWarning),
    (r"Experiment logs directory .* exists and is not empty", UserWarning),
    (r"The number of training batches \(\d+\) is smaller than the logging interval", UserWarning),
    (r"`isinstance\(treespec, LeafSpec\)` is deprecated", FutureWarning),
)


def quiet_lightning() -> None:
    """Silence Lightning's informational chatter and the NOISE warnings for this process (idempotent)."""
    for name in LIGHTNING_INFO_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    for message, category in NOISE:
        warnings.filterwarnings("ignore", message=message, category=category)
