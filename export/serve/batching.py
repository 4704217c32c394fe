"""Dynamic batching: the texts of concurrent requests merged into one batch, each reply to its own request.

Written here rather than taken from a library: the small batching packages (``batched``, ``async-batcher``)
batch single items, so a request of several texts could be split across batches and the batch size would
not count texts; the serving frameworks that do this (BentoML, Ray Serve) bring a stack of their own.

``Batcher.submit(texts)`` puts one job on an asyncio queue and awaits its future. One worker task takes the
first waiting job, then every job already queued, and — when the last batch held more than one request, so
that others are likely on their way — waits for more until the batch holds ``max_batch`` texts or
``max_wait_ms`` have passed since the first; a lone client is not made to wait for company that never
comes. Each request stays whole (a job that does not fit waits for the next batch; one larger than
``max_batch`` runs alone). The batch runs as ``run(texts)`` in a thread (onnxruntime releases the GIL) and
each job gets its own slice of the results.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .settings import MAX_BATCH, MAX_WAIT_MS


@dataclass
class Job:
    """One request's texts and the future its results go to."""

    texts: Sequence[Any]
    future: asyncio.Future = field(repr=False)


class Batcher:
    """Merge concurrent ``submit`` calls into batches of at most ``max_batch`` texts for ``run``."""

    def __init__(
        self,
        run: Callable[[list[Any]], list],
        max_batch: int = MAX_BATCH,
        max_wait_ms: float = MAX_WAIT_MS,
        on_batch: Callable[[int], None] | None = None,
    ) -> None:
        self.run = run
        self.max_batch = max_batch
        self.max_wait = max_wait_ms / 1000
        self.on_batch = on_batch  # called with each batch's number of texts (metrics)
        self.queue: asyncio.Queue[Job] = asyncio.Queue()
        self._held: Job | None = None  # a job that did not fit the last batch: first in the next
        self._last_jobs = 0  # requests in the last batch: more than one, and the next batch waits to fill
        self._worker: asyncio.Task | None = None

    def start(self) -> None:
        """Start the worker task on the running loop."""
        self._worker = asyncio.get_running_loop().create_task(self._work())

    async def stop(self) -> None:
        """Cancel the worker task."""
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)

    async def submit(self, texts: Sequence[Any]) -> list:
        """The results of ``run`` for ``texts`` (one item per text), in order, computed within some batch."""
        job = Job(texts, asyncio.get_running_loop().create_future())
        await self.queue.put(job)
        return await job.future

    async def _next_batch(self) -> list[Job]:
        loop = asyncio.get_running_loop()
        first = self._held or await self.queue.get()
        self._held = None
        jobs, size = [first], len(first.texts)
        deadline = loop.time() + (self.max_wait if self._last_jobs > 1 else 0.0)
        while size < self.max_batch:
            left = deadline - loop.time()
            try:
                job = self.queue.get_nowait() if left <= 0 else await asyncio.wait_for(self.queue.get(), left)
            except (asyncio.QueueEmpty, TimeoutError):
                break
            if size + len(job.texts) > self.max_batch:
                self._held = job
                break
            jobs.append(job)
            size += len(job.texts)
        self._last_jobs = len(jobs)
        return jobs

    async def _work(self) -> None:
        while True:
            jobs = await self._next_batch()
            texts = [t for job in jobs for t in job.texts]
            if self.on_batch is not None:
                self.on_batch(len(texts))
            try:
                results = await asyncio.to_thread(self.run, texts)
            except Exception as e:  # noqa: BLE001 — handed to every request of the batch
                for job in jobs:
                    if not job.future.done():
                        job.future.set_exception(e)
                continue
            start = 0
            for job in jobs:
                part = results[start : start + len(job.texts)]
                start += len(job.texts)
                if not job.future.done():  # a client that went away cancelled its future
                    job.future.set_result(part)
