"""``medkg publish --to neo4j://``: the property graph sent incrementally. No Neo4j
server installs here, so the driver is a recording one that applies the five
kinds of write the publisher sends to an in-memory graph (plumbing: what was
sent, in what order, what a resumed publish sends again); every query it sent
is then checked by Neo4j's own Cypher front end."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from medkg.export.formats import export_format
from medkg.export.propertygraph import PEdge, PNode, property_graph
from medkg.export.view import ExportFilter, ExportReport, GraphView
from medkg.model import Layer, ReviewAction
from medkg.pipeline.review import Request
from medkg.store.vocab import IRIs
from medkg.workspace import Workspace
from tests.conftest import REPO, copy_workspace
from tests.store.test_neo4j_plumbing import LINTER

TARGET = "neo4j://graph.example:7687"


class GraphDriver:
    """Keeps the nodes and relationships the publisher's writes leave behind."""

    def __init__(self, fail_on_write: int = 0) -> None:
        self.nodes: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
        self.edges: dict[str, tuple[str, str, str, dict[str, Any]]] = {}
        self.queries: list[tuple[str, dict[str, Any]]] = []
        self.writes = 0
        self.fail_on_write = fail_on_write
        self.closed = False

    # -- the driver's surface ------------------------------------------------------

    def execute_query(self, query: str, params: dict[str, Any], *, database_: str,
                      routing_: str = "w") -> tuple[list[dict[str, Any]], None, list[str]]:
        self.queries.append((query, params))
        graph = params.get("graph")
        mine = [k for k in self.nodes if k[0] == graph]
        if "LIMIT $size DETACH DELETE n" in query:
            for key in mine[: params["size"]]:
                self._drop(key)
            return [{"n": min(len(mine), params["size"])}], None, ["n"]
        if "RETURN count(n)" in query:
            return [{"n": len(mine)}], None, ["n"]
        if "RETURN count(e)" in query:
            return [{"n": sum(1 for e in self.edges.values() if e[3]["graph"] == graph)}], \
                None, ["n"]
        assert query.startswith("CREATE CONSTRAINT"), query
        return [], None, []

    def session(self, database: str) -> GraphDriver:
        assert database == "neo4j"
        return self

    def __enter__(self) -> GraphDriver:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute_write(self, work: Any) -> Any:
        self.writes += 1
        if self.writes == self.fail_on_write:
            raise KeyboardInterrupt("killed")
        return work(self)

    def run(self, query: str, params: dict[str, Any]) -> GraphDriver:
        self.queries.append((query, params))
        graph = params["graph"]
        if "MERGE (n:MedkgNode" in query:
            labels = re.search(r"n:([A-Za-z_:]+)$", query)
            assert labels is not None
            for r in params["rows"]:
                self.nodes[(graph, r["id"])] = (labels.group(1), dict(r["props"]))
        elif "MERGE (a)-[e:" in query:
            rel = re.search(r"\[e:(\w+) ", query)
            assert rel is not None
            for r in params["rows"]:
                if (graph, r["source"]) in self.nodes and (graph, r["target"]) in self.nodes:
                    self.edges[r["id"]] = (rel.group(1), r["source"], r["target"],
                                           {**r["props"], "graph": graph})
        elif query.endswith("DETACH DELETE n"):
            for node_id in params["ids"]:
                self._drop((graph, node_id))
        elif query.endswith("DELETE e"):
            for edge_id in params["ids"]:
                self.edges.pop(edge_id, None)
        else:
            raise AssertionError(f"unexpected write: {query}")
        return self

    def consume(self) -> None:
        return None

    def close(self) -> None:
        self.closed = True

    def _drop(self, key: tuple[str, str]) -> None:
        self.nodes.pop(key, None)
        for edge_id in [i for i, e in self.edges.items() if key[1] in (e[1], e[2])]:
            del self.edges[edge_id]

    # -- what a test compares --------------------------------------------------------

    def graph(self) -> tuple[dict[str, tuple[str, dict[str, Any]]], dict[str, tuple[Any, ...]]]:
        return ({k[1]: v for k, v in self.nodes.items()},
                {i: (t, s, o, {k: v for k, v in p.items() if k != "graph"})
                 for i, (t, s, o, p) in self.edges.items()})


def _expected(ws: Workspace) -> tuple[dict[str, tuple[str, dict[str, Any]]],
                                      dict[str, tuple[Any, ...]]]:
    """The mapping the publisher reads, as :meth:`GraphDriver.graph` shows it."""
    flt = ExportFilter(include_negated=export_format("neo4j-csv").negated_by_default)
    view = GraphView(ws.store, IRIs(ws.settings.store.base_iri), flt)
    nodes, edges = {}, {}
    for item in property_graph(view, ExportReport("x", "neo4j")):
        if isinstance(item, PNode):
            nodes[item.id] = (":".join(item.labels), item.props)
        elif isinstance(item, PEdge):
            edges[item.id] = (item.type, item.source, item.target, item.props)
    return nodes, edges


def _connect_to(monkeypatch: pytest.MonkeyPatch, driver: GraphDriver) -> None:
    monkeypatch.setattr("medkg.publish_neo4j.connect", lambda uri, user, env: driver)


def test_publish_to_neo4j_sends_what_changed(built_workspace: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    driver = GraphDriver()
    _connect_to(monkeypatch, driver)
    root = copy_workspace(built_workspace, tmp_path / "ws")
    with Workspace.open(root) as ws:
        first = ws.publish(TARGET, batch_size=40)
        assert first.verified and first.added == first.quads > 50 and first.removed == 0
        assert driver.graph() == _expected(ws) and driver.closed
        again = ws.publish(TARGET)
        assert (again.added, again.removed) == (0, 0) and again.verified
        statement = ws.store.triples(Layer.LITERATURE)[0]
        ws.review(Request(ReviewAction.REJECT, statement.id, "wrong"), "curator")
        decided = ws.publish(TARGET)
        assert decided.verified and decided.removed >= 1 and decided.added <= 5
        assert statement.id not in driver.edges  # a rejected statement leaves Neo4j
        ws.delete_document(ws.store.document_ids(Layer.USER)[0])
        deleted = ws.publish(TARGET)
        assert deleted.verified and deleted.removed > 1
        assert driver.graph() == _expected(ws)


def test_publish_killed_midway_is_finished_by_the_next(built_workspace: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    driver = GraphDriver(fail_on_write=3)
    _connect_to(monkeypatch, driver)
    root = copy_workspace(built_workspace, tmp_path / "ws")
    with Workspace.open(root) as ws:
        with pytest.raises(KeyboardInterrupt):
            ws.publish(TARGET, batch_size=20)
        sent_before = len(driver.nodes) + len(driver.edges)
        assert sent_before > 0
        resumed = ws.publish(TARGET, batch_size=20)
        # the two batches Neo4j committed are not sent again
        assert resumed.verified and resumed.added == resumed.quads - sent_before
        assert driver.graph() == _expected(ws)
        replaced = ws.publish(TARGET, replace=True)
        assert replaced.verified and replaced.added == replaced.quads


def test_neo4j_errors_are_clear(built_workspace: Path, tmp_path: Path) -> None:
    from medkg.errors import StoreError

    pytest.importorskip("neo4j")
    root = copy_workspace(built_workspace, tmp_path / "ws")
    with Workspace.open(root) as ws, pytest.raises(StoreError, match="Neo4j at neo4j://"):
        ws.publish("neo4j://127.0.0.1:9")  # nothing listens there


def test_every_publish_query_passes_neo4js_own_cypher_analysis(
        built_workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    driver = GraphDriver()
    _connect_to(monkeypatch, driver)
    root = copy_workspace(built_workspace, tmp_path / "ws")
    with Workspace.open(root) as ws:
        ws.publish(TARGET, batch_size=40)
        ws.delete_document(ws.store.document_ids(Layer.LITERATURE)[0])
        ws.publish(TARGET, replace=True)
        ws.delete_document(ws.store.document_ids(Layer.USER)[0])
        ws.publish(TARGET)
    for query, params in driver.queries:
        assert set(re.findall(r"\$(\w+)", query)) <= set(params), query
    if shutil.which("node") is None or not LINTER.exists():
        why = "Neo4j's Cypher linter is not installed (make install-dev puts it in .cypher-lint)"
        if os.environ.get("MEDKG_REQUIRE_CYPHER_LINT") == "1":
            pytest.fail(why)
        pytest.skip(why)
    queries = sorted({q for q, _p in driver.queries})
    assert any("DETACH DELETE n" in q for q in queries) and any("DELETE e" in q for q in queries)
    listed = tmp_path / "queries.json"
    listed.write_text(json.dumps(queries), encoding="utf-8")
    done = subprocess.run(["node", str(REPO / "tests" / "store" / "cypher_lint.mjs"),
                           str(listed)], capture_output=True, text=True, timeout=300,
                          cwd=REPO / ".cypher-lint", check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["checked"] == len(queries) and report["errors"] == [], report["errors"]
