"""The serving app around a model that costs nothing: what HTTP, JSON and batching alone allow.

``serve(argv)``, run in a process of its own by ``bench/serve.py`` (a ``Server`` of bench/lib/served.py), serves
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


def serve(argv: list[str]) -> None:
    """Serve ``NullModel`` until the process is stopped; ``argv`` is ``MAX_BATCH MAX_WAIT_MS --port PORT``."""
    import uvicorn

    from parserfree.export.serve.app import create_app

    max_batch, max_wait_ms, _, port = argv
    app = create_app(NullModel(), int(max_batch), float(max_wait_ms))
    uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning", access_log=False)
