"""serve: a bundle behind HTTP, as ``parserfree serve`` runs it (docs/serving.md).

``loading.load_without_torch`` opens a bundle in a process that never imports PyTorch (spaCy's thinc
imports it whenever it is installed); ``batching.Batcher`` merges the texts of concurrent requests into
batches for one worker thread; ``requests.parse_predict`` turns a bad /predict body into one 4xx line;
``app.create_app`` is the Starlette app (/predict, /health, /metadata, /metrics).
"""
