"""export: one parser-free ONNX graph, a self-checking bundle, onnxruntime inference and the comparison report."""
