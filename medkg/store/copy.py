"""Moving a graph from one store backend to another (``medkg store copy``).

Into an RDF backend (Oxigraph, a SPARQL server) the graph streams from the
source a batch of quads at a time (bounded memory, whatever its size); IRIs
under the source's base IRI are rewritten under the target's (two workspaces
can share a server, each under its own base). Into a property graph (Neo4j) it
goes as model objects through the GraphStore methods: vocabulary, documents
with their chunks and stage marks, entities, statements (with their review
state), links, curators' decisions; every kind a batch at a time except the
entities of one layer, read whole. The target is empty or cleared first. Writes
are idempotent, so a copy cut short is simply run again with ``replace``. At
the end both stores are counted (per layer, per kind and, between RDF stores,
every quad) and must agree.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol, TypeVar, runtime_checkable

from rdflib import URIRef
from rdflib.term import Node

from medkg.errors import StoreError
from medkg.model import Concept, Layer
from medkg.store.base import GraphStore, StoreCounts

Quad = tuple[Node, Node, Node, URIRef]
T = TypeVar("T")


@runtime_checkable
class QuadSink(Protocol):
    """A store that takes a graph's quads as they are (the RDF backends)."""

    def add_quads(self, quads: Iterable[Quad]) -> None: ...
    def clear(self) -> None: ...


@dataclass(frozen=True)
class CopyReport:
    quads: int  # quads streamed (RDF target) or objects written (model copy)
    seconds: float
    source: StoreCounts
    target: StoreCounts
    by_objects: bool = False  # a model copy: quads are not compared (the RDF
    # store's own bookkeeping, e.g. vocabulary load times, has no node there)

    @property
    def verified(self) -> bool:
        if self.by_objects:
            return replace(self.source, quads=0) == replace(self.target, quads=0)
        return self.source == self.target

    @property
    def per_second(self) -> float:
        return self.quads / self.seconds if self.seconds else 0.0

    def differences(self) -> list[tuple[str, int, int]]:
        """(count, in the source, in the target) wherever the two disagree."""
        target = dict(self.target.rows())
        return [(k, v, target.get(k, 0)) for k, v in self.source.rows()
                if target.get(k, 0) != v and not (self.by_objects and k == "quads")]


def rebase(base: str, new_base: str) -> Callable[[Node], Node]:
    """A term under ``base`` moved under ``new_base``; any other term as it is."""
    if base == new_base:
        return lambda term: term

    def move(term: Node) -> Node:
        if isinstance(term, URIRef) and term.startswith(base):
            return URIRef(new_base + term[len(base):])
        return term

    return move


def copy_graph(source: GraphStore, target: GraphStore, *, replace: bool = False,
               batch_size: int = 2000, progress: Callable[[int], None] | None = None,
               by_objects: bool = False) -> CopyReport:
    """Copy the graph of ``source`` into ``target`` and count both.

    ``target`` must be empty, or ``replace`` clears it first; ``progress`` hears
    how much was copied so far after each batch; ``by_objects``: copy model
    objects even into an RDF store (what a property-graph target always gets)."""
    replace_ = replace
    if _holds_graph(target):
        if not replace_:
            raise StoreError("the target store already holds a graph under this base IRI",
                             hint="pass --replace to clear it first (a copy cut short is "
                                  "finished that way too), or choose another base IRI")
        target.clear()  # type: ignore[attr-defined]
    started = time.perf_counter()
    if isinstance(target, QuadSink) and not by_objects:
        done = _copy_quads(source, target, batch_size, progress)
    else:
        done = _copy_objects(source, target, batch_size, progress)
    seconds = time.perf_counter() - started
    return CopyReport(quads=done, seconds=seconds, source=source.counts(),
                      target=target.counts(), by_objects=not isinstance(target, QuadSink)
                      or by_objects)


def _holds_graph(store: GraphStore) -> bool:
    counts = store.counts()
    return bool(counts.quads or counts.concepts or counts.entities
                or counts.user.documents or counts.literature.documents)


def _copy_quads(source: GraphStore, target: QuadSink, batch_size: int,
                progress: Callable[[int], None] | None) -> int:
    move = rebase(source.iris.base, target.iris.base)  # type: ignore[attr-defined]
    done = 0
    for batch in _chunks(source.quads(), batch_size):
        target.add_quads([(move(s), p, move(o), move(g)) for s, p, o, g in batch])  # type: ignore[misc]
        done += len(batch)
        if progress is not None:
            progress(done)
    return done


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _copy_objects(source: GraphStore, target: GraphStore, batch_size: int,
                  progress: Callable[[int], None] | None) -> int:
    """The graph as model objects, through the GraphStore methods; how many written."""
    done = 0

    def wrote(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done)

    sources = getattr(source, "vocabulary_sources", None)  # the tables keep load times
    loaded = {name: datetime.fromisoformat(at) for name, at in sources()} if sources else {}
    for batch in _chunks(source.iter_concepts(), batch_size):
        by_source: dict[str, list[Concept]] = {}
        for concept in batch:
            by_source.setdefault(concept.source, []).append(concept)
        for name, concepts in by_source.items():
            target.add_concepts(concepts, name, loaded.get(name))
        wrote(len(batch))
    for layer in (Layer.USER, Layer.LITERATURE):
        for doc_id in source.document_ids(layer):
            chunks = source.chunks(doc_id)
            target.add_document(source.document(doc_id), chunks)
            for stage in sorted(source.stages(doc_id)):
                target.mark_stage(doc_id, stage)
            wrote(1 + len(chunks))
        for entities in _chunks(source.entities(layer), batch_size):
            target.add_entities(entities)
            wrote(len(entities))
        for triples in _chunks(source.iter_triples(layer), batch_size):
            target.add_triples(triples)
            wrote(len(triples))
    for links in _chunks(source.iter_links(), batch_size):
        target.add_links(links)
        wrote(len(links))
    decisions = source.decisions()
    target.add_decisions(decisions)
    wrote(len(decisions))
    return done
