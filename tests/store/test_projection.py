"""The RDF projection of the tables: the same graph the RDF store holds for the
same objects (one fact rule), each quad once, and counted without reading it."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from rdflib.namespace import PROV

from medkg.config import StoreConfig
from medkg.model import (
    Concept,
    Decision,
    Evidence,
    Layer,
    Link,
    LinkKind,
    Predicate,
    Qualifiers,
    ReviewAction,
    ReviewTarget,
    Triple,
)
from medkg.store.base import GraphStore
from medkg.store.projection import RDFProjection, count_quads, project
from medkg.store.rdf import AnyQuad, _key
from medkg.store.registry import open_store
from medkg.store.tables import TableStore
from tests.store.test_contract import BASE, doc_and_chunks, entity


def _fill(store: GraphStore) -> None:
    doc, chunks = doc_and_chunks()
    store.add_document(doc, chunks)
    store.mark_stage(doc.id, "ingested")
    store.add_concepts([Concept(id="MEDKG:metformin", name="metformin", synonyms=["glucophage"],
                                definition="a biguanide", source="seed")], "seed")
    drug = entity("Metformin", "CHEM", doc, chunks[0], 0)
    disease = entity("type 2 diabetes", "DISO", doc, chunks[0], 16)
    store.add_entities([drug, disease])
    ev = Evidence(chunk_id=chunks[0].id, document_id=doc.id, start=0, end=33,
                  quote=doc.text[0:33])
    triples = []
    for q in (Qualifiers(), Qualifiers(hypothetical=True), Qualifiers(uncertain=True),
              Qualifiers(experiencer="family"), Qualifiers(negated=True)):
        triples.append(Triple(
            id=Triple.key_for(Layer.LITERATURE, drug.id, Predicate.TREATS, disease.id, q),
            layer=Layer.LITERATURE, head=drug.id, predicate=Predicate.TREATS, tail=disease.id,
            qualifiers=q, confidence=0.7, evidence=[ev]))  # one evidence node, shared
    store.add_triples(triples)
    store.add_links([Link(kind=LinkKind.DEFINITION_OF, source=drug.id,
                          target="MEDKG:metformin", score=0.9, method="exact")])
    store.add_decisions([Decision(id=f"rev-{n}", target_kind=ReviewTarget.STATEMENT,
                                  target=triples[n].id, action=ReviewAction.ACCEPT,
                                  reviewer="Dr Ada", at=datetime(2026, 1, n + 1, tzinfo=UTC))
                         for n in range(2)])


def _comparable(quads: Iterable[AnyQuad]) -> set[tuple[str, ...]]:
    """Quads as Oxigraph writes them, less the vocabulary's load time."""
    return {_key(q) for q in quads if q[1] != PROV.generatedAtTime}


def test_the_projection_is_the_graph_the_rdf_store_holds(tmp_path: Path) -> None:
    tables = open_store(StoreConfig(backend="sqlite", base_iri=BASE), tmp_path / "graph")
    rdf = open_store(StoreConfig(backend="oxigraph", base_iri=BASE), tmp_path / "graph")
    for store in (tables, rdf):
        _fill(store)
    assert _comparable(tables.quads()) == _comparable(rdf.quads())
    # one plain fact for the five statements: only those the fact rule admits assert it
    facts = [q for q in tables.quads() if "biolink" in str(q[1])]
    assert len(facts) == 1
    tables.close()
    rdf.close()


def test_each_quad_once_and_counted_without_reading_it(tables_config: StoreConfig,
                                                        tmp_path: Path) -> None:
    store = open_store(tables_config, tmp_path / "graph")
    assert isinstance(store, TableStore)
    _fill(store)
    quads = list(project(store))
    assert len(quads) == len(set(quads)) == count_quads(store) == store.counts().quads
    store.close()


def test_the_stored_projection_follows_the_tables(tables_config: StoreConfig,
                                                  tmp_path: Path) -> None:
    store = open_store(tables_config, tmp_path / "graph")
    assert isinstance(store, TableStore)
    _fill(store)
    projection = RDFProjection(tmp_path / "rdf")
    assert not projection.fresh(store)
    assert projection.rebuild(store) == store.counts().quads
    assert projection.fresh(store)
    store.set_review_state(store.triples()[0].id, store.triples()[0].review)  # a write
    assert not projection.fresh(store)  # stale: remade before it is read
    answer = projection.open(store)
    assert len(list(answer.quads_for_pattern(None, None, None, None))) == store.counts().quads
    store.close()
