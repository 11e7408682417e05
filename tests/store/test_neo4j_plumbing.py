"""The neo4j adapter's plumbing, through a recording fake of the driver: batches,
parameters, transactions, schema. These say nothing about whether the Cypher is
right: that is the contract suite's job on a real server (MEDKG_TEST_NEO4J_URI),
which no machine here can run (no Neo4j server in the reachable registries)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from medkg.errors import NotFoundError, StoreError
from medkg.model import (
    Chunk,
    Concept,
    Decision,
    Document,
    Entity,
    EntityEdit,
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
)
from medkg.store.neo4j import Neo4jGraphStore, rel_type
from tests.conftest import REPO

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
        self.schema: list[tuple[str, dict[str, Any]]] = []
        self.transactions = 0
        self.closed = False

    def execute_query(self, query: str, params: dict[str, Any], *, database_: str,
                      routing_: str = "w") -> tuple[list[Any], None, list[str]]:
        if query.startswith("CREATE"):
            self.schema.append((query, params))
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
    assert sum("REQUIRE n.id IS UNIQUE" in q for q, _p in driver.schema) == 8
    assert any("VECTOR INDEX" in q and "Entity" in q for q, _p in driver.schema)
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


# -- every query, checked by Neo4j's own Cypher front end ---------------------------

LINTER = REPO / ".cypher-lint" / "node_modules" / "@neo4j-cypher" / "language-support"


class AnsweringDriver(FakeDriver):
    """Says a document exists, so the deletion paths run to their writes."""

    def execute_query(self, query: str, params: dict[str, Any], *, database_: str,
                      routing_: str = "w") -> tuple[list[Any], None, list[str]]:
        super().execute_query(query, params, database_=database_, routing_=routing_)
        if query == "MATCH (d:Document {id: $id}) RETURN d.id AS id":
            return [{"id": "doc"}], None, []
        return [], None, []


def every_query() -> list[tuple[str, dict[str, Any]]]:
    """Drive every method of the store over a recording driver."""
    driver = AnsweringDriver()
    s = Neo4jGraphStore("neo4j://x", database="medkg", base_iri="https://e.org/kg/",
                        driver=driver)
    doc = Document.create(layer=Layer.USER, title="t", source="s", media_type="text/plain",
                          text="abc def")
    chunk = Chunk.create(doc, 0, 0, 3)
    mention = Mention(chunk_id=chunk.id, document_id=doc.id, start=0, end=3, text="abc")
    s.add_document(doc, [chunk])
    s.add_concepts([Concept(id="X:1", name="n", source="s", parents=["X:2"])], "s")
    s.add_entities([Entity(id="e1", layer=Layer.USER, name="a", type="CHEM", mentions=[mention]),
                    Entity(id="e2", layer=Layer.LITERATURE, name="b", type="DISO",
                           mentions=[mention])])
    s.add_triples([Triple(id=f"t-{p.value}", layer=Layer.USER, head="e1", predicate=p, tail="e2",
                          confidence=0.5, evidence=[Evidence(chunk_id=chunk.id, document_id=doc.id,
                                                             start=0, end=3, quote="abc")])
                   for p in Predicate])
    s.add_links([Link(kind=k, source="e1", target="e2", score=0.5, method="m") for k in LinkKind])
    s.add_decisions([Decision(id="rev-1", target_kind=ReviewTarget.STATEMENT, target="t",
                              action=ReviewAction.REJECT, reviewer="r",
                              at=datetime(2026, 1, 1, tzinfo=UTC))])
    calls: list[Callable[[], object]] = [
        lambda: s.has_document("x"), s.document_ids, lambda: s.document_sources(Layer.USER),
        lambda: s.document("doc"), lambda: s.mark_stage("doc", "a"),
        lambda: s.unmark_stage("doc", "a"), lambda: s.stages("doc"), lambda: s.chunk("x"),
        lambda: s.chunks("doc"), s.chunk_ids, lambda: s.concept("X:1"), s.concepts,
        lambda: s.entity("e1"), s.entity_ids, lambda: s.entities(Layer.USER),
        lambda: s.entities_of_concepts(["X:1"]), lambda: s.entity_briefs(["e1"]),
        lambda: s.entity_briefs(["e1"], mentions=False),
        lambda: list(s.iter_entities(Layer.USER)), lambda: s.triple("t"),
        lambda: s.revisions_of("t"), s.triples, lambda: s.triples(Layer.USER, ["e1"]),
        lambda: list(s.iter_triples(Layer.USER)),
        lambda: s.set_review_state("t", ReviewState.ACCEPTED),
        lambda: s.update_entity("e1", EntityEdit(name="z")), lambda: s.remove_triples(["t"]),
        lambda: s.add_entity_vectors([("e1", [0.1, 0.2])]),
        s.decisions, lambda: s.decisions("t"), s.links, lambda: s.links(source="e1"),
        lambda: s.remove_links([Link(kind=LinkKind.SAME_AS, source="e1", target="e2",
                                     score=0.5, method="m")]),
        lambda: s.delete_extraction("doc", ["x"]), lambda: s.delete_document("doc"), s.clear,
        lambda: list(s.quads()), s.counts]
    for call in calls:
        # No rows from the fake: what matters is the query each call sent.
        with contextlib.suppress(NotFoundError, IndexError):
            call()
    sent = driver.schema + [(q, p) for q, p, _r in driver.reads]
    return sent + driver.writes


def test_every_query_names_only_parameters_it_is_given() -> None:
    sent = every_query()
    assert len({q for q, _p in sent}) > 60
    for query, params in sent:
        named = set(re.findall(r"\$(\w+)", query))
        assert named <= set(params), (query, named - set(params))


def test_every_query_passes_neo4js_own_cypher_analysis(tmp_path: Path) -> None:
    if shutil.which("node") is None or not LINTER.exists():
        why = ("Neo4j's Cypher linter is not installed (make install-dev puts "
               "@neo4j-cypher/language-support in .cypher-lint with npm)")
        if os.environ.get("MEDKG_REQUIRE_CYPHER_LINT") == "1":
            pytest.fail(why)
        pytest.skip(why)
    queries = sorted({q for q, _p in every_query()})
    listed = tmp_path / "queries.json"
    listed.write_text(json.dumps(queries), encoding="utf-8")
    done = subprocess.run(["node", str(Path(__file__).with_name("cypher_lint.mjs")),
                           str(listed)], capture_output=True, text=True, timeout=300,
                          cwd=REPO / ".cypher-lint", check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["checked"] == len(queries) and report["errors"] == []
    # The only warning: CALL { WITH ... } is deprecated in favour of CALL (x) { ... },
    # which Neo4j 5 before 5.23 does not parse; medkg keeps the form every 5.x reads.
    assert set(report["warnings"]) <= {
        "CALL subquery without a variable scope clause is deprecated. Use CALL (s, r, h, t) "
        "{ ... }"}
