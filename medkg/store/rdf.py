"""The embedded graph store: an rdflib Dataset over Oxigraph (persistent on
disk) or rdflib's in-memory store, one named graph per layer plus links.

Each write is one ``addN`` call; on Oxigraph that is one atomic transaction,
so a crash leaves either all of a document (with its chunks) or none of it.
Queries take user values only as bound parameters (``initBindings``); reading
is in :mod:`medkg.store.rdf_reading`, export in :mod:`medkg.export.rdf`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rdflib import RDF, BNode, Dataset, Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, PROV, SKOS
from rdflib.term import Node

from medkg.errors import StoreError
from medkg.model import (
    Chunk,
    Concept,
    Decision,
    Document,
    Entity,
    EntityEdit,
    Layer,
    Link,
    ReviewState,
    Triple,
    stable_id,
)
from medkg.store import rdf_mapping as rm
from medkg.store.base import Deletion
from medkg.store.rdf_reading import RDFReader, _one
from medkg.store.vocab import BIOLINK, LINK_PREDICATES, MKG, IRIs

if TYPE_CHECKING:
    from medkg.store.sparql import Endpoint

AnyQuad = tuple[Node, Node, Node, URIRef]  # a quad as read back from the store


class RDFGraphStore(RDFReader):
    """GraphStore on rdflib; ``backend`` is ``"oxigraph"`` (on disk), ``"memory"``
    or ``"sparql"`` (a SPARQL 1.1 server at ``endpoint``).
    Open it through :func:`medkg.store.registry.open_store`."""

    def __init__(self, path: Path | None, *, base_iri: str, backend: str = "oxigraph",
                 read_only: bool = False, endpoint: Endpoint | None = None,
                 batch_size: int = 2000) -> None:
        self.iris = IRIs(base_iri)
        self.read_only = read_only
        if backend == "oxigraph":
            if path is None:
                raise StoreError("the oxigraph backend needs a directory")
            try:
                self._ds = _open_oxigraph(path, read_only)
            except (OSError, ValueError) as exc:
                raise StoreError(f"cannot open the graph store at {path}: {exc}",
                                 hint=_open_hint(path, exc)) from exc
        elif backend == "memory":
            self._ds = Dataset(store="Memory")
        elif backend == "sparql":
            from medkg.store.sparql import SPARQLProtocolStore

            if endpoint is None:
                raise StoreError("the sparql backend needs an endpoint")
            self._ds = Dataset(store=SPARQLProtocolStore(
                endpoint, self.iris.graphs(), batch_size=batch_size, read_only=read_only))
        else:
            raise StoreError(f"unknown store backend {backend!r}",
                             hint="use oxigraph, memory or sparql")
        self.backend = backend
        self._ds.bind("mkg", MKG)
        self._ds.bind("biolink", BIOLINK)
        self._graphs: dict[URIRef, Graph] = {}

    def _check_writable(self) -> None:
        if self.read_only:
            raise StoreError("this graph store was opened read-only (another process "
                             "writes it)", hint="run the command again when it has finished")

    def _write(self, quads: list[rm.Quad]) -> None:
        self._check_writable()
        if quads:
            self._ds.addN([(s, p, o, self._graph(g)) for s, p, o, g in quads])

    def add_document(self, document: Document, chunks: list[Chunk]) -> None:
        """Store a document with its chunks (one transaction). The same text stored
        again (an ingest cut short, re-run from another path) keeps one title and
        one source: the new ones; its stage marks stay."""
        quads = rm.document_quads(self.iris, document, chunks)
        node = self.iris.node("doc", document.id)
        replaced = (DCTERMS.source, DCTERMS.title)
        old: list[AnyQuad] = [
            (s, p, o, URIRef(str(getattr(g, "identifier", g))))
            for s, p, o, g in self._ds.quads((node, None, None, None)) if p in replaced]
        self._write(quads)
        kept = {_key(q) for q in quads}
        self._remove([q for q in old if _key(q) not in kept])

    def mark_stage(self, document_id: str, stage: str) -> None:
        doc = self.iris.node("doc", document_id)
        graph = self._document_graph(document_id)
        self._write([(doc, MKG.completed, Literal(stage), graph)])

    def unmark_stage(self, document_id: str, stage: str) -> None:
        doc = self.iris.node("doc", document_id)
        self._remove([(doc, MKG.completed, Literal(stage), self._document_graph(document_id))])

    def delete_extraction(self, document_id: str, marks: Iterable[str]) -> Deletion:
        """Remove what extraction wrote from a document, and these stage marks,
        in one transaction: as :meth:`delete_document`, but its text and chunks
        stay (it is extracted again)."""
        quads, out = self._deletion_plan(document_id, keep_text=True)
        doc = self.iris.node("doc", document_id)
        graph = self._document_graph(document_id)
        self._remove([*quads, *((doc, MKG.completed, Literal(m), graph) for m in marks)])
        return out

    def delete_document(self, document_id: str,
                        journal: Callable[[Deletion], None] | None = None) -> Deletion:
        """Remove a document and everything only it supports: its chunks, the
        mentions and evidence in it, entities left without mentions, triples left
        without evidence (or whose entity went), and links to what was removed.

        What goes is worked out first, read-only; ``journal`` (if given) is told
        before anything is removed; then every quad goes in one transaction, so a
        crash leaves the whole document (its text too) or nothing of it."""
        quads, out = self._deletion_plan(document_id)
        if journal is not None:
            journal(out)
        self._remove(quads)
        return out

    def _deletion_plan(self, document_id: str, *, keep_text: bool = False
                       ) -> tuple[list[AnyQuad], Deletion]:
        graph_iri = self._document_graph(document_id)
        graph = self._graph(graph_iri)
        doc = self.iris.node("doc", document_id)
        out = Deletion()
        gone: dict[AnyQuad, None] = {}  # ordered set: the document's own quads first

        def take(pattern: tuple[Node | None, Node | None, Node | None]) -> None:
            for s, p, o in graph.triples(pattern):
                gone[(s, p, o, graph_iri)] = None

        if not keep_text:
            take((doc, None, None))
        mentions: set[Node] = set()
        evidence: set[Node] = set()
        for node in self._subjects(MKG.document, doc, graph_iri):
            if (node, RDF.type, MKG.Mention) in graph:
                take((None, MKG.mention, node))
                mentions.add(node)
            elif (node, RDF.type, MKG.Evidence) in graph:
                take((None, PROV.wasDerivedFrom, node))
                evidence.add(node)
            elif (node, RDF.type, MKG.Chunk) in graph:
                if keep_text:
                    continue
                out.chunks.append(self._id_of(node))
            take((node, None, None))
        out.mentions, out.evidence = len(mentions), len(evidence)
        gone_entities = {URIRef(str(e)) for e in graph.subjects(RDF.type, MKG.Entity)
                         if all(m in mentions for m in graph.objects(e, MKG.mention))}
        gone_statements = {
            URIRef(str(x)) for x in graph.subjects(RDF.type, MKG.Assertion)
            if all(ev in evidence for ev in graph.objects(x, PROV.wasDerivedFrom))
            or graph.value(x, RDF.subject) in gone_entities
            or graph.value(x, RDF.object) in gone_entities}
        gone_ids = {self._id_of(e) for e in gone_entities}
        links = [x for x in self.links() if x.source in gone_ids or x.target in gone_ids]
        for link in links:
            for quad in self._link_quads(link):
                gone[quad] = None
        out.links = len(links)
        for s_node in sorted(gone_statements):
            head, tail = graph.value(s_node, RDF.subject), graph.value(s_node, RDF.object)
            predicate = graph.value(s_node, RDF.predicate)
            take((s_node, None, None))
            out.triples.append(self._id_of(s_node))
            # The plain fact goes when no other factual statement of it remains.
            if head is not None and predicate is not None and tail is not None and not any(
                    x not in gone_statements
                    and (x, RDF.predicate, predicate) in graph and (x, RDF.object, tail) in graph
                    and self._qualifiers(self._props(URIRef(str(x)))).is_factual
                    for x in graph.subjects(RDF.subject, head)):
                take((head, predicate, tail))
        for e in sorted(gone_entities):
            take((e, None, None))
        out.entities = sorted(gone_ids)
        out.chunks.sort()
        out.triples.sort()
        return list(gone), out

    def _remove(self, quads: Sequence[AnyQuad]) -> None:
        """Remove quads all at once: on Oxigraph one SPARQL ``DELETE DATA`` update
        (one transaction; every term is written by Oxigraph's own serialiser, so no
        text of ours or the user's is spliced into the update); on a SPARQL server
        ``DELETE DATA`` requests (:mod:`medkg.store.sparql`); in memory, undone if
        interrupted."""
        self._check_writable()
        if not quads:
            return
        if self.backend == "oxigraph":
            body = " ".join(f"GRAPH {_ox(g)} {{ {_ox(s)} {_ox(p)} {_ox(o)} }}"
                            for s, p, o, g in quads)
            self._ds.update(f"DELETE DATA {{ {body} }}")
            return
        if self.backend == "sparql":
            self._ds.store.delete_quads(quads)  # type: ignore[attr-defined]
            return
        done: list[AnyQuad] = []
        try:
            for s, p, o, g in quads:
                self._graph(g).remove((s, p, o))
                done.append((s, p, o, g))
        except BaseException:
            self._ds.addN([(s, p, o, self._graph(g)) for s, p, o, g in done])
            raise

    def add_concepts(self, concepts: Iterable[Concept], source: str,
                     loaded_at: datetime | None = None) -> int:
        """Store concepts; a concept stored before is replaced by its new values
        (the last of several with one id wins). The new values are written in one
        transaction and the old ones that are gone removed in a second, so a crash
        in between leaves old and new side by side until the load is run again."""
        graph = self.iris.graph(Layer.VOCABULARY)
        vocabulary = self._graph(graph)
        src = self.iris.node("source", stable_id("src", source))
        quads: list[rm.Quad] = [
            (src, RDF.type, PROV.Entity, graph),
            (src, DCTERMS.title, Literal(source), graph),
            (src, PROV.generatedAtTime, Literal(loaded_at or datetime.now(UTC)), graph),
        ]
        old: list[AnyQuad] = [(s, p, o, graph) for s, p, o
                              in vocabulary.triples((src, PROV.generatedAtTime, None))]
        latest = {concept.id: concept for concept in concepts}
        for concept in latest.values():
            node = self.iris.concept(concept.id)
            old += [(s, p, o, graph) for s, p, o in vocabulary.triples((node, None, None))]
            quads += rm.concept_quads(self.iris, concept)
        self._write(quads)
        kept = {_key(q) for q in quads}
        self._remove([q for q in old if _key(q) not in kept])
        return len(latest)

    def add_entities(self, entities: Iterable[Entity]) -> None:
        quads: list[rm.Quad] = []
        for entity in entities:
            node = self.iris.node("entity", entity.id)
            if not self._exists(node, MKG.Entity):
                quads += rm.entity_header_quads(self.iris, entity)
            for mention in entity.mentions:
                quads += rm.mention_quads(self.iris, entity, mention)
        self._write(quads)

    def add_triples(self, triples: Iterable[Triple]) -> None:
        quads: list[rm.Quad] = []
        for triple in triples:
            node = self.iris.node("statement", triple.id)
            graph = self.iris.graph(triple.layer)
            known = self._props(node)
            if not known:
                quads += rm.triple_header_quads(self.iris, triple)
                quads.append((node, MKG.confidence, Literal(float(triple.confidence)), graph))
            elif float(_one(known, MKG.confidence)) < triple.confidence:
                self._graph(graph).remove((node, MKG.confidence, None))
                quads.append((node, MKG.confidence, Literal(float(triple.confidence)), graph))
            for ev in triple.evidence:
                quads += rm.evidence_quads(self.iris, triple, ev)
        self._write(quads)

    # -- review ------------------------------------------------------------------

    def add_decisions(self, decisions: Iterable[Decision]) -> None:
        self._write([q for d in decisions for q in rm.decision_quads(self.iris, d)])

    def _statement_graph(self, node: URIRef) -> URIRef | None:
        for _s, _p, _o, g in self._ds.quads((node, RDF.type, MKG.Assertion, None)):
            return URIRef(str(getattr(g, "identifier", g)))
        return None

    def _replace(self, node: URIRef, graph: URIRef, pred: URIRef, values: list[Literal]) -> None:
        old: list[AnyQuad] = [(s, p, o, graph) for s, p, o
                              in self._graph(graph).triples((node, pred, None))]
        new = [(node, pred, v, graph) for v in values]
        self._write(new)  # type: ignore[arg-type]
        kept = {_key(q) for q in new}
        self._remove([q for q in old if _key(q) not in kept])

    def set_review_state(self, triple_id: str, state: ReviewState) -> bool:
        node = self.iris.node("statement", triple_id)
        graph = self._statement_graph(node)
        if graph is None:
            return False
        self._replace(node, graph, MKG.reviewState, [Literal(state.value)])
        return True

    def update_entity(self, entity_id: str, edit: EntityEdit) -> bool:
        node = self.iris.node("entity", entity_id)
        graph = next((URIRef(str(getattr(g, "identifier", g))) for _s, _p, _o, g
                      in self._ds.quads((node, RDF.type, MKG.Entity, None))), None)
        if graph is None:
            return False
        if edit.name is not None:
            self._replace(node, graph, SKOS.prefLabel, [Literal(edit.name)])
        if edit.type is not None:
            self._replace(node, graph, MKG.semanticGroup, [Literal(edit.type)])
        if edit.concept_ids is not None:
            self._replace(node, graph, MKG.conceptId, [Literal(c) for c in edit.concept_ids])
        return True

    def remove_triples(self, triple_ids: Iterable[str]) -> list[str]:
        """Remove statements (their evidence nodes too, where no other statement
        uses them; the plain fact where no other factual statement asserts it),
        in one transaction; returns the ids that were there."""
        gone: dict[AnyQuad, None] = {}
        removed: list[str] = []
        nodes = {self.iris.node("statement", t) for t in triple_ids}
        for node in sorted(nodes):
            graph_iri = self._statement_graph(node)
            if graph_iri is None:
                continue
            graph = self._graph(graph_iri)
            removed.append(self._id_of(node))
            for ev in graph.objects(node, PROV.wasDerivedFrom):
                if all(x in nodes for x in graph.subjects(PROV.wasDerivedFrom, ev)):
                    gone.update(((s, p, o, graph_iri), None)
                                for s, p, o in graph.triples((ev, None, None)))
            head, tail = graph.value(node, RDF.subject), graph.value(node, RDF.object)
            predicate = graph.value(node, RDF.predicate)
            gone.update(((s, p, o, graph_iri), None)
                        for s, p, o in graph.triples((node, None, None)))
            if head is not None and predicate is not None and tail is not None and not any(
                    x not in nodes and (x, RDF.predicate, predicate) in graph
                    and (x, RDF.object, tail) in graph
                    and self._qualifiers(self._props(URIRef(str(x)))).is_factual
                    for x in graph.subjects(RDF.subject, head)):
                gone[(head, predicate, tail, graph_iri)] = None
        self._remove(list(gone))
        return removed

    def add_links(self, links: Iterable[Link]) -> None:
        quads: list[rm.Quad] = []
        for link in links:
            source = self._link_node(link.kind, link.source, target=False)
            target = self._link_node(link.kind, link.target, target=True)
            quads += rm.link_quads(self.iris, link, source, target)
        self._write(quads)

    def _link_quads(self, link: Link) -> list[AnyQuad]:
        """The quads that hold ``link`` in the store (none when it is not there)."""
        graph_iri = self.iris.graph("links")
        graph = self._graph(graph_iri)
        node = self.iris.node("link", link.id)
        if (node, RDF.type, MKG.Link) not in graph:
            return []
        source = self._link_node(link.kind, link.source, target=False)
        target = self._link_node(link.kind, link.target, target=True)
        own: list[AnyQuad] = [(s, p, o, graph_iri) for s, p, o in graph.triples((node, None, None))]
        return [*own, (source, LINK_PREDICATES[link.kind], target, graph_iri)]

    def remove_links(self, links: Iterable[Link]) -> int:
        """Remove links (matched by kind, source and target), in one transaction;
        returns how many were there."""
        found = [quads for link in links if (quads := self._link_quads(link))]
        self._remove([q for quads in found for q in quads])
        return len(found)

    def migrate_concept_iris(self) -> int:
        """Move every concept whose node is not at the IRI this store mints from its
        CURIE today (a workspace made before concept IRIs came from the Bioregistry)
        to that IRI, as subject and as object in every graph, a batch of concepts at
        a time: the new quads are written, then the old removed. Run again after a
        crash, it moves only what is left (a node still holding its CURIE)."""
        vocabulary = self._graph(self.iris.graph(Layer.VOCABULARY))
        moves: dict[URIRef, URIRef] = {}
        for node, _p, curie, _g in self._ds.quads((None, MKG.curie, None, vocabulary)):
            new = self.iris.concept(str(curie))
            if str(node) != str(new):
                moves[URIRef(str(node))] = new
        olds = list(moves)
        for start in range(0, len(olds), 2000):
            old_quads: list[AnyQuad] = []
            for old in olds[start:start + 2000]:
                for pattern in ((old, None, None, None), (None, None, old, None)):
                    old_quads.extend((s, p, o, URIRef(str(getattr(g, "identifier", g))))
                                     for s, p, o, g in self._ds.quads(pattern))
            unique = list(dict.fromkeys(old_quads))  # a concept its own object: once

            def moved(term: Node) -> Node:
                return moves.get(term, term) if isinstance(term, URIRef) else term

            self._ds.addN([(moved(s), p, moved(o), self._graph(g)) for s, p, o, g in unique])
            self._remove(unique)
        return len(moves)

    def add_quads(self, quads: Iterable[AnyQuad]) -> None:
        """Write quads as they are (a graph copied from another store, see
        :mod:`medkg.store.copy`); one transaction on Oxigraph, batches on a server."""
        self._write(list(quads))  # type: ignore[arg-type]

    def clear(self) -> None:
        """Remove every quad of this store's graphs (and nothing else a server holds)."""
        self._check_writable()
        for graph in self.iris.graphs():
            if self.backend == "memory":
                self._ds.remove((None, None, None, self._graph(graph)))  # type: ignore[arg-type]
            else:
                self._ds.update(f"CLEAR SILENT GRAPH {_ox(graph)}")

    def close(self) -> None:
        inner = getattr(self._ds.store, "_inner", None) if self.backend == "oxigraph" else None
        if inner is not None and not self.read_only:
            # Written data goes from RocksDB's log into its tables now: otherwise the
            # next open replays the log, 38 s after a 600k-quad vocabulary load.
            inner.flush()
        self._ds.close()


def _ox(term: Node) -> str:
    """``term`` as Oxigraph writes it (N-Triples syntax, valid in SPARQL data)."""
    import pyoxigraph as ox

    if isinstance(term, URIRef):
        return str(ox.NamedNode(str(term)))
    if isinstance(term, BNode):
        return str(ox.BlankNode(str(term)))
    if isinstance(term, Literal):
        if term.language:
            return str(ox.Literal(str(term), language=term.language))
        datatype = ox.NamedNode(str(term.datatype)) if term.datatype else None
        return str(ox.Literal(str(term), datatype=datatype))
    raise StoreError(f"cannot write the RDF term {term!r}")


def _key(quad: AnyQuad) -> tuple[str, ...]:
    """A quad as the store sees it (``"x"`` and ``"x"^^xsd:string`` are one term)."""
    return tuple(_ox(term) for term in quad)


READ_ONLY_ATTEMPTS = 20


def _open_oxigraph(path: Path, read_only: bool) -> Dataset:
    """An Oxigraph dataset at ``path``; ``read_only``: a snapshot of what is
    committed now, opened beside the process that writes it."""
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
        ds = Dataset(store="Oxigraph")
        ds.open(str(path), create=not path.exists())
        return ds
    import pyoxigraph as ox
    from oxrdflib.store import OxigraphStore

    if not path.is_dir():
        raise OSError(f"{path} does not exist yet")
    # The writer's compactions replace table files while RocksDB opens them: a
    # file its manifest named may be gone a moment later. Open again then.
    for attempt in range(READ_ONLY_ATTEMPTS):
        try:
            return Dataset(store=OxigraphStore(store=ox.Store.read_only(str(path))))
        except (OSError, RuntimeError) as exc:
            if attempt == READ_ONLY_ATTEMPTS - 1:
                raise OSError(f"no consistent snapshot after {READ_ONLY_ATTEMPTS} tries "
                              f"({exc})") from exc
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def _open_hint(path: Path, exc: BaseException | None = None) -> str:
    """Why Oxigraph may refuse to open a store: say the likely cause."""
    import os

    from medkg.files import disk_full_hint, is_disk_full

    if exc is not None and is_disk_full(exc):
        return disk_full_hint(path)

    writable = (path.exists() and os.access(path, os.W_OK)) or (
        not path.exists() and os.access(path.parent, os.W_OK))
    if not writable:
        return (f"{path} is read-only for you: medkg needs to write to its workspace "
                "(copy it somewhere writable to read it)")
    return "is another medkg process using this workspace? wait for it to finish"
