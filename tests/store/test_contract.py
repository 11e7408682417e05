"""The GraphStore contract, run against every backend.

A new backend joins by registering a factory (medkg.store.registry); the servers:
sparql on a private Virtuoso (or MEDKG_TEST_SPARQL_URL), neo4j where
MEDKG_TEST_NEO4J_URI names a database (see tests/conftest.py: store_config).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import rdflib

from medkg.config import StoreConfig
from medkg.errors import NotFoundError, StoreError
from medkg.export.rdf import export_rdf
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
    Triple,
)
from medkg.store.base import GraphStore
from medkg.store.neo4j import Neo4jGraphStore
from medkg.store.registry import backend_names, open_store
from medkg.store.sparql import SPARQLProtocolStore
from medkg.store.tables import TableStore
from tests.conftest import store_config

BASE = "https://example.org/kg/"


def oxigraph(directory: Path) -> GraphStore:
    return open_store(StoreConfig(backend="oxigraph", base_iri=BASE), directory / "graph")


@pytest.fixture(params=backend_names())
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    """Every registered backend, opened as the workspace opens it."""
    s = open_store(store_config(request.param, request, BASE),  # type: ignore[arg-type]
                   tmp_path / "graph")
    yield s
    s.close()


TEXT = 'Metformin treats type 2 diabetes. It may cause "nausea" \\ sometimes.'


def doc_and_chunks(
    text: str = TEXT, layer: Layer = Layer.LITERATURE
) -> tuple[Document, list[Chunk]]:
    doc = Document.create(layer=layer, title="Paper", source="paper.txt",
                          media_type="text/plain", text=text)
    return doc, [Chunk.create(doc, 0, 0, 33), Chunk.create(doc, 1, 34, len(text))]


def entity(name: str, group: str, doc: Document, chunk: Chunk, start: int,
           layer: Layer = Layer.LITERATURE, negated: bool = False) -> Entity:
    cid = f"MEDKG:{name}"
    return Entity(
        id=Entity.key_for(layer, name, group, cid), layer=layer, name=name, type=group,
        context="ctx", concept_ids=[cid],
        mentions=[Mention(chunk_id=chunk.id, document_id=doc.id, start=start,
                          end=start + len(name), text=name,
                          qualifiers=Qualifiers(negated=negated))],
    )


def test_document_round_trip(store: GraphStore) -> None:
    doc, chunks = doc_and_chunks()
    store.add_document(doc, chunks)
    assert store.has_document(doc.id)
    assert store.document(doc.id) == doc
    assert store.chunks(doc.id) == chunks
    assert store.chunk(chunks[1].id) == chunks[1]
    assert store.document_ids(Layer.LITERATURE) == [doc.id]
    assert store.document_ids(Layer.USER) == []


def test_writes_are_idempotent(store: GraphStore) -> None:
    doc, chunks = doc_and_chunks()
    store.add_document(doc, chunks)
    before = store.counts()
    store.add_document(doc, chunks)
    assert store.counts() == before


def test_stages(store: GraphStore) -> None:
    doc, chunks = doc_and_chunks()
    store.add_document(doc, chunks)
    assert store.stages(doc.id) == set()
    store.mark_stage(doc.id, "ingested")
    store.mark_stage(doc.id, "ingested")
    assert store.stages(doc.id) == {"ingested"}


def test_missing_ids_raise_not_found(store: GraphStore) -> None:
    for call in (lambda: store.document("doc-x"), lambda: store.chunk("chunk-x"),
                 lambda: store.entity("ent-x"), lambda: store.concept("X:1"),
                 lambda: store.chunks("doc-x"), lambda: store.mark_stage("doc-x", "s")):
        with pytest.raises(NotFoundError):
            call()


def test_hostile_identifiers_are_data_not_query(store: GraphStore) -> None:
    # Ids reach SPARQL only as bound values: quotes and braces are just characters.
    assert not store.has_document('x" } ; DROP ALL ; { "')
    assert store.links(source='") } #') == []


def test_concepts_round_trip(store: GraphStore) -> None:
    concepts = [
        Concept(id="DOID:9352", name="type 2 diabetes mellitus", synonyms=["T2DM", "NIDDM"],
                definition="A diabetes.", semantic_type="T047", semantic_group="DISO",
                parents=["DOID:9351"], xrefs=["MESH:D003924"], source="doid@1"),
        Concept(id="DOID:9351", name="diabetes mellitus", source="doid@1"),
        Concept(id="DOID:1", name="old", source="doid@1", obsolete=True,
                replaced_by="DOID:9351"),
        Concept(id="MESH:D008687", name="Metformin", source="mesh@1"),
    ]
    assert store.add_concepts(concepts, "doid@1") == 4
    # RDF has no order: synonyms, parents and xrefs come back sorted.
    assert store.concept("DOID:9352") == concepts[0].model_copy(
        update={"synonyms": ["NIDDM", "T2DM"]})
    assert store.concept("DOID:1") == concepts[2]
    assert sorted(c.id for c in store.concepts()) == sorted(c.id for c in concepts)


def test_entities_merge_mentions_across_writes(store: GraphStore) -> None:
    doc, chunks = doc_and_chunks()
    store.add_document(doc, chunks)
    first = entity("metformin", "CHEM", doc, chunks[0], 0)
    second = first.model_copy(update={"context": "other", "mentions": [
        Mention(chunk_id=chunks[1].id, document_id=doc.id, start=40, end=49, text="metformin")]})
    store.add_entities([first])
    store.add_entities([second, first])
    got = store.entity(first.id)
    assert got.context == "ctx"  # the first description stays
    assert [m.start for m in got.mentions] == [0, 40]
    assert [e.id for e in store.entities(Layer.LITERATURE)] == [first.id]
    assert store.entities(Layer.USER) == []


def test_mention_qualifiers_round_trip_and_defaults_are_not_written(
        store: GraphStore, tmp_path: Path) -> None:
    doc, chunks = doc_and_chunks()
    store.add_document(doc, chunks)
    plain = entity("metformin", "CHEM", doc, chunks[0], 0)
    odd = Qualifiers(negated=True, uncertain=True, hypothetical=True, historical=True,
                     experiencer="family", population="in children")
    qualified = plain.model_copy(update={"mentions": [
        *plain.mentions,
        Mention(chunk_id=chunks[1].id, document_id=doc.id, start=40, end=49, text="metformin",
                qualifiers=odd)]})
    store.add_entities([qualified])
    got = store.entity(plain.id)
    assert [m.qualifiers for m in got.mentions] == [Qualifiers(), odd]
    export_rdf(store, tmp_path / "g.nq", "nq")
    flags = [line for line in (tmp_path / "g.nq").read_text("utf-8").splitlines()
             if "/mention/" in line.split(" ", 1)[0]
             and any(f"vocab#{k}>" in line for k in ("negated", "uncertain", "hypothetical",
                                                   "historical", "experiencer"))]
    assert len(flags) == 5  # the qualified mention's five; the plain one writes none


def test_entity_briefs_say_where_an_entity_is_mentioned(store: GraphStore) -> None:
    doc, chunks = doc_and_chunks()
    store.add_document(doc, chunks)
    drug = entity("metformin", "CHEM", doc, chunks[0], 0)
    drug = drug.model_copy(update={"mentions": [*drug.mentions, Mention(
        chunk_id=chunks[1].id, document_id=doc.id, start=40, end=49, text="Metformin")]})
    user = entity("metformin", "CHEM", doc, chunks[1], 40, layer=Layer.USER)
    other = entity("type 2 diabetes", "DISO", doc, chunks[0], 17)
    store.add_entities([drug, user, other])
    (brief,) = store.entity_briefs([drug.id, "no-such-entity"])
    assert (brief.id, brief.layer, brief.name, brief.type) == (
        drug.id, Layer.LITERATURE, "metformin", "CHEM")
    assert brief.concept_ids == ["MEDKG:metformin"]
    assert brief.chunk_ids == sorted(c.id for c in chunks)
    assert brief.surface == ["Metformin", "metformin"]
    found = store.entities_of_concepts(["MEDKG:metformin", 'x" } DROP ALL ; #'])
    assert sorted(b.id for b in found) == sorted([drug.id, user.id])
    assert store.entities_of_concepts([]) == [] and store.entity_briefs([]) == []


def test_triples_keep_evidence_qualifiers_and_best_confidence(store: GraphStore) -> None:
    doc, chunks = doc_and_chunks()
    store.add_document(doc, chunks)
    drug = entity("metformin", "CHEM", doc, chunks[0], 0)
    disease = entity("type 2 diabetes", "DISO", doc, chunks[0], 17)
    store.add_entities([drug, disease])
    ev1 = Evidence(chunk_id=chunks[0].id, document_id=doc.id, start=0, end=33, quote=TEXT[:33])
    ev2 = Evidence(chunk_id=chunks[1].id, document_id=doc.id, start=34, end=len(TEXT),
                   quote=TEXT[34:])
    q = Qualifiers(uncertain=True, population="adults")
    tid = Triple.key_for(Layer.LITERATURE, drug.id, Predicate.TREATS, disease.id, q)
    t1 = Triple(id=tid, layer=Layer.LITERATURE, head=drug.id, predicate=Predicate.TREATS,
                tail=disease.id, evidence=[ev1], qualifiers=q, confidence=0.6, level=1)
    store.add_triples([t1])
    store.add_triples([t1.model_copy(update={"evidence": [ev2], "confidence": 0.8})])
    store.add_triples([t1.model_copy(update={"confidence": 0.5})])
    [got] = store.triples(Layer.LITERATURE)
    assert got.evidence == [ev1, ev2]
    assert got.confidence == 0.8
    assert got.qualifiers == q and got.level == 1
    assert store.triples(entity_ids=[disease.id]) == [got]
    assert store.triples(Layer.USER) == []


def test_negated_triples_are_not_asserted_as_facts(tmp_path: Path) -> None:
    store = oxigraph(tmp_path)
    doc, chunks = doc_and_chunks()
    store.add_document(doc, chunks)
    drug = entity("metformin", "CHEM", doc, chunks[0], 0)
    disease = entity("nausea", "DISO", doc, chunks[1], 50, negated=True)
    store.add_entities([drug, disease])
    q = Qualifiers(negated=True)
    t = Triple(id=Triple.key_for(Layer.LITERATURE, drug.id, Predicate.CAUSES, disease.id, q),
               layer=Layer.LITERATURE, head=drug.id, predicate=Predicate.CAUSES,
               tail=disease.id, qualifiers=q, confidence=0.7)
    store.add_triples([t])
    out = tmp_path / "g.nq"
    export_rdf(store, out, "nq")
    g = rdflib.Dataset()
    g.parse(out, format="nquads")
    causes = rdflib.URIRef("https://w3id.org/biolink/vocab/causes")
    assert not list(g.quads((None, causes, None, None)))  # no plain fact
    assert store.triples()[0].qualifiers.negated  # but the statement is kept
    store.close()


def test_links(store: GraphStore) -> None:
    links = [
        Link(kind=LinkKind.REFERENCE_OF, source="ent-u", target="ent-l", score=0.91,
             method="embedding"),
        Link(kind=LinkKind.DEFINITION_OF, source="ent-l", target="DOID:9352", score=1.0,
             method="normalisation"),
    ]
    store.add_links(links)
    store.add_links(links)
    assert store.links(source="ent-u") == [links[0]]
    assert store.links(kind=LinkKind.DEFINITION_OF) == [links[1]]
    assert len(store.links()) == 2


def test_same_as_links_can_be_removed(store: GraphStore) -> None:
    merge = Link(kind=LinkKind.SAME_AS, source="ent-a", target="ent-b", score=0.93,
                 method="resolution")
    other = Link(kind=LinkKind.REFERENCE_OF, source="ent-a", target="ent-c", score=0.9,
                 method="embedding")
    store.add_links([merge, other])
    assert store.remove_links([merge]) == 1
    assert store.remove_links([merge]) == 0  # already gone
    assert store.links() == [other]
    counts = store.counts()
    store.add_links([merge])
    assert store.counts().quads > counts.quads
    store.remove_links([merge])
    assert store.counts() == counts  # nothing of the link is left behind


@pytest.mark.parametrize("fmt", ["ttl", "trig", "nq", "jsonld"])
def test_export_parses_back(store: GraphStore, tmp_path: Path, fmt: str) -> None:
    doc, chunks = doc_and_chunks()
    store.add_document(doc, chunks)
    store.add_concepts([Concept(id="DOID:1", name="disease", definition="d", source="s")], "s")
    out = tmp_path / f"graph.{fmt}"
    export_rdf(store, out, fmt)
    parser = {"ttl": "turtle", "trig": "trig", "nq": "nquads", "jsonld": "json-ld"}[fmt]
    g = rdflib.Dataset()
    g.parse(out, format=parser)
    texts = {str(o) for _, p, o, _ in g.quads((None, None, None, None)) if p.endswith("#text")}
    assert TEXT in texts


def test_unknown_export_format(store: GraphStore, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="unknown export format"):
        export_rdf(store, tmp_path / "x", "xml")


def test_oxigraph_persists_across_reopen(tmp_path: Path) -> None:
    doc, chunks = doc_and_chunks()
    first = oxigraph(tmp_path)
    first.add_document(doc, chunks)
    first.close()
    second = oxigraph(tmp_path)
    assert second.document(doc.id) == doc
    second.close()


def test_deleting_a_document_removes_only_what_it_alone_supports(store: GraphStore) -> None:
    doc_a, chunks_a = doc_and_chunks()
    doc_b, chunks_b = doc_and_chunks(TEXT + " Again.")
    empty = store.counts()
    store.add_document(doc_b, chunks_b)
    only_b = store.counts()
    store.add_document(doc_a, chunks_a)
    # metformin and diabetes are in both documents; nausea only in A.
    drug_a, drug_b = (entity("metformin", "CHEM", d, c[0], 0) for d, c in
                      ((doc_a, chunks_a), (doc_b, chunks_b)))
    dis_a, dis_b = (entity("type 2 diabetes", "DISO", d, c[0], 17) for d, c in
                    ((doc_a, chunks_a), (doc_b, chunks_b)))
    nausea = entity("nausea", "DISO", doc_a, chunks_a[1], 48)
    store.add_entities([drug_a, drug_b, dis_a, dis_b, nausea])

    def evidence(doc: Document, chunk: Chunk) -> Evidence:
        return Evidence(chunk_id=chunk.id, document_id=doc.id, start=chunk.start,
                        end=chunk.end, quote=chunk.text)

    q = Qualifiers()
    treats = Triple(id=Triple.key_for(Layer.LITERATURE, drug_a.id, Predicate.TREATS, dis_a.id, q),
                    layer=Layer.LITERATURE, head=drug_a.id, predicate=Predicate.TREATS,
                    tail=dis_a.id, evidence=[evidence(doc_a, chunks_a[0]),
                                             evidence(doc_b, chunks_b[0])], confidence=0.9)
    adverse = Triple(id=Triple.key_for(Layer.LITERATURE, drug_a.id, Predicate.HAS_ADVERSE_EFFECT,
                                       nausea.id, q),
                     layer=Layer.LITERATURE, head=drug_a.id,
                     predicate=Predicate.HAS_ADVERSE_EFFECT, tail=nausea.id,
                     evidence=[evidence(doc_a, chunks_a[1])], confidence=0.7)
    store.add_triples([treats, adverse])
    link = Link(kind=LinkKind.DEFINITION_OF, source=nausea.id, target="MEDKG:nausea", score=1.0,
                method="normalisation")
    store.add_links([link])

    gone = store.delete_document(doc_a.id)
    assert gone.chunks == sorted(c.id for c in chunks_a)
    assert gone.entities == [nausea.id] and gone.triples == [adverse.id]
    assert (gone.mentions, gone.evidence, gone.links) == (3, 2, 1)
    assert not store.has_document(doc_a.id) and store.document_ids() == [doc_b.id]
    [kept] = store.triples(Layer.LITERATURE)
    assert kept.id == treats.id and [e.document_id for e in kept.evidence] == [doc_b.id]
    assert {e.name: len(e.mentions) for e in store.entities(Layer.LITERATURE)} == {
        "metformin": 1, "type 2 diabetes": 1}
    assert store.links() == []
    # Deleting the other document leaves the store as empty as it began.
    store.delete_document(doc_b.id)
    assert store.counts() == empty
    assert only_b != empty
    with pytest.raises(NotFoundError):
        store.delete_document(doc_b.id)


def test_defect_02_an_interrupted_delete_leaves_all_or_nothing(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc, chunks = doc_and_chunks()
    empty = store.counts()
    store.add_document(doc, chunks)
    drug = entity("metformin", "CHEM", doc, chunks[0], 0)
    nausea = entity("nausea", "DISO", doc, chunks[1], 48)
    store.add_entities([drug, nausea])
    q = Qualifiers()
    store.add_triples([Triple(
        id=Triple.key_for(Layer.LITERATURE, drug.id, Predicate.HAS_ADVERSE_EFFECT, nausea.id, q),
        layer=Layer.LITERATURE, head=drug.id, predicate=Predicate.HAS_ADVERSE_EFFECT,
        tail=nausea.id, confidence=0.7,
        evidence=[Evidence(chunk_id=chunks[1].id, document_id=doc.id, start=34,
                           end=len(TEXT), quote=TEXT[34:])])])
    before = sorted(map(str, store.quads()))
    calls = {"n": 0}
    remove, update = rdflib.Graph.remove, rdflib.Dataset.update

    def crash_after_three(self: rdflib.Graph, triple: object) -> object:
        calls["n"] += 1
        if calls["n"] > 3:
            raise KeyboardInterrupt("simulated crash")
        return remove(self, triple)  # type: ignore[arg-type]

    def crash(self: rdflib.Dataset, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt("simulated crash")

    monkeypatch.setattr(rdflib.Graph, "remove", crash_after_three)
    monkeypatch.setattr(rdflib.Dataset, "update", crash)
    monkeypatch.setattr(SPARQLProtocolStore, "run_update", crash)
    monkeypatch.setattr(Neo4jGraphStore, "_write", crash)

    def crash_midway(self: TableStore, db: sqlite3.Connection, document_id: str,
                     *args: object, **kwargs: object) -> None:
        db.execute("DELETE FROM mentions WHERE document_id = ?", (document_id,))
        raise KeyboardInterrupt("simulated crash")

    monkeypatch.setattr(TableStore, "_delete", crash_midway)
    journal: list[object] = []
    with pytest.raises(KeyboardInterrupt):
        store.delete_document(doc.id, journal=journal.append)
    monkeypatch.setattr(rdflib.Graph, "remove", remove)
    monkeypatch.setattr(rdflib.Dataset, "update", update)
    monkeypatch.undo()
    # One transaction: the document is all there (its text too), and the journal
    # heard what was to go before anything went.
    assert sorted(map(str, store.quads())) == before
    assert len(journal) == 1
    store.delete_document(doc.id)
    assert store.counts() == empty


def test_defect_02_deleting_hostile_text_removes_exactly_it(store: GraphStore) -> None:
    hostile = ('x" } ; DROP ALL ; INSERT DATA { <a:b> <a:c> "d" } #\n\\ \u2028 """ \'\'\'\n'
               "line two \\\" }}")
    doc = Document.create(layer=Layer.USER, title='t" }', source="s\\x",
                          media_type="text/plain", text=hostile)
    other, chunks = doc_and_chunks()
    store.add_document(other, chunks)
    before = sorted(map(str, store.quads()))
    store.add_document(doc, [Chunk.create(doc, 0, 0, len(hostile))])
    store.delete_document(doc.id)
    assert sorted(map(str, store.quads())) == before


def test_defect_16_reloading_a_vocabulary_keeps_one_load_time(store: GraphStore) -> None:
    concept = Concept(id="DOID:1", name="disease", definition="d", source="s")
    store.add_concepts([concept], "seed.obo")
    store.add_concepts([concept], "seed.obo")
    loaded = [q for q in store.quads() if str(q[1]).endswith("generatedAtTime")]
    assert len(loaded) == 1


def test_defect_06_reloading_an_updated_vocabulary_replaces_its_values(store: GraphStore) -> None:
    old = Concept(id="DOID:1", name="old name", definition="old", synonyms=["x"], source="s")
    new = Concept(id="DOID:1", name="new name", definition="new", synonyms=["y"], source="s")
    store.add_concepts([old], "seed.obo")
    store.add_concepts([new], "seed.obo")
    assert store.concept("DOID:1") == new
    assert [c.name for c in store.concepts()] == ["new name"]


# -- review: decisions and their effects -------------------------------------------


def _treats(store: GraphStore) -> tuple[Triple, Entity, Entity]:
    doc, chunks = doc_and_chunks()
    store.add_document(doc, chunks)
    drug = entity("metformin", "CHEM", doc, chunks[0], 0)
    disease = entity("type 2 diabetes", "DISO", doc, chunks[0], 17)
    store.add_entities([drug, disease])
    ev = Evidence(chunk_id=chunks[0].id, document_id=doc.id, start=0, end=33, quote=TEXT[:33])
    q = Qualifiers()
    t = Triple(id=Triple.key_for(Layer.LITERATURE, drug.id, Predicate.TREATS, disease.id, q),
               layer=Layer.LITERATURE, head=drug.id, predicate=Predicate.TREATS,
               tail=disease.id, evidence=[ev], qualifiers=q, confidence=0.9)
    store.add_triples([t])
    return t, drug, disease


def test_decisions_round_trip_with_hostile_text(store: GraphStore) -> None:
    from datetime import UTC, datetime

    from medkg.model import (
        Decision,
        ReviewAction,
        ReviewTarget,
        StatementEdit,
        StatementSnapshot,
    )

    t, drug, disease = _treats(store)
    hostile = 'Dr "x" } . <script>alert(1)</script> \\u0000?'
    before = StatementSnapshot(layer=t.layer, head=t.head, head_name=drug.name,
                               predicate=t.predicate, tail=t.tail, tail_name=disease.name,
                               evidence=t.evidence)
    d1 = Decision(id="rev-a", target_kind=ReviewTarget.STATEMENT, target=t.id,
                  action=ReviewAction.EDIT, reviewer=hostile, at=datetime(2026, 1, 2, tzinfo=UTC),
                  reason=hostile, before=before,
                  after=StatementEdit(head=t.head, predicate=Predicate.PREVENTS, tail=t.tail))
    d2 = Decision(id="rev-b", target_kind=ReviewTarget.STATEMENT, target=t.id,
                  action=ReviewAction.UNDO, reviewer="b", at=datetime(2026, 1, 3, tzinfo=UTC),
                  undoes="rev-a")
    store.add_decisions([d2, d1])
    store.add_decisions([d1])  # idempotent
    assert store.decisions() == [d1, d2]  # oldest first
    assert store.decisions(t.id) == [d1, d2]
    assert store.decisions("tri-none") == []
    assert store.counts().decisions == 2


def test_review_state_entity_fields_and_triple_removal(store: GraphStore) -> None:
    from medkg.model import EntityEdit, ReviewState

    t, drug, _disease = _treats(store)
    assert store.triple(t.id).review is ReviewState.PROPOSED
    assert store.set_review_state(t.id, ReviewState.REJECTED)
    assert store.triple(t.id).review is ReviewState.REJECTED
    assert not store.triple(t.id).in_force
    assert not store.set_review_state("tri-none", ReviewState.ACCEPTED)
    # A rewrite by the build does not bring "proposed" back beside the decision.
    store.add_triples([t])
    assert store.triple(t.id).review is ReviewState.REJECTED
    assert store.update_entity(drug.id, EntityEdit(name="Metformin HCl", concept_ids=["X:1"]))
    [brief] = store.entity_briefs([drug.id])
    assert (brief.name, brief.type, brief.concept_ids) == ("Metformin HCl", "CHEM", ["X:1"])
    [bare] = store.entity_briefs([drug.id], mentions=False)
    assert bare == brief.model_copy(update={"chunk_ids": [], "surface": []})
    assert brief.chunk_ids and brief.surface == ["metformin"]
    assert not store.update_entity("ent-none", EntityEdit(name="x"))
    version = t.model_copy(update={
        "id": Triple.key_for(t.layer, t.head, Predicate.PREVENTS, t.tail, t.qualifiers),
        "predicate": Predicate.PREVENTS, "method": "curator", "revision_of": t.id})
    store.add_triples([version])
    assert store.triple(version.id).revision_of == t.id
    assert store.revisions_of(t.id) == [version.id] and store.revisions_of(version.id) == []
    assert store.remove_triples([version.id, "tri-none"]) == [version.id]
    with pytest.raises(NotFoundError):
        store.triple(version.id)
    assert [x.id for x in store.triples()] == [t.id]  # its evidence, shared, stays
    assert store.triple(t.id).evidence == t.evidence


def test_streaming_reads_equal_the_whole_reads(store: GraphStore) -> None:
    """What exports read a batch at a time is what the list reads return."""
    doc, chunks = doc_and_chunks()
    store.add_document(doc, chunks)
    store.add_concepts([Concept(id="DOID:1", name="disease", definition="d", source="s"),
                        Concept(id="HP:2", name="sign", parents=["DOID:1"], source="s")], "s")
    drug = entity("metformin", "CHEM", doc, chunks[0], 0)
    disease = entity("type 2 diabetes", "DISO", doc, chunks[0], 17)
    store.add_entities([drug, disease])
    ev = Evidence(chunk_id=chunks[0].id, document_id=doc.id, start=0, end=33,
                  quote=doc.text[0:33])
    t = Triple(id=Triple.key_for(Layer.LITERATURE, drug.id, Predicate.TREATS, disease.id,
                                 Qualifiers()),
               layer=Layer.LITERATURE, head=drug.id, predicate=Predicate.TREATS,
               tail=disease.id, evidence=[ev], confidence=0.8)
    store.add_triples([t])
    link = Link(kind=LinkKind.DEFINITION_OF, source=drug.id, target="DOID:1", score=0.9,
                method="embedding")
    store.add_links([link])
    assert list(store.iter_triples(Layer.LITERATURE)) == store.triples(Layer.LITERATURE)
    assert list(store.iter_triples(Layer.USER)) == []
    assert sorted(e.id for e in store.iter_entities(Layer.LITERATURE)) == sorted(
        [drug.id, disease.id])
    assert sorted(store.iter_concepts(), key=lambda c: c.id) == sorted(
        store.concepts(), key=lambda c: c.id)
    assert list(store.iter_links()) == store.links()
    assert list(store.iter_links(LinkKind.SAME_AS)) == []
