"""Parsing on Dask: the chunks of the parse and tagging caches computed by a ``dask.distributed`` cluster.

The parse cache (``parse_cache.py``) and the tagged-sentence cache (``tagging.py``) split their texts into
fixed chunks; here each missing chunk becomes one Dask task that a worker computes (loading the spaCy model
once per worker process) and returns to the client, which writes it into its own cache exactly as a local
parse would (same files, same keys; workers need no shared disk). Chunks are written as they finish, so a
client stopped half-way keeps what it has; a worker that dies mid-chunk (killed, out of memory) loses only
that task, which the scheduler runs again on another worker (``distributed.scheduler.allowed-failures``
times, 3 by default, before the parse fails naming the chunk). ``ClusterConfig`` names the cluster: an
existing scheduler (``--scheduler tcp://host:8786``) or a ``LocalCluster`` of N single-threaded worker
processes on this machine (``--workers N``); ``use_cluster`` opens it for a block of code (``use_client``
lends a client of your own), and every cached parse or tagging inside that block runs on it
(``active_client``).
"""

from __future__ import annotations

import contextlib
import contextvars
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..encoder.errors import ParserfreeError
from ..encoder.schema import ConfigError

T = TypeVar("T")


class ClusterError(ParserfreeError, RuntimeError):
    """The Dask cluster cannot be reached, or a chunk failed on every worker it was given to."""


@dataclass(frozen=True)
class ClusterConfig:
    """Where cached parsing and tagging run: an existing Dask scheduler, a local cluster of N workers, or
    (neither) this process with ``n_process``."""

    scheduler: str | None = None  # address of a running scheduler, e.g. tcp://10.0.0.5:8786
    workers: int | None = None  # a LocalCluster of this many single-threaded worker processes

    def validate(self) -> None:
        """Raise ConfigError naming the impossible option."""
        if self.scheduler is not None and self.workers is not None:
            raise ConfigError(
                "--scheduler and --workers exclude each other: give the address of a running cluster "
                "or the number of local workers"
            )
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"--workers {self.workers} must be ≥ 1")
        if self.scheduler is not None and not self.scheduler.strip():
            raise ConfigError("--scheduler needs an address, e.g. tcp://10.0.0.5:8786")

    @property
    def enabled(self) -> bool:
        """Whether a cluster is asked for at all."""
        return self.scheduler is not None or self.workers is not None


_CLIENT: contextvars.ContextVar[Any] = contextvars.ContextVar("parserfree_dask_client", default=None)


def active_client():
    """The Dask client opened by the enclosing ``use_cluster`` block, or None (parse in this process)."""
    return _CLIENT.get()


@contextlib.contextmanager
def use_cluster(config: ClusterConfig, quiet: bool = True) -> Iterator[Any]:
    """Open the configured cluster for the block (yields its client, or None when none is configured); a
    local cluster is shut down at the end, an existing one is only disconnected from."""
    config.validate()
    if not config.enabled:
        yield None
        return
    import logging

    from distributed import Client, LocalCluster

    cluster = None
    try:
        if config.workers is not None:
            cluster = LocalCluster(
                n_workers=config.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR if quiet else logging.WARNING,
            )
            client = Client(cluster)
        else:
            client = Client(config.scheduler, timeout="30s")
    except OSError as e:  # no scheduler at that address, or no port to listen on
        if cluster is not None:
            cluster.close()
        raise ClusterError(
            f"cannot start or reach the Dask cluster ({config.scheduler or f'{config.workers} local workers'}): {e}"
        ) from None
    try:
        with use_client(client):
            yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


@contextlib.contextmanager
def use_client(client) -> Iterator[Any]:
    """Inside: cached parsing and tagging run on this ``distributed.Client`` (None: in this process)."""
    token = _CLIENT.set(client)
    try:
        yield client
    finally:
        _CLIENT.reset(token)


def run_chunks(
    client, spans: Mapping[int, Sequence[str]], work: Callable[[list[str]], T], name: str
) -> Iterator[tuple[int, T]]:
    """``work(texts)`` of every chunk on the cluster, one task each; yields (chunk index, result) as tasks
    finish. ``work`` must be picklable by reference (a module-level function or a ``functools.partial`` of
    one), so every worker imports it from the installed package. A task whose workers all died is a
    ClusterError naming the chunk; an error raised by ``work`` itself is raised here as it was."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    run = uuid.uuid4().hex[:12]  # task keys unique to this call: a cancelled earlier run never shares one
    futures = {
        client.submit(work, list(texts), key=f"{name}-{run}-chunk-{index:05d}", pure=False): index
        for index, texts in spans.items()
    }
    try:
        for future in as_completed(futures):
            index = futures[future]
            try:
                yield index, future.result()
            except KilledWorker as e:
                raise ClusterError(
                    f"{name}: chunk {index} was lost with every worker that took it ({e}); "
                    "the chunks already written are kept, run the command again to resume"
                ) from None
    finally:  # stopped early (an error, an interrupt): the chunks not yet finished are not computed for nothing
        for future in futures:
            if not future.done():
                future.cancel()


def worker_name() -> str:
    """The address of the Dask worker running this code, or "this process" outside a worker."""
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return "this process"
