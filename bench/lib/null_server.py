"""The serving app around a model that costs nothing: what HTTP, JSON and batching alone allow.

``serve(port, max_batch, max_wait_ms)``, run in a process of its own by ``bench/serve.py``, serves
``create_app`` with ``NullModel`` (every text answered with the same label at once), so that the bench
can measure the server's own ceiling in requests/s on the same machine, beside the real bundle's.
"""

from __future__ import annotations


class NullModel:
    """A ``ParserFreeModel`` stand-in whose ``predict`` costs (almost) nothing."""

    recipe, task, label_names, max_len, digest, variant, has_tree_graph = (
        "null", "binary", ["negative", "positive"], 256, "none", "default", False,
    )  # fmt: skip

    def predict(self, texts, batch_size: int = 32, with_tree: bool = False) -> list[dict]:
        return [{"label": "positive", "probabilities": {"negative": 0.0, "positive": 1.0}} for _ in texts]


def serve(port: int, max_batch: int, max_wait_ms: float) -> None:
    """Serve ``NullModel`` on loopback ``port`` until the process is stopped."""
    import uvicorn

    from parserfree.export.serve.app import create_app

    app = create_app(NullModel(), max_batch, max_wait_ms)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
