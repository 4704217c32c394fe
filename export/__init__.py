"""export: one parser-free ONNX graph, a self-checking bundle, onnxruntime inference and the comparison report.

The last stage of the data flow. ``export_bundle`` turns a trained checkpoint into a bundle folder
(ONNX graph of the recipe, parity-checked against PyTorch on held-out sentences; vocabulary, spaCy
tokenizer, labels, config, and a manifest with the sha256 of every file); ``ParserFreeModel.load``
verifies a bundle and predicts from raw text with onnxruntime and the bundled tokenizer — no parser, no
PyTorch model. ONNX and onnxruntime are used only inside this package. The ``parserfree export`` and
``parserfree predict`` commands are registered by ``export.commands.add_export_commands``.
"""

from parserfree.export.bundle import FORMAT_VERSION, verify_bundle
from parserfree.export.builder import export_bundle
from parserfree.export.errors import BundleError, ExportError
from parserfree.export.runtime import ParserFreeModel

__all__ = ["FORMAT_VERSION", "BundleError", "ExportError", "ParserFreeModel", "export_bundle", "verify_bundle"]
