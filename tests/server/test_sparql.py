"""``/sparql``: the SPARQL 1.1 Protocol on the live graph, read-only, behind the
bearer token; and ``medkg sparql`` on the command line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from medkg.cli import app as cli
from medkg.layout import WorkspaceLayout
from medkg.model import Layer, ReviewAction
from medkg.pipeline.review import Request
from medkg.server.access import add_token
from medkg.server.app import create_app
from medkg.workspace import Workspace
from tests.conftest import copy_workspace

pytestmark = pytest.mark.slow
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"


@pytest.fixture
def served(built_workspace: Path, tmp_path: Path
           ) -> Iterator[tuple[TestClient, dict[str, str], Workspace]]:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    token = add_token(WorkspaceLayout(root), "Dr Ada")
    with Workspace.open(root) as ws, TestClient(create_app(ws)) as client:
        yield client, {"Authorization": f"Bearer {token}"}, ws


def _count(body: bytes) -> int:
    return int(json.loads(body)["results"]["bindings"][0]["n"]["value"])


def test_the_endpoint_answers_on_the_live_graph(
        served: tuple[TestClient, dict[str, str], Workspace]) -> None:
    client, auth, ws = served
    assert client.get("/sparql", params={"query": COUNT}).status_code == 401
    got = client.get("/sparql", params={"query": COUNT}, headers=auth)
    assert got.status_code == 200, got.text
    assert got.headers["content-type"].startswith("application/sparql-results+json")
    assert _count(got.content) == ws.store.counts().quads
    # POST, as a form and as a query body; CSV when Accept asks for it
    form = client.post("/sparql", data={"query": COUNT}, headers=auth)
    raw = client.post("/sparql", content=COUNT, headers={
        **auth, "Content-Type": "application/sparql-query", "Accept": "text/csv"})
    assert _count(form.content) == _count(got.content)
    assert raw.headers["content-type"].startswith("text/csv") and raw.text.startswith("n")
    # a curator's decision is in the next answer: the projection follows the tables
    statement = ws.store.triples(Layer.LITERATURE)[0]
    ws.review(Request(ReviewAction.REJECT, statement.id, "wrong"), "curator")
    query = ("PREFIX mkg: <https://w3id.org/medkg/vocab#> SELECT ?state WHERE { "
             f'?s mkg:id "{statement.id}" ; mkg:reviewState ?state }}')
    states = json.loads(client.get("/sparql", params={"query": query}, headers=auth).content)
    assert [b["state"]["value"] for b in states["results"]["bindings"]] == ["rejected"]


def test_updates_are_refused(served: tuple[TestClient, dict[str, str], Workspace]) -> None:
    client, auth, ws = served
    before = ws.store.counts()
    update = "INSERT DATA { GRAPH <https://x.org/g> { <https://x.org/a> <https://x.org/b> 1 } }"
    for got in (client.post("/sparql", data={"update": update}, headers=auth),
                client.post("/sparql", content=update, headers={
                    **auth, "Content-Type": "application/sparql-update"}),
                client.get("/sparql", params={"update": update}, headers=auth)):
        assert got.status_code == 403, got.text
    smuggled = client.get("/sparql", params={"query": update}, headers=auth)
    assert smuggled.status_code == 400 and "not a SPARQL query" in smuggled.json()["error"]
    assert client.get("/sparql", headers=auth).status_code == 400
    assert ws.store.counts() == before


def test_the_command_line_queries_the_graph(built_workspace: Path, tmp_path: Path) -> None:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    done = CliRunner().invoke(cli, ["sparql", COUNT, "-w", str(root)])
    assert done.exit_code == 0, done.output
    with Workspace.open(root) as ws:
        assert _count(done.stdout.encode()) == ws.store.counts().quads
    csv = CliRunner().invoke(cli, ["sparql", COUNT, "--format", "csv", "-w", str(root)])
    assert csv.exit_code == 0 and csv.stdout.splitlines()[0] == "n"
    rebuilt = CliRunner().invoke(cli, ["rdf", "rebuild", "-w", str(root)])
    assert rebuilt.exit_code == 0 and "quads" in rebuilt.stdout
    refused = CliRunner().invoke(cli, ["sparql", "DELETE WHERE { ?s ?p ?o }", "-w", str(root)])
    assert refused.exit_code == 1 and "not a SPARQL query" in refused.output
