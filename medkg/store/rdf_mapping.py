"""Model objects to RDF quads (pure functions, no store access).

- documents and chunks: ``mkg:Document`` / ``mkg:Chunk`` with PROV-O derivation;
- concepts: ``skos:Concept`` with SKOS labels and definition;
- entities: ``mkg:Entity`` with ``skos:prefLabel`` and ``mkg:Mention`` nodes;
- triples: the plain fact (Biolink predicate, only when ``Qualifiers.is_factual``)
  plus an
  ``rdf:Statement`` node carrying evidence, qualifiers, confidence, review state.
"""

from __future__ import annotations

from urllib.parse import quote

from rdflib import RDF, RDFS, Literal, URIRef
from rdflib.namespace import DCTERMS, OWL, PROV, SKOS, XSD

from medkg.model import (
    Chunk,
    Concept,
    Decision,
    Document,
    Entity,
    Evidence,
    Link,
    Mention,
    Qualifiers,
    ReviewTarget,
    Triple,
)
from medkg.store.vocab import LINK_PREDICATES, MKG, IRIs, predicate_iri

Quad = tuple[URIRef, URIRef, Literal | URIRef, URIRef]


def _lit(value: str | int | float | bool) -> Literal:
    if isinstance(value, bool):
        return Literal(value, datatype=XSD.boolean)
    if isinstance(value, float):
        return Literal(value, datatype=XSD.double)
    return Literal(value)


def document_quads(iris: IRIs, doc: Document, chunks: list[Chunk]) -> list[Quad]:
    g = iris.graph(doc.layer)
    d = iris.node("doc", doc.id)
    quads: list[Quad] = [
        (d, RDF.type, MKG.Document, g),
        (d, RDF.type, PROV.Entity, g),
        (d, MKG.id, _lit(doc.id), g),
        (d, MKG.layer, _lit(doc.layer.value), g),
        (d, DCTERMS.title, _lit(doc.title), g),
        (d, DCTERMS.source, _lit(doc.source), g),
        (d, DCTERMS["format"], _lit(doc.media_type), g),
        (d, MKG.text, _lit(doc.text), g),
    ]
    quads += [(d, PROV.wasRevisionOf, iris.node("doc", earlier), g)
              for earlier in doc.revision_of]
    for chunk in chunks:
        c = iris.node("chunk", chunk.id)
        quads += [
            (c, RDF.type, MKG.Chunk, g),
            (c, MKG.id, _lit(chunk.id), g),
            (c, MKG.document, d, g),
            (c, PROV.wasDerivedFrom, d, g),
            (c, MKG["index"], _lit(chunk.index), g),
            (c, MKG.start, _lit(chunk.start), g),
            (c, MKG.end, _lit(chunk.end), g),
            (c, MKG.text, _lit(chunk.text), g),
        ]
    return quads


def concept_quads(iris: IRIs, concept: Concept) -> list[Quad]:
    g = iris.graph("vocabulary")
    c = iris.concept(concept.id)
    quads: list[Quad] = [
        (c, RDF.type, SKOS.Concept, g),
        (c, MKG.curie, _lit(concept.id), g),
        (c, SKOS.prefLabel, _lit(concept.name), g),
        (c, DCTERMS.source, _lit(concept.source), g),
    ]
    quads += [(c, SKOS.altLabel, _lit(s), g) for s in concept.synonyms]
    quads += [(c, SKOS.broader, iris.concept(p), g) for p in concept.parents]
    quads += [(c, MKG.xref, _lit(x), g) for x in concept.xrefs]
    if concept.definition:
        quads.append((c, SKOS.definition, _lit(concept.definition), g))
    if concept.semantic_type:
        quads.append((c, MKG.semanticType, _lit(concept.semantic_type), g))
    if concept.semantic_group:
        quads.append((c, MKG.semanticGroup, _lit(concept.semantic_group), g))
    if concept.obsolete:
        quads.append((c, OWL.deprecated, _lit(True), g))
    if concept.replaced_by:
        quads.append((c, DCTERMS.isReplacedBy, iris.concept(concept.replaced_by), g))
    return quads


def entity_header_quads(iris: IRIs, entity: Entity) -> list[Quad]:
    """The entity's own properties, written once when it is first seen."""
    g = iris.graph(entity.layer)
    e = iris.node("entity", entity.id)
    quads: list[Quad] = [
        (e, RDF.type, MKG.Entity, g),
        (e, MKG.id, _lit(entity.id), g),
        (e, MKG.layer, _lit(entity.layer.value), g),
        (e, SKOS.prefLabel, _lit(entity.name), g),
        (e, MKG.semanticGroup, _lit(entity.type), g),
        (e, MKG.context, _lit(entity.context), g),
    ]
    quads += [(e, MKG.conceptId, _lit(cid), g) for cid in entity.concept_ids]
    return quads


def _qualifier_quads(node: URIRef, q: Qualifiers, g: URIRef, *, defaults: bool = True
                     ) -> list[Quad]:
    """The qualifiers of a statement (all of them, so that SPARQL rules can match
    ``mkg:negated false``) or of a mention (``defaults=False``: only those that
    differ from the defaults, which readers assume when one is absent; mentions
    are most of a layer's nodes, and five default flags were 40% of its quads)."""
    default = Qualifiers()
    quads: list[Quad] = [
        (node, predicate, _lit(value), g)
        for predicate, value, plain in (
            (MKG.negated, q.negated, default.negated),
            (MKG.uncertain, q.uncertain, default.uncertain),
            (MKG.hypothetical, q.hypothetical, default.hypothetical),
            (MKG.historical, q.historical, default.historical),
            (MKG.experiencer, q.experiencer, default.experiencer))
        if defaults or value != plain]
    if q.population:
        quads.append((node, MKG.population, _lit(q.population), g))
    return quads


def mention_quads(iris: IRIs, entity: Entity, mention: Mention) -> list[Quad]:
    g = iris.graph(entity.layer)
    m = iris.node("mention", mention.id_in(entity.id))
    return [
        (iris.node("entity", entity.id), MKG.mention, m, g),
        (m, RDF.type, MKG.Mention, g),
        *_span_quads(iris, m, mention, MKG.text, mention.text, g),
        *_qualifier_quads(m, mention.qualifiers, g, defaults=False),
    ]


def _span_quads(
    iris: IRIs, node: URIRef, span: Mention | Evidence, text_predicate: URIRef, text: str,
    g: URIRef,
) -> list[Quad]:
    """Where a mention or a piece of evidence sits: chunk, document, offsets, text."""
    return [
        (node, MKG.chunk, iris.node("chunk", span.chunk_id), g),
        (node, MKG.document, iris.node("doc", span.document_id), g),
        (node, MKG.start, _lit(span.start), g),
        (node, MKG.end, _lit(span.end), g),
        (node, text_predicate, _lit(text), g),
    ]


def triple_header_quads(iris: IRIs, triple: Triple) -> list[Quad]:
    g = iris.graph(triple.layer)
    s = iris.node("statement", triple.id)
    h, t = iris.node("entity", triple.head), iris.node("entity", triple.tail)
    p = predicate_iri(triple.predicate)
    quads: list[Quad] = [
        (s, RDF.type, RDF.Statement, g),
        (s, RDF.type, MKG.Assertion, g),
        (s, MKG.id, _lit(triple.id), g),
        (s, MKG.layer, _lit(triple.layer.value), g),
        (s, RDF.subject, h, g),
        (s, RDF.predicate, p, g),
        (s, RDF.object, t, g),
        (s, MKG.predicate, _lit(triple.predicate.value), g),
        (s, MKG.level, _lit(triple.level), g),
        (s, MKG.reviewState, _lit(triple.review.value), g),
        (s, MKG.method, _lit(triple.method), g),
        *_qualifier_quads(s, triple.qualifiers, g),
    ]
    if triple.revision_of:
        quads.append((s, PROV.wasRevisionOf, iris.node("statement", triple.revision_of), g))
    if triple.qualifiers.is_factual:  # the one fact rule (model.Qualifiers)
        quads.append((h, p, t, g))
    return quads


def evidence_quads(iris: IRIs, triple: Triple, ev: Evidence) -> list[Quad]:
    g = iris.graph(triple.layer)
    e = iris.node("evidence", ev.id)
    return [
        (iris.node("statement", triple.id), PROV.wasDerivedFrom, e, g),
        (e, RDF.type, MKG.Evidence, g),
        *_span_quads(iris, e, ev, MKG.quote, ev.quote, g),
    ]


def link_quads(iris: IRIs, link: Link, source: URIRef, target: URIRef) -> list[Quad]:
    g = iris.graph("links")
    n = iris.node("link", link.id)
    return [
        (source, LINK_PREDICATES[link.kind], target, g),
        (n, RDF.type, MKG.Link, g),
        (n, MKG.linkKind, _lit(link.kind.value), g),
        (n, MKG.source, source, g),
        (n, MKG.target, target, g),
        (n, MKG.sourceId, _lit(link.source), g),
        (n, MKG.targetId, _lit(link.target), g),
        (n, MKG.score, _lit(float(link.score)), g),
        (n, MKG.method, _lit(link.method), g),
    ]


def decision_quads(iris: IRIs, decision: Decision) -> list[Quad]:
    """A curator's decision as a PROV-O activity in the ``review`` graph: who
    (``prov:wasAssociatedWith`` a ``prov:Agent``), when, what it used (the
    statement, entity or merged entity), the action, the reason, the target as it
    was and the curator's version (JSON), and the decision an undo takes back."""
    g = iris.graph("review")
    d = iris.node("review", decision.id)
    agent = iris.node("reviewer", quote(decision.reviewer, safe=""))
    kind = {ReviewTarget.STATEMENT: "statement", ReviewTarget.ENTITY: "entity",
            ReviewTarget.MERGE: "entity"}[decision.target_kind]
    quads: list[Quad] = [
        (d, RDF.type, PROV.Activity, g),
        (d, RDF.type, MKG.ReviewDecision, g),
        (d, MKG.id, _lit(decision.id), g),
        (d, MKG.action, _lit(decision.action.value), g),
        (d, MKG.targetKind, _lit(decision.target_kind.value), g),
        (d, MKG.targetId, _lit(decision.target), g),
        (d, PROV.used, iris.node(kind, decision.target), g),
        (d, PROV.wasAssociatedWith, agent, g),
        (agent, RDF.type, PROV.Agent, g),
        (agent, RDFS.label, _lit(decision.reviewer), g),
        (d, MKG.reviewer, _lit(decision.reviewer), g),
        (d, PROV.startedAtTime, Literal(decision.at, datatype=XSD.dateTime), g),
        (d, PROV.endedAtTime, Literal(decision.at, datatype=XSD.dateTime), g),
    ]
    if decision.reason:
        quads.append((d, RDFS.comment, _lit(decision.reason), g))
    if decision.before is not None:
        quads.append((d, MKG.before, Literal(decision.before.model_dump_json(),
                                             datatype=RDF.JSON), g))
    if decision.after is not None:
        quads.append((d, MKG.after, Literal(decision.after.model_dump_json(),
                                            datatype=RDF.JSON), g))
    if decision.undoes:
        quads.append((d, MKG.undoes, iris.node("review", decision.undoes), g))
    return quads
