"""A /predict body read within its limit and checked before it reaches the model: each bad request is one
``RequestError`` line (4xx)."""

from __future__ import annotations

import json
import unicodedata

from starlette.requests import ClientDisconnect, Request

from ...encoder.errors import ParserfreeError
from .settings import MAX_CHARS, MAX_TEXTS


class RequestError(ParserfreeError):
    """A bad request: ``status`` (4xx) and a one-line message."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


async def read_body(request: Request, max_body: int) -> bytes:
    """The request body, refused (413) as soon as its Content-Length or the bytes read pass ``max_body``:
    an oversized body is never held whole. A client that leaves before its body ends is a 499 line."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_body:
        raise RequestError(f"body of {declared} bytes is over the limit of {max_body}", 413)
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_body:
                raise RequestError(f"body of more than {max_body} bytes is over the limit", 413)
            chunks.append(chunk)
    except ClientDisconnect:
        raise RequestError(f"the client left after {size} bytes, before its body ended", 499) from None
    return b"".join(chunks)


def parse_predict(body: bytes, max_texts: int = MAX_TEXTS) -> tuple[list[str], bool]:
    """A /predict body (read by ``read_body``, within its limit) → (texts, tree); RequestError for any bad one."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RequestError(f"malformed JSON ({e.msg if hasattr(e, 'msg') else 'not UTF-8'})") from None
    if not isinstance(data, dict):
        raise RequestError('expected a JSON object {"texts": [...], "tree": false}')
    unknown = sorted(set(data) - {"texts", "tree"})
    if unknown:
        raise RequestError(f"unknown field(s): {', '.join(unknown)}")
    texts, tree = data.get("texts"), data.get("tree", False)
    if not isinstance(texts, list):
        raise RequestError('"texts" must be a list of strings')
    if not texts:
        raise RequestError('"texts" is empty')
    if len(texts) > max_texts:
        raise RequestError(f"{len(texts)} texts are over the limit of {max_texts} per request", 413)
    if not isinstance(tree, bool):
        raise RequestError('"tree" must be true or false')
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise RequestError(f"texts[{i}] is {type(text).__name__}, expected a string")
        if not text.strip():
            raise RequestError(f"texts[{i}] is empty or whitespace")
        if len(text) > MAX_CHARS:
            raise RequestError(f"texts[{i}] has {len(text)} characters, over the limit of {MAX_CHARS}", 413)
        bad = next((c for c in text if unicodedata.category(c) == "Cc" and c not in "\t\n\r"), None)
        if bad is not None:
            raise RequestError(f"texts[{i}] holds the control character U+{ord(bad):04X}")
    return texts, tree
