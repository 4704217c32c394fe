"""The HTTP app (Starlette): POST /predict, GET /health, /metadata and /metrics (Prometheus text format)."""

from __future__ import annotations

import contextlib
import time
import warnings
from importlib import metadata as package_metadata

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .batching import Batcher
from .requests import RequestError, parse_predict, read_body
from .settings import GRAPH_BATCH, MAX_BATCH, MAX_BODY, MAX_TEXTS, MAX_WAIT_MS

LATENCY_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


class Metrics:
    """The server's Prometheus metrics, in a registry of their own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "parserfree_requests", "requests by endpoint and status", ["endpoint", "status"], registry=self.registry
        )
        self.errors = Counter(
            "parserfree_errors", "bad requests and failures by status", ["status"], registry=self.registry
        )
        self.batch = Histogram(
            "parserfree_batch_texts", "texts per model batch", buckets=BATCH_BUCKETS, registry=self.registry
        )
        self.latency = Histogram(
            "parserfree_predict_seconds", "POST /predict latency", buckets=LATENCY_BUCKETS, registry=self.registry
        )


def error(message: str, status: int) -> JSONResponse:
    """One-line JSON error."""
    return JSONResponse({"error": " ".join(str(message).split())}, status_code=status)


def create_app(
    model,
    max_batch: int = MAX_BATCH,
    max_wait_ms: float = MAX_WAIT_MS,
    max_texts: int = MAX_TEXTS,
    max_body: int = MAX_BODY,
    graph_batch: int = GRAPH_BATCH,
) -> Starlette:
    """The app serving ``model`` (a loaded ``ParserFreeModel``): batches of up to ``max_batch`` texts, each
    run through the graph sorted by length in calls of ``graph_batch`` texts (less padding than one call)."""
    metrics = Metrics()
    tree_ok = bool(getattr(model, "has_tree_graph", False))

    def run(jobs: list[tuple[str, bool]]) -> list:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a cut text says so in its own reply ("warning")
            plain = [t for t, tree in jobs if not tree]
            trees = [t for t, tree in jobs if tree]
            done = {
                False: iter(model.predict(plain, batch_size=graph_batch) if plain else []),
                True: iter(model.predict(trees, batch_size=graph_batch, with_tree=True) if trees else []),
            }
            return [next(done[tree]) for _, tree in jobs]

    batcher = Batcher(run, max_batch, max_wait_ms, on_batch=metrics.batch.observe)

    def failed(message: str, status: int) -> JSONResponse:
        metrics.errors.labels(str(status)).inc()
        metrics.requests.labels("predict", str(status)).inc()
        return error(message, status)

    async def predict(request: Request) -> Response:
        start = time.perf_counter()
        try:
            body = await read_body(request, max_body)
            texts, tree = parse_predict(body, max_texts)
            if tree and not tree_ok:
                raise RequestError(f"a {model.recipe} bundle predicts no trees")
        except RequestError as e:
            return failed(str(e), e.status)
        try:
            results = await batcher.submit([(t, tree) for t in texts])
        except Exception as e:  # noqa: BLE001 — a fault of the model's batch: one line, and the server goes on
            return failed(f"the model failed on this batch: {type(e).__name__}: {e}", 500)
        for item in results:
            if item.get("truncated"):
                item["warning"] = f"cut to the model's {model.max_len} positions at a word"
        metrics.requests.labels("predict", "200").inc()
        metrics.latency.observe(time.perf_counter() - start)
        return JSONResponse({"results": results})

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def meta(request: Request) -> Response:
        versions = {}
        for name in ("parserfree", "onnxruntime", "spacy", "numpy", "starlette", "uvicorn"):
            with contextlib.suppress(package_metadata.PackageNotFoundError):
                versions[name] = package_metadata.version(name)
        return JSONResponse(
            {
                "recipe": model.recipe,
                "task": model.task,
                "labels": model.label_names,
                "max_len": model.max_len,
                "tree": tree_ok,
                "bundle_sha256": model.digest,
                "variant": model.variant,
                "versions": versions,
                "max_batch": max_batch,
                "max_wait_ms": max_wait_ms,
                "graph_batch": graph_batch,
                "max_texts": max_texts,
                "max_body_bytes": max_body,
            }
        )

    async def prometheus(request: Request) -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        batcher.start()
        yield
        await batcher.stop()

    app = Starlette(
        routes=[
            Route("/predict", predict, methods=["POST"]),
            Route("/health", health),
            Route("/metadata", meta),
            Route("/metrics", prometheus),
        ],
        lifespan=lifespan,
    )
    app.state.metrics = metrics
    return app
