"""The embedded graph store: an rdflib Dataset over Oxigraph (persistent on
disk) or rdflib's in-memory store, one named graph per layer plus links.

Each write is one ``addN`` call; on Oxigraph that is one atomic transaction,
so a crash leaves either all of a document (with its chunks) or none of it.
Queries take user values only as bound parameters (``initBindings``); reading
is in :mod:`medkg.store.rdf_reading`, export in :mod:`medkg.export.rdf`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from rdflib import RDF, Dataset, Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, PROV, SKOS

from medkg.errors import StoreError
from medkg.model import (
    Chunk,
    Concept,
    Document,
    Entity,
    Layer,
    Link,
    Triple,
    stable_id,
)
from medkg.store import rdf_mapping as rm
from medkg.store.base import Deletion
from medkg.store.rdf_reading import RDFReader, _is_true, _one
from medkg.store.vocab import BIOLINK, LINK_PREDICATES, MKG, IRIs


class RDFGraphStore(RDFReader):
    """GraphStore on rdflib; ``backend`` is ``"oxigraph"`` (on disk) or ``"memory"``.
    Open it through :func:`medkg.store.registry.open_store`."""

    def __init__(self, path: Path | None, *, base_iri: str, backend: str = "oxigraph") -> None:
        self.iris = IRIs(base_iri)
        if backend == "oxigraph":
            if path is None:
                raise StoreError("the oxigraph backend needs a directory")
            path.parent.mkdir(parents=True, exist_ok=True)
            self._ds = Dataset(store="Oxigraph")
            try:
                self._ds.open(str(path), create=not path.exists())
            except (OSError, ValueError) as exc:
                raise StoreError(
                    f"cannot open the graph store at {path}: {exc}",
                    hint="is another medkg process using this workspace?",
                ) from exc
        elif backend == "memory":
            self._ds = Dataset(store="Memory")
        else:
            raise StoreError(f"unknown store backend {backend!r}", hint="use oxigraph or memory")
        self._ds.bind("mkg", MKG)
        self._ds.bind("biolink", BIOLINK)
        self._graphs: dict[URIRef, Graph] = {}

    def _write(self, quads: list[rm.Quad]) -> None:
        if quads:
            self._ds.addN([(s, p, o, self._graph(g)) for s, p, o, g in quads])

    def add_document(self, document: Document, chunks: list[Chunk]) -> None:
        self._write(rm.document_quads(self.iris, document, chunks))

    def mark_stage(self, document_id: str, stage: str) -> None:
        doc = self.iris.node("doc", document_id)
        graph = self._document_graph(document_id)
        self._write([(doc, MKG.completed, Literal(stage), graph)])

    def delete_document(self, document_id: str) -> Deletion:
        """Remove a document and everything only it supports: its chunks, the
        mentions and evidence in it, entities left without mentions, triples left
        without evidence (or whose entity went), and links to what was removed.

        The document node goes last and orphans are swept from the whole layer,
        so a delete interrupted by a crash completes when run again."""
        graph_iri = self._document_graph(document_id)
        graph = self._graph(graph_iri)
        doc = self.iris.node("doc", document_id)
        out = Deletion()
        for node in self._subjects(MKG.document, doc, graph_iri):
            if (node, RDF.type, MKG.Mention) in graph:
                graph.remove((None, MKG.mention, node))
                out.mentions += 1
            elif (node, RDF.type, MKG.Evidence) in graph:
                graph.remove((None, PROV.wasDerivedFrom, node))
                out.evidence += 1
            elif (node, RDF.type, MKG.Chunk) in graph:
                out.chunks.append(self._id_of(node))
            graph.remove((node, None, None))
        gone_entities = {URIRef(str(e)) for e in graph.subjects(RDF.type, MKG.Entity)
                         if (e, MKG.mention, None) not in graph}
        gone_statements = {
            URIRef(str(x)) for x in graph.subjects(RDF.type, MKG.Assertion)
            if (x, PROV.wasDerivedFrom, None) not in graph
            or graph.value(x, RDF.subject) in gone_entities
            or graph.value(x, RDF.object) in gone_entities}
        gone = {self._id_of(e) for e in gone_entities}
        out.links = self.remove_links(
            [x for x in self.links() if x.source in gone or x.target in gone])
        for s_node in gone_statements:
            head, tail = graph.value(s_node, RDF.subject), graph.value(s_node, RDF.object)
            predicate = graph.value(s_node, RDF.predicate)
            graph.remove((s_node, None, None))
            out.triples.append(self._id_of(s_node))
            # The plain fact goes when no other positive statement of it remains.
            if head is not None and predicate is not None and tail is not None and not any(
                    (x, RDF.predicate, predicate) in graph and (x, RDF.object, tail) in graph
                    and not _is_true(graph.value(x, MKG.negated))
                    for x in graph.subjects(RDF.subject, head)):
                graph.remove((head, predicate, tail))
        for e in gone_entities:
            graph.remove((e, None, None))
        graph.remove((doc, None, None))
        out.entities = sorted(gone)
        out.chunks.sort()
        out.triples.sort()
        return out

    def add_concepts(self, concepts: Iterable[Concept], source: str) -> int:
        graph = self.iris.graph(Layer.VOCABULARY)
        src = self.iris.node("source", stable_id("src", source))
        quads: list[rm.Quad] = [
            (src, RDF.type, PROV.Entity, graph),
            (src, DCTERMS.title, Literal(source), graph),
            (src, PROV.generatedAtTime, Literal(datetime.now(UTC)), graph),
        ]
        count = 0
        vocabulary = self._graph(graph)
        for concept in concepts:
            node = self.iris.concept(concept.id)
            # A concept loaded again is replaced, not merged with its old values.
            if (node, RDF.type, SKOS.Concept) in vocabulary:
                vocabulary.remove((node, None, None))
            quads += rm.concept_quads(self.iris, concept)
            count += 1
        # A reload replaces the source's load time rather than adding another.
        vocabulary.remove((src, PROV.generatedAtTime, None))
        self._write(quads)
        return count

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

    def add_links(self, links: Iterable[Link]) -> None:
        quads: list[rm.Quad] = []
        for link in links:
            source = self._link_node(link.kind, link.source, target=False)
            target = self._link_node(link.kind, link.target, target=True)
            quads += rm.link_quads(self.iris, link, source, target)
        self._write(quads)

    def remove_links(self, links: Iterable[Link]) -> int:
        """Remove links (matched by kind, source and target); returns how many were there."""
        removed = 0
        for link in links:
            source = self._link_node(link.kind, link.source, target=False)
            target = self._link_node(link.kind, link.target, target=True)
            graph = self._graph(self.iris.graph("links"))
            node = self.iris.node("link", link.id)
            if (node, RDF.type, MKG.Link) not in graph:
                continue
            graph.remove((node, None, None))
            graph.remove((source, LINK_PREDICATES[link.kind], target))
            removed += 1
        return removed

    def close(self) -> None:
        self._ds.close()
