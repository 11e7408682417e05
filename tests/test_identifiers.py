"""Concept IRIs come from the Bioregistry's prefix map, for every prefix the
default vocabulary produces; workspaces made before are moved to them."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import Literal, URIRef
from rdflib.namespace import DCTERMS, RDF, SKOS

from medkg.config import StoreConfig
from medkg.model import Layer, Link, LinkKind
from medkg.store.registry import open_store
from medkg.store.vocab import MKG, IRIs

BASE = "https://example.org/kg/"

EXPECTED = {
    "HP:0001250": "http://purl.obolibrary.org/obo/HP_0001250",
    "DOID:1324": "http://purl.obolibrary.org/obo/DOID_1324",
    "MONDO:0005148": "http://purl.obolibrary.org/obo/MONDO_0005148",
    "NCBIGene:3630": "https://www.ncbi.nlm.nih.gov/gene/3630",
    "DRUGBANK:DB00331": "https://go.drugbank.com/drugs/DB00331",
    "UMLS:C0011849": "https://uts.nlm.nih.gov/uts/umls/concept/C0011849",
}


@pytest.mark.parametrize(("curie", "iri"), sorted(EXPECTED.items()))
def test_known_prefixes_get_the_registry_iri(curie: str, iri: str) -> None:
    assert str(IRIs(BASE).concept(curie)) == iri


def test_unknown_prefixes_stay_under_the_workspace() -> None:
    iris = IRIs(BASE)
    assert str(iris.concept("MEDKG:0000012")) == f"{BASE}concept/MEDKG_0000012"
    assert str(iris.concept("MYVOCAB:a b")) == f"{BASE}concept/MYVOCAB_a%20b"


@pytest.mark.slow
def test_every_prefix_of_the_default_vocabulary_gets_the_registry_iri() -> None:
    """Ids and cross-references of the default vocabulary: each prefix the
    Bioregistry knows expands to the Bioregistry's own IRI."""
    import bioregistry

    from medkg.ontology.loaders import load_default

    registry = bioregistry.manager.get_converter()
    examples: dict[str, str] = {}
    for c in load_default().concepts:
        for curie in (c.id, *c.xrefs):
            examples.setdefault(curie.split(":", 1)[0], curie)
    assert {"HP", "MESH", "NCBIGene", "DRUGBANK", "UMLS"} <= set(examples)
    iris = IRIs(BASE)
    unknown = []
    for prefix, curie in sorted(examples.items()):
        expected = registry.expand(curie)
        if expected is None:
            unknown.append(prefix)
            assert str(iris.concept(curie)).startswith(f"{BASE}concept/")
        else:
            assert str(iris.concept(curie)) == expected, curie
    assert not {"HP", "MESH", "NCBIGene", "DRUGBANK", "UMLS", "DOID", "MONDO"} & set(unknown)


@pytest.mark.parametrize("backend", ["oxigraph", "memory"])
def test_concepts_of_the_old_scheme_move_to_the_registry_iri(tmp_path: Path,
                                                            backend: str) -> None:
    store = open_store(StoreConfig(backend=backend, base_iri=BASE), tmp_path / "graph")
    iris = IRIs(BASE)
    vocabulary = iris.graph(Layer.VOCABULARY)
    old = URIRef("http://purl.obolibrary.org/obo/NCBIGene_3630")  # what medkg minted before
    parent = URIRef("http://purl.obolibrary.org/obo/DRUGBANK_DB00331")
    ds = store._ds  # type: ignore[attr-defined]
    ds.addN([(old, RDF.type, SKOS.Concept, ds.graph(vocabulary)),
             (old, MKG.curie, Literal("NCBIGene:3630"), ds.graph(vocabulary)),
             (old, SKOS.prefLabel, Literal("INS"), ds.graph(vocabulary)),
             (old, DCTERMS.source, Literal("test"), ds.graph(vocabulary)),
             (old, SKOS.broader, parent, ds.graph(vocabulary)),
             (parent, RDF.type, SKOS.Concept, ds.graph(vocabulary)),
             (parent, MKG.curie, Literal("DRUGBANK:DB00331"), ds.graph(vocabulary)),
             (parent, SKOS.prefLabel, Literal("metformin"), ds.graph(vocabulary))])
    store.add_links([Link(kind=LinkKind.DEFINITION_OF, source="ent-1", target="NCBIGene:3630",
                          score=0.9, method="embedding")])
    # the link was written to the new IRI; put it on the old one as an old store had it
    new = iris.concept("NCBIGene:3630")
    ds.update(f"DELETE {{ GRAPH ?g {{ ?s ?p <{new}> }} }} INSERT {{ GRAPH ?g {{ ?s ?p <{old}> }} }}"
              f" WHERE {{ GRAPH ?g {{ ?s ?p <{new}> }} }}")
    assert store.migrate_concept_iris() == 2
    concept = store.concept("NCBIGene:3630")
    assert concept.name == "INS" and concept.parents == ["DRUGBANK:DB00331"]
    assert [link.target for link in store.links(source="ent-1")] == ["NCBIGene:3630"]
    assert not list(ds.quads((old, None, None, None)))
    assert not list(ds.quads((None, None, old, None)))
    assert store.migrate_concept_iris() == 0  # once moved, nothing more to do
    store.close()


def test_an_unwritable_cache_still_gives_the_registry_iri(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from medkg import identifiers

    blocked = tmp_path / "not-a-dir"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    identifiers.converter.cache_clear()
    identifiers.uri_prefix.cache_clear()
    try:
        assert identifiers.expand("NCBIGene:3630") == EXPECTED["NCBIGene:3630"]
        assert not list(tmp_path.glob("**/*.tmp"))
    finally:
        identifiers.converter.cache_clear()
        identifiers.uri_prefix.cache_clear()
