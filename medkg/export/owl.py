"""The whole graph as one OWL 2 ontology (RDF/XML), written as it is read.

- concepts are classes (``rdfs:label``, ``skos:definition``, ``rdfs:subClassOf``
  their parents and their Biolink category, ``owl:deprecated``);
- entities are named individuals of their concepts' classes (or of their
  Biolink category when they have no concept), labelled, with their layer;
- each kept statement that is a plain fact is an object property assertion
  (the Biolink predicate as an ``owl:ObjectProperty``) annotated, as an
  ``owl:Axiom``, with its confidence, evidence quotes, layer, review state and
  the statement's IRI; a negated one (when asked for) is an
  ``owl:NegativePropertyAssertion``; a hedged, hypothetical or family-history
  one is no axiom at all (its statement is not a fact about the patient) and is
  counted as left out;
- ``same_as`` merges are ``owl:sameAs``, a curator's split ``owl:differentFrom``;
  ``reference_of`` (user -> literature entity) is an annotation.

HermiT (``medkg.export.vocabulary.check_owl``) checks it: consistent unless
the graph itself holds a contradiction, such as a statement and its negation
both asked for.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from rdflib import BNode, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, SKOS, XSD
from rdflib.term import Node

from medkg.export.biolink import NAMED_THING, is_factual
from medkg.export.files import atomic_file
from medkg.export.view import ExportReport, GraphView
from medkg.model import LinkKind, Predicate
from medkg.store.vocab import BIOLINK, MKG, predicate_iri
from medkg.text import clean_text

Triple3 = tuple[Node, Node, Node]
_ANNOTATIONS = (SKOS.definition, MKG.confidence, MKG.quote, MKG.layer, MKG.reviewState,
                MKG.statement, MKG.referenceOf, MKG.semanticGroup, MKG.method)


def _biolink_class(curie: str) -> URIRef:
    return BIOLINK[curie.removeprefix("biolink:")]


def owl_triples(view: GraphView, report: ExportReport) -> Iterator[Triple3]:
    iris = view.iris
    onto = URIRef(f"{iris.base}ontology")
    yield onto, RDF.type, OWL.Ontology
    yield onto, RDFS.comment, Literal("medkg knowledge graph: concepts as classes, entities "
                                      "as individuals, statements as annotated axioms")
    for prop in _ANNOTATIONS:
        yield prop, RDF.type, OWL.AnnotationProperty
    for pred in Predicate:
        yield predicate_iri(pred), RDF.type, OWL.ObjectProperty
        yield predicate_iri(pred), RDFS.label, Literal(pred.biolink.replace("_", " "))
    categories: set[str] = {NAMED_THING}
    info = view.concept_info()
    classes: set[str] = set()
    named: set[str] = set()
    individuals: set[str] = set()
    for e in view.entities():
        node = iris.node("entity", e.id)
        individuals.add(e.id)
        yield node, RDF.type, OWL.NamedIndividual
        yield node, RDFS.label, Literal(e.name)
        yield node, MKG.layer, Literal(e.layer.value)
        yield node, MKG.semanticGroup, Literal(e.type)
        known = [c for c in e.concept_ids if c in info]
        named.update(known)
        for cid in known:
            yield node, RDF.type, iris.concept(cid)
        if not known:
            category = view.entity_category(e)
            categories.add(category)
            yield node, RDF.type, _biolink_class(category)
        report.nodes += 1
    for c in view.store.iter_concepts():
        if not (view.with_vocabulary or c.id in named):
            continue
        cls = iris.concept(c.id)
        classes.add(c.id)
        category = view.concept_category(c)
        categories.add(category)
        yield cls, RDF.type, OWL.Class
        yield cls, RDFS.label, Literal(c.name, lang="en")
        if c.definition:
            yield cls, SKOS.definition, Literal(c.definition, lang="en")
        yield cls, RDFS.subClassOf, _biolink_class(category)
        for parent in c.parents:
            if parent in info:
                yield cls, RDFS.subClassOf, iris.concept(parent)
        if c.obsolete:
            yield cls, OWL.deprecated, Literal(True)
        report.nodes += 1
    for category in sorted(categories):
        yield _biolink_class(category), RDF.type, OWL.Class
        yield _biolink_class(category), RDFS.label, Literal(category.removeprefix("biolink:"))
    for t in view.triples(report):
        if t.head not in individuals or t.tail not in individuals:
            report.leave_out("statement about an entity left out")
            continue
        h, p, o = iris.node("entity", t.head), predicate_iri(t.predicate), iris.node(
            "entity", t.tail)
        if t.qualifiers.negated:
            axiom: Node = BNode()
            yield axiom, RDF.type, OWL.NegativePropertyAssertion
            yield axiom, OWL.sourceIndividual, h
            yield axiom, OWL.assertionProperty, p
            yield axiom, OWL.targetIndividual, o
        elif is_factual(t.qualifiers):
            yield h, p, o
            axiom = BNode()
            yield axiom, RDF.type, OWL.Axiom
            yield axiom, OWL.annotatedSource, h
            yield axiom, OWL.annotatedProperty, p
            yield axiom, OWL.annotatedTarget, o
        else:
            report.leave_out("hedged, hypothetical or family history: not an axiom")
            continue
        yield axiom, MKG.statement, Literal(str(iris.node("statement", t.id)),
                                            datatype=XSD.anyURI)
        yield axiom, MKG.confidence, Literal(t.confidence)
        yield axiom, MKG.layer, Literal(t.layer.value)
        yield axiom, MKG.reviewState, Literal(t.review.value)
        yield axiom, MKG.method, Literal(t.method)
        for ev in t.evidence:
            yield axiom, MKG.quote, Literal(ev.quote)
        report.edges += 1
    for link in view.links():
        if link.source not in individuals or link.target not in individuals:
            continue
        a, b = iris.node("entity", link.source), iris.node("entity", link.target)
        relation = {LinkKind.SAME_AS: OWL.sameAs, LinkKind.DIFFERENT_FROM: OWL.differentFrom,
                    LinkKind.REFERENCE_OF: MKG.referenceOf}.get(link.kind)
        if relation is not None:
            yield a, relation, b
            report.edges += 1


def _xml_safe(term: Node) -> Node:
    """RDF/XML's rule: a literal holds only what XML 1.0 can carry (a graph
    written before text was normalised at ingest may hold PDF controls)."""
    if isinstance(term, Literal) and isinstance(term.value, str):
        cleaned = clean_text(str(term))
        if cleaned != str(term):
            return Literal(cleaned, lang=term.language, datatype=term.datatype)
    return term


def write_owl_graph(view: GraphView, path: Path, *, overwrite: bool = False) -> ExportReport:
    import pyoxigraph as ox
    from oxrdflib._converter import to_ox

    report = ExportReport(str(path), "owl")
    with atomic_file(path, overwrite=overwrite) as tmp, tmp.open("wb") as out:
        ox.serialize((ox.Triple(to_ox(s), to_ox(p), to_ox(_xml_safe(o)))  # type: ignore[arg-type]
                      for s, p, o in owl_triples(view, report)), out, ox.RdfFormat.RDF_XML,
                     prefixes={"owl": str(OWL), "rdfs": str(RDFS), "skos": str(SKOS),
                               "mkg": str(MKG), "biolink": str(BIOLINK)})
    return report
