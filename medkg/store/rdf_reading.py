"""Reading the embedded graph store: every query of :class:`RDFGraphStore`.

Over 500 lines because it is every read of the store contract over quads for
the RDF backends (Oxigraph, a SPARQL server), kept for workspaces that live
there (the typed tables are the default); it is not grown further.

Nodes are read by their properties (one pass over a named graph when a whole
layer is read) and turned back into the model objects they were written from.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any, TypeVar, cast

from rdflib import RDF, RDFS, Dataset, Graph, Literal, URIRef
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.namespace import DCTERMS, OWL, PROV, SKOS
from rdflib.term import Node

from medkg.errors import NotFoundError, StoreError
from medkg.model import (
    Chunk,
    Concept,
    Decision,
    Document,
    Entity,
    EntityBrief,
    Evidence,
    Layer,
    Link,
    LinkKind,
    Mention,
    Predicate,
    Qualifiers,
    ReviewAction,
    ReviewState,
    ReviewTarget,
    Triple,
    review_payload_types,
)
from medkg.store.base import LayerCounts, StoreCounts
from medkg.store.sparql import sparql_term
from medkg.store.vocab import MKG, IRIs

Props = dict[URIRef, list[Node]]
Lookup = Callable[[URIRef], Props]
M = TypeVar("M")


def _one(props: Props, pred: URIRef, default: Any = None) -> Any:
    values = props.get(pred)
    if not values:
        if default is not None:
            return default
        raise StoreError(f"stored node lacks {pred}")
    value = values[0]
    return value.toPython() if isinstance(value, Literal) else value


def _opt(props: Props, pred: URIRef) -> Any:
    """The value of an optional property, or None."""
    values = props.get(pred)
    if not values:
        return None
    return values[0].toPython() if isinstance(values[0], Literal) else values[0]


def _strs(props: Props, pred: URIRef) -> list[str]:
    return sorted(str(v) for v in props.get(pred, []))


_BATCH = 400  # ids per VALUES block
_IRI_UNSAFE = frozenset('<>"{}|^`\\ \t\n\r')


def _batches(items: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(items), _BATCH):
        yield items[start : start + _BATCH]


def _iri(value: str) -> str:
    """An IRI of a data node, written into a query. Every such IRI is minted by
    :class:`IRIs` from content ids; anything that could end the term is refused."""
    if not value or _IRI_UNSAFE & set(value):
        raise StoreError(f"not a node IRI of this store: {value!r}")
    return f"<{value}>"


def _int(node: Any) -> int:
    """An integer a query returned (a typed literal)."""
    return int(node.toPython() if isinstance(node, Literal) else node)


def _is_true(node: Node | None) -> bool:
    return isinstance(node, Literal) and bool(node.toPython())


class RDFReader:
    """The read half of the RDF store, over an rdflib ``Dataset`` ``_ds``."""

    _ds: Dataset
    _graphs: dict[URIRef, Graph]
    iris: IRIs
    read_only: bool

    @property
    def _embedded(self) -> bool:
        """Whether the dataset is this process's own (Oxigraph, memory), not a server's."""
        return getattr(self, "backend", "") != "sparql"

    def _layer_graphs(self) -> str:
        """``?g`` bound to the user and literature graphs (a SPARQL server holds
        other graphs, other workspaces' too)."""
        return ("VALUES ?g { " + " ".join(_iri(str(self.iris.graph(layer)))
                                          for layer in (Layer.USER, Layer.LITERATURE)) + " } ")

    def _graph(self, iri: URIRef) -> Graph:
        if iri not in self._graphs:
            # Dataset.graph() also declares the graph in the store, a write that a
            # read-only store refuses; a Graph over the same store only reads.
            self._graphs[iri] = (Graph(store=self._ds.store, identifier=iri)
                                 if self.read_only else self._ds.graph(iri))
        return self._graphs[iri]

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
            revision_of=sorted(self._id_of(o) for o in props.get(PROV.wasRevisionOf, [])),
        )

    def document_sources(self, layer: Layer) -> dict[str, list[str]]:
        """Each source of the layer's documents and the ids of the documents
        recorded from it (one, unless an edit's ingest was cut short)."""
        graph = self._graph(self.iris.graph(layer))
        docs = set(graph.subjects(RDF.type, MKG.Document))
        out: dict[str, list[str]] = defaultdict(list)
        for node, source in graph.subject_objects(DCTERMS.source):
            if node in docs:
                out[str(source)].append(self._id_of(node))
        return {k: sorted(v) for k, v in out.items()}

    def document_ids(self, layer: Layer | None = None) -> list[str]:
        graph = self.iris.graph(layer) if layer else None
        nodes = self._subjects(RDF.type, MKG.Document, graph)
        return sorted(str(_one(self._props(n), MKG.id)) for n in nodes)

    def chunk_ids(self) -> set[str]:
        """The id of every chunk in the user and literature layers."""
        return {self._id_of(c)
                for c, _p, _o, _g in self._ds.quads((None, RDF.type, MKG.Chunk, None))}

    def entity_ids(self) -> set[str]:
        """The id of every entity in the user and literature layers."""
        return {self._id_of(e)
                for e, _p, _o, _g in self._ds.quads((None, RDF.type, MKG.Entity, None))}

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

    def entities_of_concepts(self, concept_ids: Iterable[str]) -> list[EntityBrief]:
        """Every user or literature entity normalised to one of these concepts."""
        wanted = list(dict.fromkeys(concept_ids))
        nodes: set[str] = set()
        for batch in _batches(wanted):
            rows = self._ds.query(
                "SELECT DISTINCT ?e WHERE { VALUES ?c { "
                + " ".join(sparql_term(Literal(c)) for c in batch)
                + f" }} {self._layer_graphs()} GRAPH ?g {{ ?e {MKG.conceptId.n3()} ?c }} }}")
            nodes.update(str(row[0]) for row in rows)  # type: ignore[index]
        return self._briefs(sorted(nodes))

    def entity_briefs(self, entity_ids: Iterable[str], *, mentions: bool = True
                      ) -> list[EntityBrief]:
        return self._briefs([str(self.iris.node("entity", e)) for e in dict.fromkeys(entity_ids)],
                            mentions=mentions)

    def _briefs(self, nodes: list[str], *, mentions: bool = True) -> list[EntityBrief]:
        """Two queries per batch, evaluated inside the store: the entities' own
        fields, then their mentions' (chunk, text) pairs (a mention node lives in
        its entity's graph); no mention's offsets or qualifiers are read."""
        fields: dict[str, dict[str, Any]] = {}
        chunks: dict[str, set[str]] = defaultdict(set)
        surface: dict[str, set[str]] = defaultdict(set)
        for batch in _batches(nodes):
            values = ("VALUES ?e { " + " ".join(_iri(n) for n in batch) + " } "
                      + self._layer_graphs())
            for e, eid, name, layer, group, cid in self._ds.query(  # type: ignore[misc]
                    "SELECT ?e ?id ?name ?layer ?type ?cid WHERE { " + values
                    + f"GRAPH ?g {{ ?e a {MKG.Entity.n3()} ; {MKG.id.n3()} ?id ; "
                    f"{SKOS.prefLabel.n3()} ?name ; {MKG.layer.n3()} ?layer ; "
                    f"{MKG.semanticGroup.n3()} ?type . "
                    f"OPTIONAL {{ ?e {MKG.conceptId.n3()} ?cid }} }} }}"):
                entry = fields.setdefault(str(e), {"id": str(eid), "layer": Layer(str(layer)),
                                                   "name": str(name), "type": str(group),
                                                   "concept_ids": set()})
                if cid is not None:
                    entry["concept_ids"].add(str(cid))
            if not mentions:
                continue
            for e, chunk, text in self._ds.query(  # type: ignore[misc]
                    "SELECT ?e ?chunk ?text WHERE { " + values
                    + f"GRAPH ?g {{ ?e {MKG.mention.n3()} ?m . "
                    f"?m {MKG.chunk.n3()} ?chunk ; {MKG.text.n3()} ?text }} }}"):
                chunks[str(e)].add(self._id_of(chunk))
                surface[str(e)].add(str(text))
        return [EntityBrief(**{**f, "concept_ids": sorted(f["concept_ids"])},
                            chunk_ids=sorted(chunks[n]), surface=sorted(surface[n]))
                for n, f in sorted(fields.items(), key=lambda kv: kv[1]["id"])]

    def entities(self, layer: Layer) -> list[Entity]:
        return self._read_all(self.iris.graph(layer), MKG.Entity, self._entity_from)

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
            revision_of=self._id_of(r) if (r := _opt(props, PROV.wasRevisionOf)) else None,
        )

    def triple(self, triple_id: str) -> Triple:
        props = self._props(self.iris.node("statement", triple_id))
        if MKG.Assertion not in props.get(RDF.type, []):
            raise NotFoundError("statement", triple_id)
        return self._triple_from(props)

    def revisions_of(self, triple_id: str) -> list[str]:
        return [self._id_of(n) for n in self._subjects(
            PROV.wasRevisionOf, self.iris.node("statement", triple_id))]

    def triples(
        self, layer: Layer | None = None, entity_ids: Iterable[str] | None = None
    ) -> list[Triple]:
        graph = self.iris.graph(layer) if layer else None
        if entity_ids is None:
            layers = [layer] if layer else [Layer.USER, Layer.LITERATURE]
            out = [t for lay in layers for t in self._statements(self.iris.graph(lay))]
            return sorted(out, key=lambda t: t.id)
        else:
            nodes = set()
            for eid in entity_ids:
                ent = self.iris.node("entity", eid)
                nodes.update(self._subjects(RDF.subject, ent, graph))
                nodes.update(self._subjects(RDF.object, ent, graph))
        return sorted((self._triple_from(self._props(n)) for n in nodes), key=lambda t: t.id)

    def decisions(self, target: str | None = None) -> list[Decision]:
        graph = self.iris.graph("review")
        if target is None:
            found = self._read_all(graph, MKG.ReviewDecision, self._decision_from)
        else:
            found = [self._decision_from(self._props(n))
                     for n in self._subjects(MKG.targetId, Literal(target), graph)]
        return sorted(found, key=lambda d: (d.at, d.id))

    def _decision_from(self, props: Props, lookup: Lookup | None = None) -> Decision:
        kind = ReviewTarget(_one(props, MKG.targetKind))
        before, after = _opt(props, MKG.before), _opt(props, MKG.after)
        snapshot, edit = review_payload_types(kind)
        undoes = _opt(props, MKG.undoes)
        at = _one(props, PROV.startedAtTime)
        return Decision(
            id=_one(props, MKG.id), target_kind=kind, target=_one(props, MKG.targetId),
            action=ReviewAction(_one(props, MKG.action)), reviewer=_one(props, MKG.reviewer),
            at=at if isinstance(at, datetime) else datetime.fromisoformat(str(at)),
            reason=_one(props, RDFS.comment, ""),
            before=snapshot.model_validate_json(str(before)) if before is not None else None,
            after=edit.model_validate_json(str(after)) if after is not None else None,
            undoes=self._id_of(undoes) if undoes is not None else None)

    def _statements(self, graph: URIRef, nodes: list[str] | None = None) -> list[Triple]:
        """The statements of one graph (all, or those ``nodes`` name) with their
        evidence, by two queries inside the store: a pass over the whole graph
        (every mention of every entity) took most of a minute at 1.6 M quads for a
        few hundred statements."""
        found: dict[URIRef, Props] = defaultdict(lambda: defaultdict(list))
        values = "" if nodes is None else "VALUES ?s { " + " ".join(map(_iri, nodes)) + " } "
        head = f"{values}GRAPH {_iri(str(graph))} {{ ?s a {MKG.Assertion.n3()} . "
        for query in (f"SELECT ?s ?p ?o WHERE {{ {head} ?s ?p ?o }} }}",
                      f"SELECT ?e ?p ?o WHERE {{ {head} ?s {PROV.wasDerivedFrom.n3()} ?e . "
                      "?e ?p ?o } }"):
            for node, pred, obj in self._ds.query(query):  # type: ignore[misc]
                found[URIRef(str(node))][URIRef(str(pred))].append(obj)
        lookup: Lookup = lambda node: found.get(node) or self._props(node)  # noqa: E731
        return [self._triple_from(props, lookup) for node, props in found.items()
                if MKG.Assertion in props.get(RDF.type, [])]

    def _stream(self, graph: URIRef, rdf_type: URIRef) -> Iterator[list[str]]:
        """The nodes of one type in one graph, a batch at a time, as the store
        yields them: no list of every node is held."""
        batch: list[str] = []
        for s, _p, _o, _g in self._ds.quads((None, RDF.type, rdf_type, self._graph(graph))):
            batch.append(str(s))
            if len(batch) == _BATCH:
                yield batch
                batch = []
        if batch:
            yield batch

    def iter_triples(self, layer: Layer) -> Iterator[Triple]:
        """Statements with their evidence, a batch at a time: each batch's nodes,
        then their evidence nodes, read by subject in the layer's graph."""
        graph = self.iris.graph(layer)
        for batch in self._stream(graph, MKG.Assertion):
            found = self._nodes_of(graph, batch)
            evidence = sorted({str(e) for props in found.values()
                               for e in props.get(PROV.wasDerivedFrom, [])})
            for start in range(0, len(evidence), _BATCH):
                found.update(self._nodes_of(graph, evidence[start:start + _BATCH]))
            lookup: Lookup = lambda node, f=found: f.get(node) or self._props(node)  # type: ignore[misc]  # noqa: E731
            yield from sorted((self._triple_from(found[URIRef(n)], lookup) for n in batch
                               if URIRef(n) in found), key=lambda t: t.id)

    def iter_entities(self, layer: Layer) -> Iterator[EntityBrief]:
        """Briefs without mentions, from each batch's own properties in its layer's
        graph (a query over every graph took seconds a batch at 100k entities)."""
        graph = self.iris.graph(layer)
        for batch in self._stream(graph, MKG.Entity):
            found = self._nodes_of(graph, batch)
            yield from sorted((EntityBrief(
                id=_one(props, MKG.id), layer=Layer(_one(props, MKG.layer)),
                name=_one(props, SKOS.prefLabel), type=_one(props, MKG.semanticGroup),
                concept_ids=sorted(_strs(props, MKG.conceptId)))
                for props in found.values()), key=lambda b: b.id)

    def _nodes_of(self, graph: URIRef, nodes: list[str]) -> dict[URIRef, Props]:
        found: dict[URIRef, Props] = defaultdict(lambda: defaultdict(list))
        for node, pred, obj in self._ds.query(  # type: ignore[misc]
                "SELECT ?s ?p ?o WHERE { VALUES ?s { " + " ".join(map(_iri, nodes))
                + f" }} GRAPH {_iri(str(graph))} {{ ?s ?p ?o }} }}"):
            found[URIRef(str(node))][URIRef(str(pred))].append(obj)
        return found

    def iter_concepts(self) -> Iterator[Concept]:
        graph = self.iris.graph(Layer.VOCABULARY)
        for batch in self._stream(graph, SKOS.Concept):
            found = self._nodes_of(graph, batch)
            lookup: Lookup = lambda node, f=found: f.get(node) or self._props(node)  # type: ignore[misc]  # noqa: E731
            yield from [self._concept_from(props, lookup) for props in found.values()]

    def iter_links(self, kind: LinkKind | None = None) -> Iterator[Link]:
        graph = self.iris.graph("links")
        for batch in self._stream(graph, MKG.Link):
            for p in self._nodes_of(graph, batch).values():
                link = self._link_from(p)
                if kind is None or link.kind is kind:
                    yield link

    def _link_from(self, p: Props) -> Link:
        return Link(kind=LinkKind(_one(p, MKG.linkKind)), source=_one(p, MKG.sourceId),
                    target=_one(p, MKG.targetId), score=float(_one(p, MKG.score)),
                    method=_one(p, MKG.method))

    def _link_node(self, kind: LinkKind, identifier: str, *, target: bool) -> URIRef:
        if target and kind is LinkKind.DEFINITION_OF:
            return self.iris.concept(identifier)
        return self.iris.node("entity", identifier)

    def links(self, *, source: str | None = None, target: str | None = None,
              kind: LinkKind | None = None) -> list[Link]:
        graph = self.iris.graph("links")
        if source is not None:
            nodes = self._subjects(MKG.sourceId, Literal(source), graph)
            if target is not None:
                nodes = [n for n in nodes if (n, MKG.targetId, Literal(target))
                         in self._graph(graph)]
        elif target is not None:
            nodes = self._subjects(MKG.targetId, Literal(target), graph)
        elif kind is not None:  # only the nodes of that kind are read
            nodes = self._subjects(MKG.linkKind, Literal(kind.value), graph)
        else:
            nodes = self._subjects(RDF.type, MKG.Link, graph)
        out = []
        for n in nodes:
            link = self._link_from(self._props(n))
            if kind is None or link.kind is kind:
                out.append(link)
        return sorted(out, key=lambda x: (x.kind.value, x.source, -x.score, x.target))

    def counts(self) -> StoreCounts:
        """Two aggregate queries, answered inside the store: no quad is read
        into Python (a full scan took seconds at half a million quads)."""
        types = (MKG.Document, MKG.Chunk, MKG.Entity, MKG.Assertion, SKOS.Concept, MKG.Link,
                 MKG.ReviewDecision)
        found: dict[tuple[str, str], int] = {}
        graphs = "VALUES ?g { " + " ".join(_iri(str(g)) for g in self.iris.graphs()) + " } "
        rows = self._ds.query(
            "SELECT ?g ?t (COUNT(DISTINCT ?s) AS ?n) WHERE { " + graphs +
            "VALUES ?t { " + " ".join(t.n3() for t in types) + " } "
            "GRAPH ?g { ?s a ?t } } GROUP BY ?g ?t")
        for g, t, n in rows:  # type: ignore[misc]
            found[(str(g), str(t))] = _int(n)

        def count(rdf_type: URIRef, layer: Layer | str) -> int:
            return found.get((str(self.iris.graph(layer)), str(rdf_type)), 0)

        per_layer = {layer: LayerCounts(documents=count(MKG.Document, layer),
                                        chunks=count(MKG.Chunk, layer),
                                        entities=count(MKG.Entity, layer),
                                        triples=count(MKG.Assertion, layer))
                     for layer in (Layer.USER, Layer.LITERATURE)}
        # Only this store's graphs: a SPARQL server holds other data (and its
        # default graph is the union of every graph).
        results = [self._ds.query("SELECT (COUNT(*) AS ?n) WHERE { " + graphs
                                  + "GRAPH ?g { ?s ?p ?o } }")]
        if self._embedded:
            results.append(self._ds.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"))
        quads = sum(_int(row[0]) for result in results  # type: ignore[index,misc]
                    for row in result)
        return StoreCounts(quads=quads,
                           user=per_layer[Layer.USER], literature=per_layer[Layer.LITERATURE],
                           concepts=count(SKOS.Concept, Layer.VOCABULARY),
                           links=count(MKG.Link, "links"),
                           decisions=count(MKG.ReviewDecision, "review"))

    def quads(self) -> Iterator[tuple[Node, Node, Node, URIRef]]:
        """Every quad of every graph: (subject, predicate, object, graph IRI), as the
        store yields them (Oxigraph: graph by graph, a subject's quads together)."""
        inner = getattr(self._ds.store, "_inner", None)
        if inner is None:
            for s, p, o, g in self._ds.quads((None, None, None, None)):
                yield s, p, o, URIRef(str(getattr(g, "identifier", g)))
            return
        # Oxigraph's own iterator: rdflib's dataset makes a Graph object for every
        # quad it passes on, which took most of an export's time at 4 M quads.
        import pyoxigraph as ox
        from oxrdflib._converter import from_ox

        default = URIRef(str(DATASET_DEFAULT_GRAPH_ID))
        for q in inner.quads_for_pattern(None, None, None, None):
            name = q.graph_name
            terms = cast(tuple[Node, Node, Node],
                         (from_ox(q.subject), from_ox(q.predicate), from_ox(q.object)))
            yield (*terms, URIRef(name.value) if isinstance(name, ox.NamedNode) else default)
