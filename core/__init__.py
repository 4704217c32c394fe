"""core: what training and serving share — the recipe table, tree distances, parses, the checkpoint format,
the task-metric rule and the held-out sentences an export is checked on.

Below both ``parserfree.distill`` (training) and ``parserfree.export`` (graphs and serving), above the plain
PyTorch model (``parserfree.encoder``, ``parserfree.predictor``): nothing here trains, reads a dataset or
touches ONNX, so export can import it without the training side (tests/test_layers.py).
"""
