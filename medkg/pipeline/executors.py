"""Where the builtin extraction engine runs: worker processes on this machine,
or the workers of a Dask distributed cluster.

An executor maps a function over batches, with one shared argument (the
engine recipe) sent once, and yields the results in the order of the batches,
with a bounded number in flight, so the build's own process writes them one
by one as they come and memory does not grow with the corpus. Dask was chosen
over Ray: it is a pure-Python install, a scheduler and workers are plain
processes (``dask scheduler``, ``dask worker HOST:PORT``), and a local cluster
starts in seconds, so the same code path is tested on one machine.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from medkg.errors import ConfigError, WorkspaceError

A = TypeVar("A")
B = TypeVar("B")
R = TypeVar("R")


class Executor(Protocol):
    name: str
    workers: int

    def map(self, fn: Callable[[A, B], R], shared: A, items: Iterable[B]) -> Iterator[R]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class ExecutorSpec:
    kind: str  # "local", "processes" or "dask"
    workers: int = 1
    address: str = ""


def parse_executor(spec: str, documents: int, min_documents: int) -> ExecutorSpec:
    """``extraction.executor`` for a build with ``documents`` to extract."""
    cpus = os.cpu_count() or 1
    if spec == "auto":
        parallel = documents >= min_documents and cpus > 1
        return ExecutorSpec("processes", cpus) if parallel else ExecutorSpec("local")
    if spec == "local":
        return ExecutorSpec("local")
    if spec == "processes" or spec.startswith("processes:"):
        count = spec.partition(":")[2]
        if count and not (count.isdigit() and int(count) > 0):
            raise ConfigError(f"extraction.executor {spec!r}: the worker count must be a "
                              "positive integer", hint="e.g. processes:2")
        return ExecutorSpec("processes", int(count) if count else cpus)
    if spec.startswith("dask://") and len(spec) > len("dask://"):
        return ExecutorSpec("dask", address="tcp://" + spec[len("dask://"):])
    raise ConfigError(f"unknown extraction.executor {spec!r}",
                      hint="use auto, local, processes, processes:N or dask://HOST:PORT")


def open_executor(spec: ExecutorSpec) -> Executor:
    if spec.kind == "processes":
        return ProcessExecutor(spec.workers)
    if spec.kind == "dask":
        return DaskExecutor(spec.address)
    raise ConfigError(f"no executor for {spec.kind!r}")


PARENT_CHECK_S = 0.5


def die_with_parent(parent: int) -> None:
    """A worker's first step: a thread that ends the worker once ``parent`` is
    gone (killed, even by SIGKILL, the worker is handed to another parent). A
    build's workers never outlive it, holding hundreds of MB each."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(1)

    threading.Thread(target=watch, name="medkg-parent-watch", daemon=True).start()


class ProcessExecutor:
    """A pool of worker processes on this machine (started fresh, not forked, so
    no thread or lock of this process is copied into them)."""

    name = "processes"

    def __init__(self, workers: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers
        self._pool = ProcessPoolExecutor(max_workers=workers,
                                         mp_context=multiprocessing.get_context("spawn"),
                                         initializer=die_with_parent, initargs=(os.getpid(),))

    def map(self, fn: Callable[[A, B], R], shared: A, items: Iterable[B]) -> Iterator[R]:
        from concurrent.futures.process import BrokenProcessPool

        try:
            yield from _ordered((self._pool.submit(fn, shared, item) for item in items),
                                2 * self.workers, lambda f: f.result())
        except BrokenProcessPool as exc:
            raise WorkspaceError(f"an extraction worker process died: {exc}",
                                 hint="what was written before is kept: run the build "
                                 "again (or with extraction.executor = 'local')") from exc

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """The workers of a Dask distributed scheduler; the shared argument is sent
    to every worker once."""

    name = "dask"

    def __init__(self, address: str) -> None:
        try:
            from distributed import Client
        except ImportError as exc:
            raise ConfigError("a dask:// executor needs the 'distributed' package",
                              hint="pip install 'medkg[distributed]'") from exc
        try:
            self._client: Any = Client(address, timeout="10s")  # type: ignore[no-untyped-call]
        except OSError as exc:
            raise ConfigError(f"cannot reach the Dask scheduler at {address}: {exc}",
                              hint="start one (`dask scheduler`) and its workers "
                              "(`dask worker HOST:PORT`)") from exc
        self.workers = max(1, len(self._client.scheduler_info().get("workers", {})))

    def map(self, fn: Callable[[A, B], R], shared: A, items: Iterable[B]) -> Iterator[R]:
        remote = self._client.scatter(shared, broadcast=True)
        yield from _ordered((self._client.submit(fn, remote, item, pure=False)
                             for item in items), 2 * self.workers, lambda f: f.result())

    def close(self) -> None:
        self._client.close()


def _ordered(futures: Iterator[Any], in_flight: int, result: Callable[[Any], R]) -> Iterator[R]:
    """Results in submission order, at most ``in_flight`` submitted ahead."""
    waiting: deque[Any] = deque()
    for future in futures:
        waiting.append(future)
        if len(waiting) >= in_flight:
            yield result(waiting.popleft())
    while waiting:
        yield result(waiting.popleft())
