"""RDF vocabulary of the medkg graph: namespaces, IRIs of graphs and nodes.

Concepts keep their source IRIs (OBO PURLs for DOID/HP/..., MeSH and UMLS
IRIs); data nodes live under the workspace's base IRI.
"""

from __future__ import annotations

from urllib.parse import quote

from rdflib import OWL, Namespace, URIRef

from medkg.model import Layer, LinkKind, Predicate

MKG = Namespace("https://w3id.org/medkg/vocab#")
BIOLINK = Namespace("https://w3id.org/biolink/vocab/")

_PREFIX_IRIS: dict[str, str] = {
    "MESH": "http://id.nlm.nih.gov/mesh/",
    "UMLS": "https://uts.nlm.nih.gov/uts/umls/concept/",
}
OBO = "http://purl.obolibrary.org/obo/"
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

    def node(self, kind: str, identifier: str) -> URIRef:
        return URIRef(f"{self.base}{kind}/{identifier}")

    def concept(self, curie: str) -> URIRef:
        """A concept's IRI from its CURIE: known prefixes, else the OBO PURL pattern.
        Characters an IRI may not hold (a space, ``<>"{}|^`` and the like, from an
        odd vocabulary file) are percent-encoded; ordinary ids come out unchanged."""
        prefix, sep, local = curie.partition(":")
        local = quote(local, safe=_ID_SAFE)
        if not sep:
            return self.node("concept", quote(curie, safe=_ID_SAFE))
        if prefix.upper() in _PREFIX_IRIS:
            return URIRef(_PREFIX_IRIS[prefix.upper()] + local)
        if prefix == "MEDKG":
            return self.node("concept", f"MEDKG_{local}")
        return URIRef(f"{OBO}{prefix}_{local}")
