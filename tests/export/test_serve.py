"""``parserfree serve``: dynamic batching, bad requests, and a serving process without PyTorch."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from parserfree.export.serve.batching import Batcher
from parserfree.export.serve.requests import RequestError, parse_predict, read_body


def test_concurrent_requests_are_merged_and_each_reply_goes_to_its_own_request():
    """Catches replies handed to the wrong request, a multi-text request split across batches, and a batcher
    that runs every request alone or overfills a batch."""
    batches: list[list[str]] = []

    def run(texts: list[str]) -> list[str]:
        batches.append(list(texts))
        return [t.upper() for t in texts]

    async def main() -> list[list[str]]:
        batcher = Batcher(run, max_batch=8, max_wait_ms=20)
        batcher.start()
        requests = [[f"r{i}a", f"r{i}b"] if i % 3 == 0 else [f"r{i}"] for i in range(30)]
        try:
            replies = await asyncio.gather(*(batcher.submit(r) for r in requests))
        finally:
            await batcher.stop()
        assert replies == [[t.upper() for t in r] for r in requests]
        return requests

    requests = asyncio.run(main())
    assert max(len(b) for b in batches) > 1 and all(len(b) <= 8 for b in batches)
    for r in requests:  # a request's texts sit together in one batch
        assert any(b[i : i + len(r)] == r for b in batches for i in range(len(b)))


@pytest.mark.parametrize(
    "body, status, says",
    [
        (b"{not json", 400, "malformed JSON"),
        (b"[1, 2]", 400, "expected a JSON object"),
        (b'{"texts": "one"}', 400, '"texts" must be a list'),
        (b'{"texts": []}', 400, '"texts" is empty'),
        (b'{"texts": ["fine", 3]}', 400, "texts[1] is int"),
        (b'{"texts": ["fine", "  "]}', 400, "texts[1] is empty or whitespace"),
        (b'{"texts": ["a\\u0007b"]}', 400, "control character U+0007"),
        (b'{"texts": ["a"], "tree": "yes"}', 400, '"tree" must be true or false'),
        (json.dumps({"texts": ["a"] * 300}).encode(), 413, "over the limit of 256"),
    ],
)
def test_each_bad_request_is_a_one_line_4xx(body, status, says):
    """Catches a bad body reaching the model (a 500 or a NaN) or an error that is not one line."""
    with pytest.raises(RequestError) as raised:
        parse_predict(body)
    assert raised.value.status == status and says in str(raised.value) and "\n" not in str(raised.value)


def test_the_served_bundle_answers_keeps_serving_after_bad_requests_and_imports_no_torch(smoke_bundle):
    """Catches a server that dies on a bad request, replies that differ from in-process predict, a missing
    sha256 in /metadata, metrics not in Prometheus' format, and thinc importing torch into the serving process."""
    script = f"""
import json, sys
from starlette.testclient import TestClient
from parserfree.export import ParserFreeModel
from parserfree.export.serve.app import create_app
model = ParserFreeModel.load({str(smoke_bundle[0])!r}, threads=1)
texts = ["the keys to the cabinet are here", "a dog barks", "the dogs near the old house bark loudly"]
with TestClient(create_app(model, max_batch=4, max_wait_ms=5)) as client:
    assert client.post("/predict", content=b"{{bad").status_code == 400
    replies = [client.post("/predict", json={{"texts": [t]}}).json()["results"][0] for t in texts]
    assert client.get("/health").json() == {{"status": "ok"}}
    meta = client.get("/metadata").json()
    metrics = client.get("/metrics").text
wanted = model.predict(texts)
assert [r["label"] for r in replies] == [w["label"] for w in wanted]
assert meta["bundle_sha256"] == model.digest
assert "# TYPE" in metrics and 'status="400"' in metrics
print(json.dumps({{"torch": "torch" in sys.modules}}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"torch": False}


def test_a_damaged_bundle_refuses_to_serve_in_one_line(bundle_copy):
    """Catches a server that starts on a damaged bundle, or fails with a traceback."""
    vocab = bundle_copy / "vocab.json"
    vocab.write_bytes(vocab.read_bytes()[:-2] + b" }")
    done = subprocess.run(
        [sys.executable, "-m", "parserfree.commands.cli", "serve", "--model", str(bundle_copy), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_lone_client_is_not_made_to_wait_for_a_batch_to_fill():
    """Catches a batcher that waits max_wait_ms for company on every request of a lone client (five requests
    one after another would take 5 s at a wait of 1 s)."""

    async def main() -> float:
        batcher = Batcher(lambda texts: list(texts), max_batch=8, max_wait_ms=1000)
        batcher.start()
        start = asyncio.get_running_loop().time()
        try:
            for i in range(5):
                assert await batcher.submit([f"t{i}"]) == [f"t{i}"]
        finally:
            await batcher.stop()
        return asyncio.get_running_loop().time() - start

    assert asyncio.run(main()) < 1.0


class FailingModel:
    """A model stand-in that fails on the text "boom" and answers every other text."""

    recipe, task, label_names, max_len, digest, variant, has_tree_graph = (
        "null", "binary", ["negative", "positive"], 16, "none", "default", False,
    )  # fmt: skip

    def predict(self, texts, batch_size=8, with_tree=False):
        if "boom" in texts:
            raise RuntimeError("the graph failed\non two lines")
        return [{"label": "positive", "probabilities": {"negative": 0.0, "positive": 1.0}} for _ in texts]


def test_a_model_failure_is_a_one_line_500_and_the_server_goes_on():
    """Catches a model exception that becomes a traceback page or kills the batch worker for later requests."""
    from starlette.testclient import TestClient

    from parserfree.export.serve.app import create_app

    with TestClient(create_app(FailingModel(), max_batch=4, max_wait_ms=1)) as client:
        failed = client.post("/predict", json={"texts": ["boom"]})
        assert failed.status_code == 500 and "\n" not in failed.json()["error"]
        assert "RuntimeError" in failed.json()["error"]
        assert client.post("/predict", json={"texts": ["fine"]}).json()["results"][0]["label"] == "positive"
        assert 'status="500"' in client.get("/metrics").text


def test_a_body_declared_over_the_limit_is_refused_before_it_is_read():
    """Catches a server that reads a huge body into memory before refusing it."""
    from starlette.requests import Request

    async def receive():
        raise AssertionError("the body was read")

    scope = {"type": "http", "method": "POST", "headers": [(b"content-length", b"5000000")]}
    with pytest.raises(RequestError) as raised:
        asyncio.run(read_body(Request(scope, receive), 1_000_000))
    assert raised.value.status == 413


def test_a_streamed_body_over_the_limit_is_refused_as_it_passes_it():
    """Catches a limit checked only against Content-Length (a chunked body has none)."""
    from starlette.requests import Request

    chunks = iter([b"x" * 600, b"x" * 600, b"x" * 600])

    async def receive():
        return {"type": "http.request", "body": next(chunks), "more_body": True}

    with pytest.raises(RequestError) as raised:
        asyncio.run(read_body(Request({"type": "http", "method": "POST", "headers": []}, receive), 1000))
    assert raised.value.status == 413 and next(chunks, None) is not None  # refused before the last chunk


def test_a_client_that_leaves_mid_body_is_one_4xx_line():
    """Catches a client that disconnects half-way through its body ending as an unhandled ClientDisconnect
    traceback in the server's log instead of one counted line."""
    from starlette.requests import Request

    chunks = iter([{"type": "http.request", "body": b'{"texts": ["a', "more_body": True}, {"type": "http.disconnect"}])

    async def receive():
        return next(chunks)

    with pytest.raises(RequestError) as raised:
        asyncio.run(read_body(Request({"type": "http", "method": "POST", "headers": []}, receive), 1000))
    assert raised.value.status == 499 and "after 13 bytes" in str(raised.value) and "\n" not in str(raised.value)
