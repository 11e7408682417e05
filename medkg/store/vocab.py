"""RDF vocabulary of the medkg graph: namespaces, IRIs of graphs and nodes.

Concepts get the Bioregistry's IRI for their CURIE (:mod:`medkg.identifiers`:
OBO PURLs for HP/DOID/MONDO, ``https://www.ncbi.nlm.nih.gov/gene/`` for
NCBIGene, ...); a CURIE whose prefix no registry knows, and every data node,
lives under the workspace's base IRI.
"""

from __future__ import annotations

from urllib.parse import quote

from rdflib import OWL, Namespace, URIRef

from medkg import identifiers
from medkg.model import Layer, LinkKind, Predicate

MKG = Namespace("https://w3id.org/medkg/vocab#")
BIOLINK = Namespace("https://w3id.org/biolink/vocab/")

_ID_SAFE = "-._~:@!$&'()*+,;=/"  # RFC 3987 characters kept as they are in a local id

LINK_PREDICATES: dict[LinkKind, URIRef] = {
    LinkKind.REFERENCE_OF: MKG.referenceOf,
    LinkKind.DEFINITION_OF: MKG.definitionOf,
    LinkKind.SAME_AS: OWL.sameAs,
    LinkKind.DIFFERENT_FROM: OWL.differentFrom,
}


def predicate_iri(predicate: Predicate) -> URIRef:
    return BIOLINK[predicate.biolink]


class IRIs:
    """Mints the IRIs of one workspace."""

    def __init__(self, base: str) -> None:
        self.base = base if base.endswith(("/", "#")) else base + "/"

    def graph(self, name: Layer | str) -> URIRef:
        value = name.value if isinstance(name, Layer) else name
        return URIRef(f"{self.base}graph/{value}")

    def graphs(self) -> list[URIRef]:
        """Every named graph a store of this workspace writes."""
        return [self.graph(name) for name in (*Layer, "links", "review")]

    def node(self, kind: str, identifier: str) -> URIRef:
        return URIRef(f"{self.base}{kind}/{identifier}")

    def concept(self, curie: str) -> URIRef:
        """A concept's IRI from its CURIE: the Bioregistry's for a prefix it knows,
        else ``<base>concept/PREFIX_local`` (a user's own vocabulary, ``MEDKG:``).
        Characters an IRI may not hold (a space, ``<>"{}|^`` and the like, from an
        odd vocabulary file) are percent-encoded; ordinary ids come out unchanged."""
        prefix, sep, local = curie.partition(":")
        local = quote(local, safe=_ID_SAFE)
        if not sep:
            return self.node("concept", quote(curie, safe=_ID_SAFE))
        if prefix != "MEDKG" and (iri := identifiers.expand(f"{prefix}:{local}")):
            return URIRef(iri)
        return self.node("concept", f"{quote(prefix, safe='')}_{local}")
