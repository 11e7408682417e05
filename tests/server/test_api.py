"""The HTTP API through the real app (FastAPI's TestClient over a built
workspace): tokens, review actions, the audit log, documents, ask, export, and
the server's hold on its workspace."""

from __future__ import annotations

import json
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from medkg.cli import app as cli
from medkg.cli.serve import check_host
from medkg.errors import WorkspaceError
from medkg.layout import WorkspaceLayout
from medkg.server.access import add_token
from medkg.server.app import create_app
from medkg.workspace import Workspace
from tests.conftest import copy_workspace

pytestmark = pytest.mark.slow
runner = CliRunner()


@pytest.fixture
def served(built_workspace: Path, tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str],
                                                                    Path]]:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    token = add_token(WorkspaceLayout(root), "Dr Ada")
    with Workspace.open(root) as ws, TestClient(create_app(ws)) as client:
        yield client, {"Authorization": f"Bearer {token}"}, root


def test_every_endpoint_needs_a_valid_token(served: tuple[TestClient, dict[str, str], Path]
                                            ) -> None:
    client, auth, _root = served
    paths = client.get("/openapi.json").json()["paths"]
    assert len(paths) >= 12
    for path, methods in paths.items():
        url = path.replace("{document_id}", "doc-x").replace("{triple_id}", "tri-x") \
            .replace("{entity_id}", "ent-x").replace("{decision_id}", "rev-x")
        for method in methods:
            for headers in ({}, {"Authorization": "Bearer wrong"},
                            {"Authorization": auth["Authorization"] + "x"}):
                got = client.request(method, url, headers=headers)
                assert got.status_code == 401, (method, path, headers, got.text)
                assert got.headers["www-authenticate"] == "Bearer"
    assert client.get("/api/me", headers=auth).json()["reviewer"] == "Dr Ada"
    page = client.get("/")  # the page itself holds no data
    assert page.status_code == 200 and "script-src 'self'" in page.headers[
        "content-security-policy"]


def test_token_file_is_private_and_holds_no_token(built_workspace: Path, tmp_path: Path) -> None:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    token = add_token(WorkspaceLayout(root), "ann")
    path = WorkspaceLayout(root).tokens
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert token not in path.read_text()


def test_only_loopback_unless_asked() -> None:
    for host in ("127.0.0.1", "::1", "localhost"):
        check_host(host, allow_remote=False)
    for host in ("0.0.0.0", "192.168.1.20", "::"):
        with pytest.raises(WorkspaceError, match="reachable from other machines"):
            check_host(host, allow_remote=False)
        check_host(host, allow_remote=True)
    result = runner.invoke(cli, ["serve", "--host", "0.0.0.0", "-w", "/nonexistent"])
    assert result.exit_code == 1 and "--allow-remote" in result.output


def test_review_through_the_api(served: tuple[TestClient, dict[str, str], Path]) -> None:
    client, auth, _root = served
    page = client.get("/api/queue", params={"limit": 5}, headers=auth).json()
    assert page["total"] >= 5
    assert [i["priority"] for i in page["items"]] == \
        sorted((i["priority"] for i in page["items"]), reverse=True)
    first, second, third = [i for i in page["items"] if i["kind"] == "statement"][:3]
    ok = client.post("/api/review", headers=auth,
                     json={"action": "accept", "target": first["id"]})
    assert ok.status_code == 200, ok.text
    assert ok.json()["reviewer"] == "Dr Ada"
    no = client.post("/api/review", headers=auth,
                     json={"action": "reject", "target": second["id"], "reason": "not stated"})
    view = client.get(f"/api/statements/{third['id']}", headers=auth).json()
    predicate = "causes" if view["triple"]["predicate"] != "causes" else "treats"
    edit = {"head": view["triple"]["head"], "tail": view["triple"]["tail"],
            "predicate": predicate, "qualifiers": view["triple"]["qualifiers"]}
    ed = client.post("/api/review", headers=auth,
                     json={"action": "edit", "target": third["id"], "edit": edit})
    assert no.status_code == ed.status_code == 200, (no.text, ed.text)
    states = {i: client.get(f"/api/statements/{i}", headers=auth).json()["triple"]["review"]
              for i in (first["id"], second["id"], third["id"])}
    assert states == {first["id"]: "accepted", second["id"]: "rejected",
                      third["id"]: "edited"}
    revised = client.get(f"/api/statements/{third['id']}", headers=auth).json()["revised_as"]
    assert len(revised) == 1
    log = client.get("/api/audit", headers=auth).json()
    assert [(d["action"], d["reviewer"]) for d in log] == \
        [("accept", "Dr Ada"), ("reject", "Dr Ada"), ("edit", "Dr Ada")]
    assert client.get("/api/audit", params={"target": second["id"]},
                      headers=auth).json()[0]["reason"] == "not stated"
    # Errors are 4xx with a message, never 500; a bad item in a bulk records nothing.
    bad = client.post("/api/review/bulk", headers=auth, json={"decisions": [
        {"action": "accept", "target": page["items"][3]["id"]},
        {"action": "accept", "target": "tri-does-not-exist"}]})
    assert bad.status_code == 400 and "no statement" in bad.json()["error"]
    assert len(client.get("/api/audit", headers=auth).json()) == 3
    assert client.post("/api/review", headers=auth, json={
        "action": "edit", "target": third["id"], "edit": {**edit, "predicate":
                                                         view["triple"]["predicate"]}}
    ).status_code == 400  # an edit that changes nothing
    assert client.post("/api/review", headers=auth, json={
        "action": "rename", "target": first["head"], "values": {"name": ""}}).status_code == 400
    # Undo the rejection: proposed again, and both decisions stay on record.
    undo = client.post(f"/api/review/{no.json()['id']}/undo", headers=auth, json={})
    assert undo.status_code == 200, undo.text
    assert client.get(f"/api/statements/{second['id']}", headers=auth).json()["triple"][
        "review"] == "proposed"
    again = client.post(f"/api/review/{no.json()['id']}/undo", headers=auth, json={})
    assert again.status_code == 400 and "undone already" in again.json()["error"]
    # Export honours the decisions.
    accepted = client.get("/api/export", headers=auth,
                          params={"format": "nq", "reviewed": "accepted"}).text
    def statement(triple_id: str) -> str:  # the statement node's type quad
        return f"/statement/{triple_id}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"

    assert statement(first["id"]) in accepted and statement(second["id"]) not in accepted
    assert statement(revised[0]) in accepted  # the curator's version counts as accepted
    every = client.get("/api/export", headers=auth, params={"format": "nq",
                                                             "reviewed": "all"}).text
    assert statement(second["id"]) in every and "ReviewDecision" in every


def test_documents_entities_and_ask(served: tuple[TestClient, dict[str, str], Path],
                                    tmp_path: Path) -> None:
    client, auth, _root = served
    docs = client.get("/api/documents", headers=auth).json()
    assert {d["layer"] for d in docs} == {"user", "literature"}
    hostile = next(d for d in docs if d["source"].endswith("note-hostile.txt"))
    text = client.get(f"/api/documents/{hostile['id']}", headers=auth).json()["text"]
    assert "<script>window.__pwned = 1</script>" in text  # data, returned as written
    assert client.get("/api/documents/doc-nope", headers=auth).status_code == 404
    up = client.post("/api/documents", headers=auth, data={"layer": "user"},
                     files={"file": ("new note.txt", b"Aspirin prevents stroke.", "text/plain")})
    assert up.status_code == 200 and up.json()["documents"] == 1, up.text
    empty = client.post("/api/documents", headers=auth, data={"layer": "user"},
                        files={"file": ("empty.txt", b"", "text/plain")})
    assert empty.status_code == 200 and empty.json()["failed"], empty.text
    first = next(d for d in client.get("/api/documents", headers=auth).json()
                 if d["source"] == "upload:new note.txt")
    again = client.post("/api/documents", headers=auth, data={"layer": "user"},
                        files={"file": ("new note.txt", b"Aspirin prevents stroke in adults.",
                                        "text/plain")})
    assert again.status_code == 200 and again.json()["replaced"] == [first["id"]], again.text
    built = client.post("/api/build", headers=auth)
    assert built.status_code == 200 and built.json()["documents"] == 1, built.text
    [new] = [d for d in client.get("/api/documents", headers=auth).json()
             if d["source"] == "upload:new note.txt"]
    gone = client.delete(f"/api/documents/{new['id']}", headers=auth)
    assert gone.status_code == 200 and gone.json()["chunks"] >= 1
    answer = client.post("/api/ask", headers=auth,
                         json={"question": "What treats type 2 diabetes?",
                               "show_proposed": True}).json()
    assert answer["citations"] and answer["definitions"] and "trace" in answer
    stated = [*answer["facts"], *answer["proposed"]]
    assert all(f["confidence"] < 0.8 for f in answer["proposed"])
    entity = client.get(f"/api/entities/{stated[0]['head_id']}", headers=auth).json()
    assert entity["entity"]["name"] and entity["triples"]
    assert client.post("/api/ask", headers=auth, json={"question": ""}).status_code == 422


def test_a_cli_command_on_a_served_workspace_names_the_server(built_workspace: Path,
                                                              tmp_path: Path) -> None:
    """A command that writes is refused, naming the server; one that only reads
    reads what the server has committed (the tables take readers beside a writer)."""
    root = copy_workspace(built_workspace, tmp_path / "ws")
    other = subprocess.Popen(["sleep", "60"])
    try:
        WorkspaceLayout(root).server.write_text(json.dumps(
            {"url": "http://127.0.0.1:8765/", "pid": other.pid}))
        result = runner.invoke(cli, ["build", "-w", str(root)])
        assert result.exit_code == 1
        assert "a medkg server owns this workspace: http://127.0.0.1:8765/" in result.output
        assert "Traceback" not in result.output and "lock" not in result.output.lower()
        read = runner.invoke(cli, ["stats", "-w", str(root)])
        assert read.exit_code == 0, read.output
        assert "the medkg server at http://127.0.0.1:8765/" in read.output
        assert "literature.triples" in read.output
    finally:
        other.kill()
        other.wait()
    assert runner.invoke(cli, ["stats", "-w", str(root)]).exit_code == 0  # it went: a stale file
