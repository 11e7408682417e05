"""``medkg publish``: the graph's RDF on a SPARQL server (a private Virtuoso), sent
incrementally: a second publish sends nothing, a curator's decision and a deleted
document send only their change, a publish killed midway is finished by the next,
and the server's count agrees with the graph's each time."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from medkg.errors import ConfigError
from medkg.model import Layer, ReviewAction
from medkg.pipeline.review import Request
from medkg.store.sparql import SPARQLProtocolStore
from medkg.workspace import Workspace
from tests.conftest import copy_workspace, graph_store_url

pytestmark = pytest.mark.slow


def _server_lines(ws: Workspace, url: str) -> set[str]:
    """The server's quads in the workspace's graphs, as the journal writes them."""
    from medkg.publish import _line
    from medkg.store.projection import project

    graphs = sorted({q[3] for q in project(ws._tables())})
    from medkg.store.sparql import Endpoint

    server = SPARQLProtocolStore(Endpoint(query_url=url, update_url=url), graphs)
    try:
        values = " ".join(f"<{g}>" for g in graphs)
        _, rows = server.select(f"SELECT ?s ?p ?o ?g WHERE {{ VALUES ?g {{ {values} }} "
                                "GRAPH ?g { ?s ?p ?o } }")
        return {_line((s, p, o, g)) for s, p, o, g in rows}  # type: ignore[arg-type]
    finally:
        server.close()


def test_publish_sends_what_changed_and_the_server_agrees(
        built_workspace: Path, tmp_path: Path, sparql_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from medkg.publish import _line
    from medkg.store.projection import project

    root = copy_workspace(built_workspace, tmp_path / "ws")
    target = f"sparql+{sparql_url}"
    with Workspace.open(root) as ws:
        first = ws.publish(target, batch_size=500)
        assert first.verified and first.added == first.quads > 1000 and first.removed == 0
        assert _server_lines(ws, sparql_url) == {_line(q) for q in project(ws._tables())}
        again = ws.publish(target)
        assert (again.added, again.removed) == (0, 0) and again.verified
        statement = ws.store.triples(Layer.LITERATURE)[0]
        ws.review(Request(ReviewAction.REJECT, statement.id, "wrong"), "curator")
        decided = ws.publish(target)
        assert decided.verified and 0 < decided.added < 40 and 0 < decided.removed < 10
        doc = ws.store.document_ids(Layer.USER)[0]
        ws.delete_document(doc)
        deleted = ws.publish(target)
        assert deleted.verified and deleted.removed > 10
        assert _server_lines(ws, sparql_url) == {_line(q) for q in project(ws._tables())}
    # killed midway (the third insert fails): the next publish finishes the job
    other = copy_workspace(built_workspace, tmp_path / "ws2")
    calls = {"n": 0}
    run_update = SPARQLProtocolStore.run_update

    def dies_on_the_third(self: SPARQLProtocolStore, update: str) -> None:
        calls["n"] += update.startswith("INSERT DATA")
        if calls["n"] == 3:
            raise KeyboardInterrupt("killed")
        run_update(self, update)

    with Workspace.open(other) as ws:
        target2 = f"sparql+{sparql_url}?second"
        monkeypatch.setattr(SPARQLProtocolStore, "run_update", dies_on_the_third)
        with pytest.raises(KeyboardInterrupt):  # the same graph names as the first
            ws.publish(target2, batch_size=300, replace=True)
        monkeypatch.setattr(SPARQLProtocolStore, "run_update", run_update)
        finished = ws.publish(target2, batch_size=300)
        assert finished.verified and 0 < finished.added < finished.quads
        assert _server_lines(ws, sparql_url) == {_line(q) for q in project(ws._tables())}


def test_publish_through_the_graph_store_protocol_and_the_cli(
        built_workspace: Path, tmp_path: Path, sparql_url: str) -> None:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    result = CliRunner().invoke(app, ["publish", "--to", f"sparql+{sparql_url}",
                                      "--graph-store-url", graph_store_url(sparql_url),
                                      "-w", str(root)])
    assert result.exit_code == 0, result.output
    assert "the server's count agrees" in result.output
    with Workspace.open(root) as ws, pytest.raises(ConfigError, match="cannot publish"):
        ws.publish("ftp://localhost/graph")
