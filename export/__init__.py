"""export: one parser-free ONNX graph, a self-checking bundle and onnxruntime inference.

The last stage of the data flow. ``export_bundle`` turns a trained checkpoint into a bundle folder
(ONNX graph of the recipe, parity-checked against PyTorch on held-out sentences; vocabulary, spaCy
tokenizer, labels, config, and a manifest with the sha256 of every file); ``ParserFreeModel.load``
verifies a bundle and predicts from raw text with onnxruntime and the bundled tokenizer — no parser, no
PyTorch model. ONNX and onnxruntime are used only inside this package. Names are imported on first use:
``from parserfree.export import ParserFreeModel`` (serving) loads onnxruntime, numpy and the spaCy
tokenizer, never PyTorch or Lightning; ``export_bundle`` loads the exporter. ``pipelines`` and
``timing`` run and time whole inference pipelines for the comparison and the benchmarks.
"""

from parserfree.encoder.lazy import lazy_exports

_WHERE = {
    "BundleError": ".errors",
    "ExportError": ".errors",
    "FORMAT_VERSION": ".bundle",
    "ParserFreeModel": ".runtime",
    "export_bundle": ".builder",
    "verify_bundle": ".bundle",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
