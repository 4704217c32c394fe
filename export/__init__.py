"""export: the parser-free ONNX graphs, a self-checking bundle and onnxruntime inference.

The last stage of the data flow. ``export_bundle`` turns a trained checkpoint into a bundle folder
(the ONNX task graph of the recipe — and for a parser-free model the tree graph of its predicted trees —
parity-checked against PyTorch on held-out sentences; vocabulary, spaCy
tokenizer, labels, config, and a manifest with the sha256 of every file); ``ParserFreeModel.load``
verifies a bundle and predicts from raw text with onnxruntime and the bundled tokenizer — no parser, no
PyTorch model. ONNX and onnxruntime are used only inside this package. Names are imported on first use:
``from parserfree.export import ParserFreeModel`` (serving) loads onnxruntime, numpy and the spaCy
tokenizer, never PyTorch or Lightning; ``export_bundle`` loads the exporter. ``pipelines`` and
``timing`` run and time whole inference pipelines for the comparison and the benchmarks.
"""

from typing import TYPE_CHECKING

from ..encoder.lazy import lazy_exports, type_checking_exports

if TYPE_CHECKING:  # the public names, written once: editors read them here, run time imports each on first use
    from .builder import export_bundle
    from .bundle import FORMAT_VERSION, verify_bundle
    from .errors import BundleError, ExportError
    from .runtime import ParserFreeModel

FACTORY = "parserfree"  # the name spaCy knows the pipeline component by: nlp.add_pipe("parserfree", ...)

_WHERE = type_checking_exports(__file__)
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
