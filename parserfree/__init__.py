"""parserfree: syntax-biased Transformer encoders that learn their own dependency distances.

The installed package has one namespace. Its layers, lowest first, each importing only those below it:
``parserfree.encoder`` (the biased encoder, plain PyTorch) ← ``parserfree.predictor`` (the distance
predictor, plain PyTorch) ← ``parserfree.distill`` (data, the spaCy teacher, co-training with Lightning)
← ``parserfree.export`` (the ONNX graph, the bundle, onnxruntime serving) ← this application layer
(``cli``, ``main_job``, ``compare``, ``report``), which nothing imports.
"""

__version__ = "0.2.0"  # the one place the version is written: pyproject.toml reads it (CHANGELOG.md says what changed)
