"""``parserfree serve``: a bundle behind HTTP (export/serve), loaded without PyTorch."""

from __future__ import annotations

import argparse

from ..export.serve.settings import GRAPH_BATCH, MAX_BATCH, MAX_BODY, MAX_TEXTS, MAX_WAIT_MS
from .arguments import positive_int


def cmd_serve(args: argparse.Namespace) -> int:
    """Verify and load the bundle (a damaged one ends in one BundleError line), then serve it with uvicorn."""
    from ..export.runtime import ParserFreeModel

    model = ParserFreeModel.load(args.model, threads=args.threads)  # spaCy imported without torch
    import uvicorn

    from ..export.serve.app import create_app

    app = create_app(
        model,
        args.max_batch,
        args.max_wait_ms,
        max_texts=args.max_texts,
        max_body=args.max_body_bytes,
        graph_batch=args.graph_batch,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    return 0


def add_serve_command(sub) -> None:
    """Register ``serve``."""
    p = sub.add_parser("serve", help="serve a bundle over HTTP: POST /predict, GET /health, /metadata, /metrics")
    p.add_argument("--model", required=True, help="bundle folder")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--threads", type=positive_int, help="onnxruntime intra-op threads (default: its own)")
    p.add_argument(
        "--max-batch", type=positive_int, default=MAX_BATCH, help=f"most texts in one model batch (default {MAX_BATCH})"
    )
    p.add_argument(
        "--max-wait-ms",
        type=float,
        default=MAX_WAIT_MS,
        help=f"longest a batch waits to fill under load (default {MAX_WAIT_MS:g})",
    )
    p.add_argument(
        "--graph-batch",
        type=positive_int,
        default=GRAPH_BATCH,
        help=f"texts per graph call within a batch, sorted by length (default {GRAPH_BATCH})",
    )
    p.add_argument(
        "--max-texts",
        type=positive_int,
        default=MAX_TEXTS,
        help=f"most texts in one request (default {MAX_TEXTS}; 413 above)",
    )
    p.add_argument(
        "--max-body-bytes",
        type=positive_int,
        default=MAX_BODY,
        help=f"largest request body in bytes (default {MAX_BODY:,}; 413 above)",
    )
    p.set_defaults(func=cmd_serve)
