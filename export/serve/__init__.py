"""serve: a bundle behind HTTP, as ``parserfree serve`` runs it (docs/serving.md).

The bundle is opened by ``ParserFreeModel.load``, which imports no PyTorch (``export/without_torch.py``);
``batching.Batcher`` merges the texts of concurrent requests into batches for one worker thread;
``requests.read_body`` reads a /predict body within its limit and ``requests.parse_predict`` turns a bad one
into one 4xx line; ``app.create_app`` is the Starlette app (/predict, /health, /metadata, /metrics);
``settings`` holds the defaults and limits.
"""
