"""The vocabulary layer as SKOS (Turtle) and as OWL (RDF/XML, via owlready2).

OWL: one class per concept with ``rdfs:label``, the definition as
IAO:0000115, synonyms as oboInOwl:hasExactSynonym, cross-references as
oboInOwl:hasDbXref and ``rdfs:subClassOf`` axioms from the parents. The
result can be checked with owlready2's HermiT reasoner (needs Java), which
reports an inconsistent ontology or unsatisfiable classes.
"""

from __future__ import annotations

import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import DCTERMS, OWL, RDF, SKOS

from medkg.errors import MedKGError
from medkg.model import Concept
from medkg.store.vocab import MKG, IRIs

OBO_IN_OWL = "http://www.geneontology.org/formats/oboInOwl#"
IAO_DEFINITION = "http://purl.obolibrary.org/obo/IAO_0000115"


def to_skos(concepts: Sequence[Concept], iris: IRIs, scheme: str) -> Graph:
    g = Graph()
    g.bind("skos", SKOS)
    g.bind("mkg", MKG)
    scheme_iri = URIRef(scheme)
    g.add((scheme_iri, RDF.type, SKOS.ConceptScheme))
    known = {c.id for c in concepts}
    for c in concepts:
        node = iris.concept(c.id)
        g.add((node, RDF.type, SKOS.Concept))
        g.add((node, SKOS.inScheme, scheme_iri))
        g.add((node, SKOS.notation, Literal(c.id)))
        g.add((node, SKOS.prefLabel, Literal(c.name, lang="en")))
        for s in c.synonyms:
            g.add((node, SKOS.altLabel, Literal(s, lang="en")))
        if c.definition:
            g.add((node, SKOS.definition, Literal(c.definition, lang="en")))
        for p in c.parents:
            g.add((node, SKOS.broader, iris.concept(p)))
        for x in c.xrefs:
            predicate = SKOS.exactMatch if ":" in x else SKOS.closeMatch
            g.add((node, predicate if x not in known else SKOS.exactMatch, iris.concept(x)))
        if c.semantic_group:
            g.add((node, MKG.semanticGroup, Literal(c.semantic_group)))
        g.add((node, DCTERMS.source, Literal(c.source)))
        if c.obsolete:
            g.add((node, OWL.deprecated, Literal(True)))
    return g


def write_owl(concepts: Sequence[Concept], iris: IRIs, ontology_iri: str, path: Path) -> None:
    """Write the concepts as an OWL ontology (RDF/XML)."""
    import owlready2 as ow

    world = ow.World()
    onto = world.get_ontology(ontology_iri)
    with onto:
        with onto.get_namespace("http://purl.obolibrary.org/obo/"):
            types.new_class("IAO_0000115", (ow.AnnotationProperty,))
        with onto.get_namespace(OBO_IN_OWL):
            types.new_class("hasExactSynonym", (ow.AnnotationProperty,))
            types.new_class("hasDbXref", (ow.AnnotationProperty,))
        classes: dict[str, Any] = {}
        for c in concepts:
            base, local = _split(str(iris.concept(c.id)))
            with onto.get_namespace(base):
                classes[c.id] = types.new_class(local, (ow.Thing,))
        for c in concepts:
            cls = classes[c.id]
            cls.label = [ow.locstr(c.name, lang="en")]
            if c.definition:
                cls.IAO_0000115 = [c.definition]
            cls.hasExactSynonym = list(c.synonyms)
            cls.hasDbXref = list(c.xrefs)
            parents = [classes[p] for p in c.parents if p in classes]
            if parents:
                cls.is_a = parents
            if c.obsolete:
                cls.deprecated = [True]
    onto.save(file=str(path), format="rdfxml")


def check_owl(path: Path) -> None:
    """Run HermiT over an OWL file; raise MedKGError if it is inconsistent."""
    import owlready2 as ow

    world = ow.World()
    onto = world.get_ontology(path.resolve().as_uri()).load()
    try:
        with onto:
            ow.sync_reasoner_hermit(world, infer_property_values=False, debug=0)
    except ow.OwlReadyInconsistentOntologyError as exc:
        raise MedKGError(f"{path}: HermiT finds the ontology inconsistent") from exc
    unsatisfiable = list(world.inconsistent_classes())
    if unsatisfiable:
        names = ", ".join(str(c) for c in unsatisfiable[:10])
        raise MedKGError(f"{path}: {len(unsatisfiable)} unsatisfiable classes: {names}")


def _split(iri: str) -> tuple[str, str]:
    cut = max(iri.rfind("/"), iri.rfind("#")) + 1
    return iri[:cut], iri[cut:]
