"""The embedded graph store: an rdflib Dataset over Oxigraph (persistent on
disk) or rdflib's in-memory store, one named graph per layer plus links.

Each write is one ``addN`` call; on Oxigraph that is one atomic transaction,
so a crash leaves either all of a document (with its chunks) or none of it.
Queries take user values only as bound parameters (``initBindings``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from rdflib import RDF, Dataset, Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, OWL, PROV, SKOS
from rdflib.term import Node

from medkg.errors import NotFoundError, StoreError
from medkg.model import (
    Chunk,
    Concept,
    Document,
    Entity,
    Evidence,
    Layer,
    Link,
    LinkKind,
    Mention,
    Predicate,
    Qualifiers,
    ReviewState,
    Triple,
    stable_id,
)
from medkg.store import rdf_mapping as rm
from medkg.store.base import Deletion
from medkg.store.vocab import BIOLINK, LINK_PREDICATES, MKG, IRIs

Props = dict[URIRef, list[Node]]
Lookup = Callable[[URIRef], Props]
M = TypeVar("M")

# ttl is the union of all graphs (Turtle has no named graphs); the others keep them.
EXPORT_FORMATS = {"ttl": "turtle", "trig": "trig", "nq": "nquads", "jsonld": "json-ld"}


def _one(props: Props, pred: URIRef, default: Any = None) -> Any:
    values = props.get(pred)
    if not values:
        if default is not None:
            return default
        raise StoreError(f"stored node lacks {pred}")
    value = values[0]
    return value.toPython() if isinstance(value, Literal) else value


def _strs(props: Props, pred: URIRef) -> list[str]:
    return sorted(str(v) for v in props.get(pred, []))


class RDFGraphStore:
    """GraphStore on rdflib; ``backend`` is ``"oxigraph"`` (on disk) or ``"memory"``."""

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

    # -- plumbing -------------------------------------------------------------------

    def _graph(self, iri: URIRef) -> Graph:
        if iri not in self._graphs:
            self._graphs[iri] = self._ds.graph(iri)
        return self._graphs[iri]

    def _write(self, quads: list[rm.Quad]) -> None:
        if quads:
            self._ds.addN([(s, p, o, self._graph(g)) for s, p, o, g in quads])

    def _props(self, node: URIRef) -> Props:
        props: Props = defaultdict(list)
        for _s, p, o, _g in self._ds.quads((node, None, None, None)):
            props[URIRef(str(p))].append(o)
        return props

    def _graph_props(self, graph: URIRef) -> Lookup:
        """Every node of one named graph with its properties, read in one pass:
        far faster than one lookup per node when a whole layer is read."""
        nodes: dict[URIRef, Props] = defaultdict(lambda: defaultdict(list))
        for s, p, o, _g in self._ds.quads((None, None, None, self._graph(graph))):
            nodes[URIRef(str(s))][URIRef(str(p))].append(o)
        return lambda node: nodes.get(node) or self._props(node)

    def _read_all(
        self, graph: URIRef, rdf_type: URIRef, build: Callable[[Props, Lookup], M]
    ) -> list[M]:
        """Every node of one type in one graph, built from a single pass over it."""
        lookup = self._graph_props(graph)
        return [build(lookup(n), lookup) for n in self._subjects(RDF.type, rdf_type, graph)]

    def _exists(self, node: URIRef, rdf_type: URIRef) -> bool:
        return any(True for _ in self._ds.quads((node, RDF.type, rdf_type, None)))

    def _subjects(self, pred: URIRef, obj: Node, graph: URIRef | None = None) -> list[URIRef]:
        ctx = self._graph(graph) if graph is not None else None
        return sorted({URIRef(str(s)) for s, _p, _o, _g in self._ds.quads((None, pred, obj, ctx))})

    def _select(self, query: str, **bindings: URIRef | Literal) -> list[dict[str, Any]]:
        """Run a SELECT with bound values (Oxigraph needs bound variables projected)."""
        result = self._ds.query(query, initNs={"mkg": MKG}, initBindings=bindings)
        rows: list[dict[str, Any]] = []
        for row in result:
            assert isinstance(row, tuple)
            rows.append({
                str(var): (val.toPython() if isinstance(val, Literal) else val)
                for var, val in zip(result.vars or [], row, strict=True)
            })
        return rows

    # -- documents and chunks -------------------------------------------------------

    def add_document(self, document: Document, chunks: list[Chunk]) -> None:
        self._write(rm.document_quads(self.iris, document, chunks))

    def mark_stage(self, document_id: str, stage: str) -> None:
        doc = self.iris.node("doc", document_id)
        graph = self._document_graph(document_id)
        self._write([(doc, MKG.completed, Literal(stage), graph)])

    def _document_graph(self, document_id: str) -> URIRef:
        node = self.iris.node("doc", document_id)
        for _s, _p, _o, g in self._ds.quads((node, RDF.type, MKG.Document, None)):
            return URIRef(str(getattr(g, "identifier", g)))
        raise NotFoundError("document", document_id)

    def stages(self, document_id: str) -> set[str]:
        node = self.iris.node("doc", document_id)
        return {str(o) for _s, _p, o, _g in self._ds.quads((node, MKG.completed, None, None))}

    def has_document(self, document_id: str) -> bool:
        return self._exists(self.iris.node("doc", document_id), MKG.Document)

    def document(self, document_id: str) -> Document:
        props = self._props(self.iris.node("doc", document_id))
        if not props:
            raise NotFoundError("document", document_id)
        return Document(
            id=document_id,
            layer=Layer(_one(props, MKG.layer)),
            title=_one(props, DCTERMS.title),
            source=_one(props, DCTERMS.source),
            media_type=_one(props, DCTERMS["format"]),
            text=_one(props, MKG.text, ""),
        )

    def document_ids(self, layer: Layer | None = None) -> list[str]:
        graph = self.iris.graph(layer) if layer else None
        nodes = self._subjects(RDF.type, MKG.Document, graph)
        return sorted(str(_one(self._props(n), MKG.id)) for n in nodes)

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

    def _chunk_from(self, props: Props, layer: Layer, document_id: str) -> Chunk:
        return Chunk(
            id=_one(props, MKG.id),
            document_id=document_id,
            layer=layer,
            index=_one(props, MKG["index"]),
            start=_one(props, MKG.start),
            end=_one(props, MKG.end),
            text=_one(props, MKG.text, ""),
        )

    def chunk(self, chunk_id: str) -> Chunk:
        props = self._props(self.iris.node("chunk", chunk_id))
        if not props:
            raise NotFoundError("chunk", chunk_id)
        doc_props = self._props(URIRef(_one(props, MKG.document)))
        return self._chunk_from(props, Layer(_one(doc_props, MKG.layer)), _one(doc_props, MKG.id))

    def chunks(self, document_id: str) -> list[Chunk]:
        doc = self.iris.node("doc", document_id)
        doc_props = self._props(doc)
        if not doc_props:
            raise NotFoundError("document", document_id)
        layer = Layer(_one(doc_props, MKG.layer))
        # A quad pattern on the object is an index lookup; the equivalent SPARQL with
        # a bound ?d scanned every chunk of the store (quadratic over a corpus).
        pattern = (None, MKG.document, doc, None)
        found = {URIRef(str(c)) for c, _p, _o, _g in self._ds.quads(pattern)}
        chunks = [self._chunk_from(props, layer, document_id) for c in found
                  if MKG.Chunk in (props := self._props(c)).get(RDF.type, [])]
        return sorted(chunks, key=lambda c: c.index)

    # -- vocabulary -----------------------------------------------------------------

    def add_concepts(self, concepts: Iterable[Concept], source: str) -> int:
        graph = self.iris.graph(Layer.VOCABULARY)
        src = self.iris.node("source", stable_id("src", source))
        quads: list[rm.Quad] = [
            (src, RDF.type, PROV.Entity, graph),
            (src, DCTERMS.title, Literal(source), graph),
            (src, PROV.generatedAtTime, Literal(datetime.now(UTC)), graph),
        ]
        count = 0
        for concept in concepts:
            quads += rm.concept_quads(self.iris, concept)
            count += 1
        self._write(quads)
        return count

    def _concept_from(self, props: Props, lookup: Lookup | None = None) -> Concept:
        get = lookup or self._props

        def curie_of(node: Node) -> str:
            found = get(URIRef(str(node))).get(MKG.curie)
            return str(found[0]) if found else str(node)

        replaced = props.get(DCTERMS.isReplacedBy)
        return Concept(
            id=_one(props, MKG.curie),
            name=_one(props, SKOS.prefLabel),
            synonyms=_strs(props, SKOS.altLabel),
            definition=_one(props, SKOS.definition, "") or None,
            semantic_type=_one(props, MKG.semanticType, "") or None,
            semantic_group=_one(props, MKG.semanticGroup, "") or None,
            parents=sorted(curie_of(p) for p in props.get(SKOS.broader, [])),
            xrefs=_strs(props, MKG.xref),
            source=_one(props, DCTERMS.source),
            obsolete=bool(_one(props, OWL.deprecated, False)),
            replaced_by=curie_of(replaced[0]) if replaced else None,
        )

    def concept(self, concept_id: str) -> Concept:
        props = self._props(self.iris.concept(concept_id))
        if not props.get(MKG.curie):
            raise NotFoundError("concept", concept_id)
        return self._concept_from(props)

    def concepts(self) -> list[Concept]:
        return self._read_all(self.iris.graph(Layer.VOCABULARY), SKOS.Concept,
                              self._concept_from)

    # -- entities -------------------------------------------------------------------

    def add_entities(self, entities: Iterable[Entity]) -> None:
        quads: list[rm.Quad] = []
        for entity in entities:
            node = self.iris.node("entity", entity.id)
            if not self._exists(node, MKG.Entity):
                quads += rm.entity_header_quads(self.iris, entity)
            for mention in entity.mentions:
                quads += rm.mention_quads(self.iris, entity, mention)
        self._write(quads)

    def _qualifiers(self, props: Props) -> Qualifiers:
        return Qualifiers(
            negated=bool(_one(props, MKG.negated, False)),
            uncertain=bool(_one(props, MKG.uncertain, False)),
            hypothetical=bool(_one(props, MKG.hypothetical, False)),
            historical=bool(_one(props, MKG.historical, False)),
            experiencer=_one(props, MKG.experiencer, "patient"),
            population=_one(props, MKG.population, "") or None,
        )

    def _span(self, props: Props) -> dict[str, Any]:
        """The location fields of a mention or evidence node."""
        return {"chunk_id": self._id_of(_one(props, MKG.chunk)),
                "document_id": self._id_of(_one(props, MKG.document)),
                "start": _one(props, MKG.start), "end": _one(props, MKG.end)}

    def _id_of(self, node: Node) -> str:
        """The id of a data node: its IRI's last segment (we mint them that way)."""
        return str(node).rsplit("/", 1)[-1]

    def _entity_from(self, props: Props, lookup: Lookup | None = None) -> Entity:
        get = lookup or self._props
        mentions = []
        for m in props.get(MKG.mention, []):
            mp = get(URIRef(str(m)))
            mentions.append(Mention(**self._span(mp), text=_one(mp, MKG.text),
                                    qualifiers=self._qualifiers(mp)))
        mentions.sort(key=lambda m: (m.document_id, m.start))
        return Entity(
            id=_one(props, MKG.id),
            layer=Layer(_one(props, MKG.layer)),
            name=_one(props, SKOS.prefLabel),
            type=_one(props, MKG.semanticGroup),
            context=_one(props, MKG.context, ""),
            concept_ids=_strs(props, MKG.conceptId),
            mentions=mentions,
        )

    def entity(self, entity_id: str) -> Entity:
        node = self.iris.node("entity", entity_id)
        props = self._props(node)
        if not props:
            raise NotFoundError("entity", entity_id)
        return self._entity_from(props)

    def entities(self, layer: Layer) -> list[Entity]:
        return self._read_all(self.iris.graph(layer), MKG.Entity, self._entity_from)

    # -- triples --------------------------------------------------------------------

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

    def _triple_from(self, props: Props, lookup: Lookup | None = None) -> Triple:
        get = lookup or self._props
        evidence = []
        for e in props.get(PROV.wasDerivedFrom, []):
            ep = get(URIRef(str(e)))
            evidence.append(Evidence(**self._span(ep), quote=_one(ep, MKG.quote)))
        evidence.sort(key=lambda e: (e.document_id, e.start))
        return Triple(
            id=_one(props, MKG.id),
            layer=Layer(_one(props, MKG.layer)),
            head=self._id_of(_one(props, RDF.subject)),
            predicate=Predicate(_one(props, MKG.predicate)),
            tail=self._id_of(_one(props, RDF.object)),
            evidence=evidence,
            qualifiers=self._qualifiers(props),
            confidence=float(_one(props, MKG.confidence)),
            level=_one(props, MKG.level, 0),
            review=ReviewState(_one(props, MKG.reviewState)),
            method=_one(props, MKG.method),
        )

    def triples(
        self, layer: Layer | None = None, entity_ids: Iterable[str] | None = None
    ) -> list[Triple]:
        graph = self.iris.graph(layer) if layer else None
        if entity_ids is None:
            layers = [layer] if layer else [Layer.USER, Layer.LITERATURE]
            out = [t for lay in layers for t in self._read_all(
                self.iris.graph(lay), MKG.Assertion, self._triple_from)]
            return sorted(out, key=lambda t: t.id)
        else:
            nodes = set()
            for eid in entity_ids:
                ent = self.iris.node("entity", eid)
                nodes.update(self._subjects(RDF.subject, ent, graph))
                nodes.update(self._subjects(RDF.object, ent, graph))
        return sorted((self._triple_from(self._props(n)) for n in nodes), key=lambda t: t.id)

    # -- links ----------------------------------------------------------------------

    def _link_node(self, kind: LinkKind, identifier: str, *, target: bool) -> URIRef:
        if target and kind is LinkKind.DEFINITION_OF:
            return self.iris.concept(identifier)
        return self.iris.node("entity", identifier)

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

    def links(self, *, source: str | None = None, kind: LinkKind | None = None) -> list[Link]:
        graph = self.iris.graph("links")
        if source is not None:
            nodes = self._subjects(MKG.sourceId, Literal(source), graph)
        else:
            nodes = self._subjects(RDF.type, MKG.Link, graph)
        out = []
        for n in nodes:
            p = self._props(n)
            link = Link(
                kind=LinkKind(_one(p, MKG.linkKind)), source=_one(p, MKG.sourceId),
                target=_one(p, MKG.targetId), score=float(_one(p, MKG.score)),
                method=_one(p, MKG.method),
            )
            if kind is None or link.kind is kind:
                out.append(link)
        return sorted(out, key=lambda x: (x.kind.value, x.source, -x.score, x.target))

    # -- whole store ----------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        def count(rdf_type: URIRef, layer: Layer | str) -> int:
            return len(self._subjects(RDF.type, rdf_type, self.iris.graph(layer)))

        result = {"quads": sum(1 for _ in self._ds.quads((None, None, None, None)))}
        for layer in (Layer.USER, Layer.LITERATURE):
            result[f"{layer.value}.documents"] = count(MKG.Document, layer)
            result[f"{layer.value}.chunks"] = count(MKG.Chunk, layer)
            result[f"{layer.value}.entities"] = count(MKG.Entity, layer)
            result[f"{layer.value}.triples"] = count(MKG.Assertion, layer)
        result["vocabulary.concepts"] = count(SKOS.Concept, Layer.VOCABULARY)
        result["links"] = count(MKG.Link, "links")
        return result

    def export(self, path: Path, fmt: str) -> None:
        """Write the graph: ``ttl`` (all graphs merged), ``trig``, ``nq``, ``jsonld``."""
        if fmt not in EXPORT_FORMATS:
            raise StoreError(
                f"unknown export format {fmt!r}", hint=f"use one of {', '.join(EXPORT_FORMATS)}"
            )
        # Copy into an in-memory dataset: serialisers need rdflib's own store API.
        out = Dataset()
        for prefix, ns in (("mkg", MKG), ("biolink", BIOLINK), ("skos", SKOS), ("prov", PROV),
                           ("dcterms", DCTERMS), ("owl", OWL)):
            out.bind(prefix, ns)
        merged = Graph(namespace_manager=out.namespace_manager)
        graphs: dict[URIRef, Graph] = {}
        for s, p, o, g in self._ds.quads((None, None, None, None)):
            gid = URIRef(str(getattr(g, "identifier", g)))
            if fmt == "ttl":
                merged.add((s, p, o))
                continue
            if gid not in graphs:
                graphs[gid] = out.graph(gid)
            graphs[gid].add((s, p, o))
        tmp = path.with_name(path.name + ".tmp")
        target: Graph = merged if fmt == "ttl" else out
        target.serialize(destination=str(tmp), format=EXPORT_FORMATS[fmt])
        tmp.replace(path)

    def close(self) -> None:
        self._ds.close()


def _is_true(node: Node | None) -> bool:
    return isinstance(node, Literal) and bool(node.toPython())
