"""Moving a graph from one store backend to another (``medkg store copy``).

The graph streams from the source a batch of quads at a time (bounded memory,
whatever its size) into a target that is empty or cleared first; IRIs under the
source's base IRI are rewritten under the target's (two workspaces can share a
server, each under its own base). Writes are idempotent, so a copy cut short is
simply run again. At the end both stores are counted (per layer, per kind, and
every quad) and must agree.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from rdflib import URIRef
from rdflib.term import Node

from medkg.errors import StoreError
from medkg.store.base import GraphStore, StoreCounts

Quad = tuple[Node, Node, Node, URIRef]


@runtime_checkable
class QuadSink(Protocol):
    """A store that takes a graph's quads as they are (the RDF backends)."""

    def add_quads(self, quads: Iterable[Quad]) -> None: ...
    def clear(self) -> None: ...


@dataclass(frozen=True)
class CopyReport:
    quads: int
    seconds: float
    source: StoreCounts
    target: StoreCounts

    @property
    def verified(self) -> bool:
        return self.source == self.target

    @property
    def per_second(self) -> float:
        return self.quads / self.seconds if self.seconds else 0.0

    def differences(self) -> list[tuple[str, int, int]]:
        """(count, in the source, in the target) wherever the two disagree."""
        target = dict(self.target.rows())
        return [(k, v, target.get(k, 0)) for k, v in self.source.rows() if target.get(k, 0) != v]


def rebase(base: str, new_base: str) -> Callable[[Node], Node]:
    """A term under ``base`` moved under ``new_base``; any other term as it is."""
    if base == new_base:
        return lambda term: term

    def move(term: Node) -> Node:
        if isinstance(term, URIRef) and term.startswith(base):
            return URIRef(new_base + term[len(base):])
        return term

    return move


def _batches(quads: Iterator[Quad], size: int) -> Iterator[list[Quad]]:
    batch: list[Quad] = []
    for quad in quads:
        batch.append(quad)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def copy_graph(source: GraphStore, target: GraphStore, *, replace: bool = False,
               batch_size: int = 5000, progress: Callable[[int], None] | None = None
               ) -> CopyReport:
    """Copy every quad of ``source`` into ``target`` and count both.

    ``target`` must be empty, or ``replace`` clears it first; ``progress`` hears
    the number of quads copied so far after each batch."""
    if not isinstance(target, QuadSink):
        raise StoreError(f"the {type(target).__name__} store cannot take a copied graph")
    if target.counts().quads:
        if not replace:
            raise StoreError("the target store already holds a graph under this base IRI",
                             hint="pass --replace to clear it first (a copy cut short is "
                                  "finished that way too), or choose another base IRI")
        target.clear()
    move = rebase(source.iris.base, target.iris.base)  # type: ignore[attr-defined]
    started = time.perf_counter()
    done = 0
    for batch in _batches(source.quads(), batch_size):
        target.add_quads([(move(s), p, move(o), move(g)) for s, p, o, g in batch])  # type: ignore[misc]
        done += len(batch)
        if progress is not None:
            progress(done)
    seconds = time.perf_counter() - started
    return CopyReport(quads=done, seconds=seconds, source=source.counts(),
                      target=target.counts())
