"""The neo4j adapter's plumbing, through a recording fake of the driver: batches,
parameters, transactions, schema. These say nothing about whether the Cypher is
right: that is the contract suite's job on a real server (MEDKG_TEST_NEO4J_URI),
which no machine here can run (no Neo4j server in the reachable registries)."""

from __future__ import annotations

from typing import Any

import pytest

from medkg.errors import StoreError
from medkg.model import (
    Chunk,
    Concept,
    Document,
    Entity,
    Evidence,
    Layer,
    Mention,
    Predicate,
    Qualifiers,
    Triple,
)
from medkg.store.neo4j import Neo4jGraphStore, rel_type

HOSTILE = 'x" }) DETACH DELETE n // \' ; MATCH (m) RETURN m `backtick` $param {'


class FakeTx:
    def __init__(self, log: list[tuple[str, dict[str, Any]]]) -> None:
        self.log = log

    def run(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        self.log.append((query, params))
        return []


class FakeSession:
    def __init__(self, driver: FakeDriver) -> None:
        self.driver = driver

    def __enter__(self) -> FakeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute_write(self, work: Any) -> Any:
        self.driver.transactions += 1
        return work(FakeTx(self.driver.writes))


class FakeDriver:
    """Records every query; answers every read with no rows."""

    def __init__(self) -> None:
        self.reads: list[tuple[str, dict[str, Any], str]] = []
        self.writes: list[tuple[str, dict[str, Any]]] = []
        self.schema: list[str] = []
        self.transactions = 0
        self.closed = False

    def execute_query(self, query: str, params: dict[str, Any], *, database_: str,
                      routing_: str = "w") -> tuple[list[Any], None, list[str]]:
        if query.startswith("CREATE"):
            self.schema.append(query)
        else:
            self.reads.append((query, params, routing_))
        return [], None, []

    def session(self, database: str) -> FakeSession:
        assert database == "medkg"
        return FakeSession(self)

    def close(self) -> None:
        self.closed = True


def store(batch_size: int = 2, read_only: bool = False) -> tuple[Neo4jGraphStore, FakeDriver]:
    driver = FakeDriver()
    return Neo4jGraphStore("neo4j://x", database="medkg", base_iri="https://e.org/kg/",
                           batch_size=batch_size, read_only=read_only, driver=driver), driver


def test_schema_constraints_and_vector_index_on_open() -> None:
    _store, driver = store()
    assert sum("REQUIRE n.id IS UNIQUE" in q for q in driver.schema) == 8
    assert any("VECTOR INDEX" in q and "Entity" in q for q in driver.schema)
    _store, driver = store(read_only=True)
    assert driver.schema == []


def test_writes_go_in_unwind_batches_one_transaction_each() -> None:
    s, driver = store(batch_size=2)
    s.add_concepts([Concept(id=f"X:{i}", name=f"c{i}", source="x") for i in range(5)], "x")
    assert driver.transactions == 3
    assert [len(p["rows"]) for _q, p in driver.writes] == [2, 2, 1]
    assert all(q.startswith("UNWIND $rows") for q, _p in driver.writes)


def test_a_document_and_its_chunks_are_one_transaction() -> None:
    s, driver = store()
    doc = Document.create(layer=Layer.USER, title="t", source="s", media_type="text/plain",
                          text="one two three")
    s.add_document(doc, [Chunk.create(doc, i, 0, 3) for i in range(5)])
    assert driver.transactions == 1 and len(driver.writes[0][1]["chunks"]) == 5


def test_user_text_travels_only_as_parameters() -> None:
    s, driver = store()
    doc = Document.create(layer=Layer.USER, title=HOSTILE, source=HOSTILE,
                          media_type="text/plain", text=HOSTILE)
    chunk = Chunk.create(doc, 0, 0, len(HOSTILE))
    s.add_document(doc, [chunk])
    mention = Mention(chunk_id=chunk.id, document_id=doc.id, start=0, end=5, text=HOSTILE,
                      qualifiers=Qualifiers(population=HOSTILE))
    a = Entity(id="ent-a", layer=Layer.USER, name=HOSTILE, type="CHEM", mentions=[mention])
    b = Entity(id="ent-b", layer=Layer.USER, name="b", type="DISO", mentions=[mention])
    s.add_entities([a, b])
    s.add_triples([Triple(id="st-1", layer=Layer.USER, head=a.id, predicate=Predicate.TREATS,
                          tail=b.id, confidence=0.5, evidence=[Evidence(
                              chunk_id=chunk.id, document_id=doc.id, start=0, end=5,
                              quote=HOSTILE)])])
    s.has_document(HOSTILE)
    s.links(source=HOSTILE, target=HOSTILE)
    s.entities_of_concepts([HOSTILE])
    s.decisions(target=HOSTILE)
    queries = [q for q, *_ in driver.reads] + [q for q, _ in driver.writes]
    assert queries and not any(HOSTILE in q or "DETACH DELETE n" in q for q in queries)
    sent = repr([p for _q, p, *_ in driver.reads] + [p for _q, p in driver.writes])
    assert sent.count("DETACH DELETE n") >= 6  # every hostile value went, as a parameter
    assert all(routing == "r" for _q, _p, routing in driver.reads)


def test_relationship_types_come_only_from_the_model() -> None:
    assert rel_type("has_adverse_effect") == "HAS_ADVERSE_EFFECT"
    for bad in ("treats`]->() DETACH DELETE n //", "a b", "x-y", ""):
        with pytest.raises(StoreError):
            rel_type(bad)


def test_read_only_refuses_writes() -> None:
    s, driver = store(read_only=True)
    with pytest.raises(StoreError, match="read-only"):
        s.add_concepts([Concept(id="X:1", name="c", source="x")], "x")
    assert driver.writes == []
    s.close()
    assert driver.closed
