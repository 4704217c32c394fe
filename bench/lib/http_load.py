"""A lean HTTP/1.1 load client for the serving bench: keep-alive connections on asyncio streams.

Written here rather than taken from httpx or aiohttp: on a 2-core machine the client shares the CPU with
the server it measures, and a general client's per-request cost (~0.5–1 ms of Python) would be counted
against the server. This one writes a prepared request and reads the reply by its Content-Length, nothing
more; a reply that says ``connection: close`` (or a connection that drops) makes it reconnect.

``run_load(port, bodies, concurrency)`` sends every body once from ``concurrency`` connections, each taking
the next body as soon as its last reply is in, and returns a ``Reply`` per body, in order, and the wall time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass

HOST = "127.0.0.1"


@dataclass
class Reply:
    """One request's outcome: status (0 when no reply came), body, seconds from send to last byte."""

    status: int
    body: bytes
    seconds: float
    error: str = ""


class Connection:
    """One keep-alive connection that POSTs JSON bodies."""

    def __init__(self, port: int, path: str = "/predict") -> None:
        self.port, self.path = port, path
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def _open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(HOST, self.port)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
        self.reader = self.writer = None

    async def post(self, body: bytes, timeout: float = 30.0) -> Reply:
        """POST ``body``; a dropped connection or a timeout is a Reply of status 0. A kept-alive connection
        that the server closed in between (after a refusal it did not read the body of) is reopened and the
        request sent once more, as HTTP clients do."""
        reused = self.writer is not None
        reply = await self._post(body, timeout)
        if reply.status == 0 and reused and not reply.error.startswith("TimeoutError"):
            reply = await self._post(body, timeout)
        return reply

    async def _post(self, body: bytes, timeout: float) -> Reply:
        start = time.perf_counter()
        try:
            if self.writer is None:
                await self._open()
            head = (
                f"POST {self.path} HTTP/1.1\r\nhost: {HOST}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\n\r\n"
            )
            self.writer.write(head.encode() + body)
            await self.writer.drain()
            status, length, close = await asyncio.wait_for(self._head(), timeout)
            data = await asyncio.wait_for(self.reader.readexactly(length), timeout)
        except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError) as e:
            await self.close()
            return Reply(0, b"", time.perf_counter() - start, f"{type(e).__name__}: {e}")
        if close:
            await self.close()
        return Reply(status, data, time.perf_counter() - start)

    async def _head(self) -> tuple[int, int, bool]:
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {
            k.strip().lower(): v.strip().lower() for k, _, v in (line.partition(":") for line in lines[1:] if line)
        }
        return status, int(headers.get("content-length", "0")), headers.get("connection") == "close"


async def _load(port: int, bodies: Sequence[bytes], concurrency: int) -> list[Reply]:
    replies: list[Reply | None] = [None] * len(bodies)
    cursor = iter(range(len(bodies)))

    async def client() -> None:
        connection = Connection(port)
        for i in cursor:
            replies[i] = await connection.post(bodies[i])
        await connection.close()

    await asyncio.gather(*(client() for _ in range(concurrency)))
    return replies  # type: ignore[return-value]


def run_load(port: int, bodies: Sequence[bytes], concurrency: int) -> tuple[list[Reply], float]:
    """Send every body once over ``concurrency`` keep-alive connections; (replies in order, wall seconds)."""
    start = time.perf_counter()
    replies = asyncio.run(_load(port, bodies, concurrency))
    return replies, time.perf_counter() - start
