"""Scripts never scrape tables: every command that lists or counts has --json, in
the same shape as the HTTP API's answer where the API has one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from medkg.cli import app as cli
from medkg.layout import WorkspaceLayout
from medkg.pipeline.listing import RuleSet, Stats, Status, VocabularyGroup
from medkg.server.access import add_token
from medkg.server.app import create_app
from medkg.workspace import Workspace
from tests.conftest import copy_workspace

pytestmark = pytest.mark.slow
runner = CliRunner()


def _json(*args: str) -> Any:
    done = runner.invoke(cli, [*args, "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.output)


def test_listing_commands_print_the_apis_json(built_workspace: Path, tmp_path: Path) -> None:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    w = ("-w", str(root))
    printed = {name: _json(*command, *w) for name, command in (
        ("documents", ("documents",)), ("stats", ("stats",)),
        ("merges", ("merges", "list")), ("status", ("status",)),
        ("vocab", ("vocab", "list")))}
    rules = RuleSet.model_validate(_json("rules", "list"))
    auth = {"Authorization": f"Bearer {add_token(WorkspaceLayout(root), 'script')}"}
    with Workspace.open(root) as ws, TestClient(create_app(ws)) as client:
        for name in ("documents", "stats", "merges"):
            served = client.get(f"/api/{name}", headers=auth)
            assert served.status_code == 200 and served.json() == printed[name], name
        counts = ws.store.counts()
    stats = Stats.model_validate(printed["stats"])
    assert (stats.quads, stats.user.documents, stats.literature.triples, stats.links) == (
        counts.quads, counts.user.documents, counts.literature.triples, counts.links)
    documents = printed["documents"]
    assert isinstance(documents, list) and len(documents) == counts.user.documents + \
        counts.literature.documents
    assert all("@" not in stage for d in documents for stage in d["stages"])
    status = Status.model_validate(printed["status"])
    assert status.to_extract == 0 and len(status.current) == len(documents)
    assert status.links_current
    vocab = [VocabularyGroup.model_validate(v) for v in printed["vocab"]]
    assert sum(v.concepts for v in vocab) == counts.concepts
    assert len(rules.rules) >= 30 and all(r.id for r in rules.rules)


def test_json_of_an_empty_workspace(tmp_path: Path) -> None:
    Workspace.create(tmp_path / "ws").close()
    w = ("-w", str(tmp_path / "ws"))
    assert _json("documents", *w) == [] and _json("merges", "list", *w) == []
    assert Stats.model_validate(_json("stats", *w)).quads >= 0
    assert Status.model_validate(_json("status", *w)).to_extract == 0
