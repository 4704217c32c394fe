"""``parserfree serve``: a bundle behind HTTP (export/serve), loaded without PyTorch."""

from __future__ import annotations

import argparse

from .arguments import positive_int


def cmd_serve(args: argparse.Namespace) -> int:
    """Verify and load the bundle (a damaged one ends in one BundleError line), then serve it with uvicorn."""
    from ..export.serve.loading import load_without_torch

    model = load_without_torch(args.model, threads=args.threads)
    import uvicorn

    from ..export.serve.app import create_app

    app = create_app(model, max_batch=args.max_batch, max_wait_ms=args.max_wait_ms)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    return 0


def add_serve_command(sub) -> None:
    """Register ``serve``."""
    p = sub.add_parser("serve", help="serve a bundle over HTTP: POST /predict, GET /health, /metadata, /metrics")
    p.add_argument("--model", required=True, help="bundle folder")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--threads", type=positive_int, help="onnxruntime intra-op threads (default: its own)")
    p.add_argument("--max-batch", type=positive_int, default=32, help="most texts in one model batch (default 32)")
    p.add_argument("--max-wait-ms", type=float, default=5.0, help="longest a batch waits to fill (default 5)")
    p.set_defaults(func=cmd_serve)
