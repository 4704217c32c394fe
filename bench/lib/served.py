"""The served process and the reply check of ``bench/serve.py``: a ``parserfree serve`` process of some
environment (``Server``), loopback probes (``answers``), request bodies, and ``Checker``, which holds the
in-process prediction of every text and classifies each reply: its own text's prediction, a bad request's
one-line 4xx, a 5xx, lost, or mixed up."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from parserfree.export.runtime import ParserFreeModel

from .http_load import Reply

PROB_TOL = 1e-4  # a reply's probabilities against the in-process prediction of its text
MAX_BODY = 65536  # the server's --max-body-bytes in the bench: an oversized body of the mixed load stays small


def free_port() -> int:
    """A TCP port on 127.0.0.1 free now (for a server started next; also the serving-install test's)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_command(bin_dir: Path, bundle: Path, args) -> list[str]:
    """``parserfree serve`` of the environment whose ``bin`` folder is ``bin_dir``, with the bench's settings."""
    return [
        str(bin_dir / "parserfree"), "serve", "--model", str(bundle.resolve()), "--threads", str(args.threads),
        "--max-batch", str(args.max_batch), "--max-wait-ms", str(args.max_wait_ms),
        "--graph-batch", str(args.graph_batch), "--max-body-bytes", str(MAX_BODY),
    ]  # fmt: skip


class Server:
    """A server process: ``command`` followed by ``--port PORT``, run in ``cwd`` (a scratch folder by default,
    not the repository root, so that ``parserfree`` is the installed package)."""

    def __init__(self, command: list[str], cwd: str | Path | None = None) -> None:
        self.command = command
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.cwd = cwd or tempfile.gettempdir()

    def start(self) -> float:
        """Start the process; the time it was started (perf_counter)."""
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [*self.command, "--port", str(self.port)],
            cwd=self.cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        return started

    def wait(self, started: float, probe: bytes | None = None, timeout: float = 120.0) -> float:
        """Seconds from ``started`` until GET /health answers (or, with ``probe``, until a POST /predict does)."""
        while time.perf_counter() - started < timeout:
            if self.process.poll() is not None:
                raise SystemExit(f"bench.serve: the server ended: {self.process.stderr.read().decode()[-2000:]}")
            if answers(self.port, probe):
                return time.perf_counter() - started
            time.sleep(0.01)
        raise SystemExit(f"bench.serve: no answer from the server in {timeout:.0f} s")

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


def answers(port: int, probe: bytes | None) -> bool:
    """Whether GET /health (or POST /predict of ``probe``) gets a 200 now."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            if probe is None:
                s.sendall(b"GET /health HTTP/1.1\r\nhost: x\r\n\r\n")
            else:
                s.sendall(f"POST /predict HTTP/1.1\r\nhost: x\r\ncontent-length: {len(probe)}\r\n\r\n".encode() + probe)
            return s.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def body(*texts: str) -> bytes:
    return json.dumps({"texts": list(texts)}).encode()


class Checker:
    """The in-process predictions each reply is checked against."""

    def __init__(self, model: ParserFreeModel, texts: list[str]) -> None:
        self.labels = model.label_names
        self.expected = dict(zip(texts, model.predict(texts, batch_size=32)))

    def outcome(self, reply: Reply, texts: list[str] | None) -> str:
        """ok, 4xx (asked for: ``texts`` None), 5xx, lost (no reply), mixed (another text's reply), or wrong
        (a bad request answered 200, a good one refused)."""
        if reply.status == 0:
            return "lost"
        if reply.status >= 500:
            return "5xx"
        if texts is None:
            error = json.loads(reply.body).get("error", "") if 400 <= reply.status < 500 else ""
            return "4xx" if error and "\n" not in error else "wrong"
        if reply.status != 200:
            return "wrong"
        results = json.loads(reply.body)["results"]
        if len(results) != len(texts):
            return "mixed"
        for got, text in zip(results, texts):
            want = self.expected[text]
            diff = max(abs(got["probabilities"][n] - want["probabilities"][n]) for n in self.labels)
            if got.get("words") != want.get("words") or diff > PROB_TOL:
                return "mixed"
        return "ok"


def counts(outcomes: list[str]) -> dict[str, int]:
    return {k: outcomes.count(k) for k in ("ok", "4xx", "5xx", "lost", "mixed", "wrong")}
