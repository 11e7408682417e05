"""The sparql backend: what reaches the server, and hostile values against a real one.

The contract suite (test_contract.py) runs the whole GraphStore behaviour on
Virtuoso; here: every value on the SPARQL path is data, never query text
(checked against the server's whole content), and the adapter's plumbing
(batches, authentication, errors) through httpx's mock transport.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import RDF, Literal, URIRef

from medkg.config import StoreConfig
from medkg.errors import ConfigError, NotFoundError, StoreError
from medkg.model import (
    Chunk,
    Decision,
    Document,
    Layer,
    ReviewAction,
    ReviewTarget,
)
from medkg.store.base import GraphStore
from medkg.store.registry import open_store
from medkg.store.sparql import Endpoint, SPARQLProtocolStore, sparql_term
from medkg.text import clean_text
from tests.conftest import store_config

HOSTILE = [
    'x" } ; DROP ALL ; INSERT DATA { GRAPH <urn:x> { <a:b> <a:c> "d" } } #',
    "line one\nline two\r\n\ttab } }}} {{",
    "back\\slash \\\" \\u0022 \\n ''' \"\"\"",
    "CLEAR ALL", "DROP SILENT GRAPH <urn:g> ;", "> < ^^ @en ?g $s",
    "unicode: é 中文 العربية \U0001F600 \u2028 \u2029 \x7f \x00 end",
]


def server_total(url: str) -> int:
    """Every quad the server holds, in every graph (its own system graphs too)."""
    response = httpx.post(url, data={"query": "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g "
                                              "{ ?s ?p ?o } }"},
                          headers={"Accept": "application/sparql-results+json"})
    return int(response.json()["results"]["bindings"][0]["n"]["value"])


@pytest.fixture(params=["update", "graph-store"])
def sparql(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    """Inserts as SPARQL updates, or as Graph Store Protocol POSTs."""
    s = open_store(store_config("sparql", request, bulk=request.param == "graph-store"),  # type: ignore[arg-type]
                   tmp_path)
    yield s
    s.close()


def test_hostile_values_are_data_and_leave_the_server_unchanged(
        sparql: GraphStore, sparql_url: str) -> None:
    before = server_total(sparql_url)
    for i, text in enumerate(HOSTILE):
        doc = Document.create(layer=Layer.USER, title=text, source=f"{text}#{i}",
                              media_type="text/plain", text=f"{i} {text}")
        chunk = Chunk.create(doc, 0, 0, len(doc.text))
        sparql.add_document(doc, [chunk])
        back = sparql.document(doc.id)
        assert (back.title, back.source, back.text) == (doc.title, doc.source, doc.text)
        assert sparql.chunks(doc.id) == [chunk]
        decision = Decision(id=f"rev-{i}", target_kind=ReviewTarget.STATEMENT,
                            target=f"stmt-{i}",
                            action=ReviewAction.REJECT, reviewer=text, reason=text,
                            at=datetime(2026, 12, 2, tzinfo=UTC))
        sparql.add_decisions([decision])
        assert [(d.reason, d.reviewer) for d in sparql.decisions(target=f"stmt-{i}")] == [
            (text, text)]
        assert sparql.decisions(target=text) == []
        # Reads with hostile values find nothing, and change nothing.
        assert not sparql.has_document(text)
        assert sparql.links(source=text) == [] and sparql.links(target=text) == []
        assert sparql.entities_of_concepts([text]) == []
        with pytest.raises(NotFoundError):
            sparql.concept(text)
        with pytest.raises(NotFoundError):
            sparql.entity(text)
        sparql.delete_document(doc.id)
        assert not sparql.has_document(doc.id)
    assert sparql.counts().user.documents == 0
    assert sparql.counts().decisions == len(HOSTILE)
    # What was written is all that changed on the server: the decisions.
    assert server_total(sparql_url) == before + len(list(sparql.quads()))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=200))
def test_any_text_round_trips_through_the_server(sparql: GraphStore, text: str) -> None:
    doc = Document.create(layer=Layer.LITERATURE, title=text, source=text,
                          media_type="text/plain", text=text)
    sparql.add_document(doc, [Chunk.create(doc, 0, 0, len(text))])
    back = sparql.document(doc.id)
    carried = clean_text(text)  # what no format can carry is replaced at entry
    assert (back.title, back.source, back.text) == (carried, carried, carried)
    sparql.delete_document(doc.id)
    assert not sparql.has_document(doc.id)


def test_prepared_queries_and_bound_updates_fall_back_to_rdflib(sparql: GraphStore) -> None:
    """What the server is not sent (a prepared query, an update with bindings), rdflib
    evaluates itself over the store's own reads and writes: same answers."""
    from rdflib.plugins.sparql import prepareQuery

    doc = Document.create(layer=Layer.USER, title="t", source="s", media_type="text/plain",
                          text="x")
    sparql.add_document(doc, [Chunk.create(doc, 0, 0, 1)])
    ds = sparql._ds  # type: ignore[attr-defined]
    node = sparql.iris.node("doc", doc.id)  # type: ignore[attr-defined]
    text = "SELECT ?t WHERE { GRAPH ?g { ?d <http://purl.org/dc/terms/title> ?t } }"
    assert [str(r[0]) for r in ds.query(prepareQuery(text), initBindings={"d": node})] == ["t"]
    graph = sparql.iris.graph(Layer.USER)  # type: ignore[attr-defined]
    ds.update("INSERT { GRAPH ?g { ?d <urn:x:flag> true } } WHERE {}",
              initBindings={"d": node, "g": graph})
    assert (node, URIRef("urn:x:flag"), Literal(True)) in ds.graph(graph)


def test_sparql_term_never_lets_text_out_of_its_literal() -> None:
    from rdflib.plugins.sparql import prepareQuery

    for text in HOSTILE:
        query = f"SELECT ?s WHERE {{ ?s <urn:p> {sparql_term(Literal(text))} }}"
        parsed = prepareQuery(query)  # one triple pattern: the text stayed a literal
        (triple,) = parsed.algebra.p.p.triples
        assert isinstance(triple[2], Literal)
    with pytest.raises(StoreError):
        sparql_term(URIRef('urn:x> } DROP ALL { <urn:y'))


# -- plumbing, through httpx's mock transport (no server) ------------------------

G = URIRef("https://example.org/kg/graph/user")


class Recorder:
    def __init__(self, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.status, self.headers = status, headers or {}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        body = {"head": {"vars": []}, "results": {"bindings": []}}
        return httpx.Response(self.status, headers=self.headers, content=json.dumps(body))

    def form(self, i: int) -> dict[str, list[str]]:
        return parse_qs(self.requests[i].content.decode())


def mock_store(recorder: Recorder, batch_size: int = 3, **endpoint: str) -> SPARQLProtocolStore:
    return SPARQLProtocolStore(Endpoint("http://s/q", "http://s/u", **endpoint), [G],
                               batch_size=batch_size, transport=httpx.MockTransport(recorder))


def test_writes_go_in_batches_with_the_types_last() -> None:
    rec = Recorder()
    store = mock_store(rec)
    quads = [(URIRef(f"urn:n{i}"), RDF.type if i % 2 else URIRef("urn:p"), Literal(i), G)
             for i in range(7)]
    store.insert_quads(quads)
    assert len(rec.requests) == 3 and all(r.url == "http://s/u" for r in rec.requests)
    updates = [rec.form(i)["update"][0] for i in range(3)]
    assert all(u.startswith("INSERT DATA { GRAPH <https://example.org/kg/graph/user>")
               for u in updates)
    # A node becomes visible (its rdf:type) only in the last requests.
    assert [u.count(str(RDF.type)) for u in updates] == [0, 2, 1]


def test_credentials_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = Recorder()
    monkeypatch.setenv("KG_PASSWORD", "s3cret")
    mock_store(rec, user="medkg", password_env="KG_PASSWORD").select("SELECT * {}")
    assert rec.requests[0].headers["Authorization"].startswith("Basic ")
    monkeypatch.delenv("KG_PASSWORD")
    with pytest.raises(ConfigError, match="KG_PASSWORD"):
        mock_store(rec, user="medkg", password_env="KG_PASSWORD")
    with pytest.raises(ConfigError, match="password_env"):
        mock_store(rec, user="medkg")
    with pytest.raises(ValueError):
        StoreConfig(backend="sparql", url="http://s/q", password_env="not a name; rm -rf")


def test_server_errors_are_clear() -> None:
    with pytest.raises(StoreError, match="refused"):
        mock_store(Recorder(401)).select("SELECT * {}")
    with pytest.raises(StoreError, match="cut a result at 10000"):
        mock_store(Recorder(headers={"X-SPARQL-MaxRows": "10000"})).select("SELECT * {}")
    with pytest.raises(StoreError, match="HTTP 500"):
        mock_store(Recorder(500)).run_update("INSERT DATA {}")
    unreachable = SPARQLProtocolStore(Endpoint("http://127.0.0.1:9/q", "http://127.0.0.1:9/u"),
                                      [G])
    with pytest.raises(StoreError, match="did not answer"):
        unreachable.select("SELECT * {}")
    with pytest.raises(ConfigError, match=r"store\.url"):
        open_store(StoreConfig(backend="sparql"), Path("."))


def test_a_read_only_store_refuses_writes(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    cfg = store_config("sparql", request)
    store = open_store(cfg, tmp_path, read_only=True)  # type: ignore[arg-type]
    doc = Document.create(layer=Layer.USER, title="t", source="s", media_type="text/plain",
                          text="text")
    with pytest.raises(StoreError, match="read-only"):
        store.add_document(doc, [Chunk.create(doc, 0, 0, 4)])
    assert store.document_ids() == []
