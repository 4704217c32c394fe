"""core: what training and serving share — the recipe table, tree distances, parses, the checkpoint format
and the task-metric rule.

Below both ``parserfree.distill`` (training) and ``parserfree.export`` (graphs and serving), above the plain
PyTorch model (``parserfree.encoder``, ``parserfree.predictor``): nothing here trains, reads a dataset or
touches ONNX, so export can import it without the training side (tests/test_layers.py).
"""
