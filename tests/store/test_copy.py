"""``medkg store copy``: a workspace's graph moved to another backend arrives whole
(every count and every quad, IRIs rebased), and the workspace then answers,
reviews and exports on it as before."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rdflib import URIRef
from typer.testing import CliRunner

from medkg.cli import app
from medkg.config import StoreConfig
from medkg.errors import StoreError
from medkg.model import Layer, ReviewAction, ReviewState
from medkg.pipeline.review import Request
from medkg.store.copy import copy_graph, rebase
from medkg.store.registry import open_store
from medkg.workspace import Workspace
from tests.conftest import copy_workspace, store_config

pytestmark = pytest.mark.slow
QUESTION = "What treats type 2 diabetes?"


def test_copy_rebases_iris_and_keeps_every_quad(built_workspace: Path, tmp_path: Path) -> None:
    with Workspace.open(built_workspace, access="read") as ws:
        source = ws.store
        target = open_store(StoreConfig(backend="memory", base_iri="https://other.org/g/"),
                            tmp_path)
        seen: list[int] = []
        report = copy_graph(source, target, batch_size=500, progress=seen.append)
        assert report.verified and report.quads == source.counts().quads
        assert seen == sorted(seen) and len(seen) > 1 and seen[-1] == report.quads
        move = rebase(ws.settings.store.base_iri, "https://other.org/g/")
        assert sorted(map(str, ((move(s), p, move(o), move(g)) for s, p, o, g in
                                source.quads()))) == sorted(map(str, target.quads()))
        assert not any(str(t).startswith(ws.settings.store.base_iri)
                       for q in target.quads() for t in q if isinstance(t, URIRef))
        with pytest.raises(StoreError, match="already holds"):
            copy_graph(source, target)
        assert copy_graph(source, target, replace=True).verified


def test_a_copy_by_model_objects_keeps_every_object(built_workspace: Path,
                                                    tmp_path: Path) -> None:
    """What a property-graph target (Neo4j) gets, checked on a store that can run here."""
    with Workspace.open(built_workspace, access="read") as ws:
        source = ws.store
        target = open_store(StoreConfig(backend="memory", base_iri=ws.settings.store.base_iri),
                            tmp_path)
        report = copy_graph(source, target, batch_size=7, by_objects=True)
        assert report.by_objects and report.verified, report.differences()
        for layer in (Layer.USER, Layer.LITERATURE):
            assert target.entities(layer) == source.entities(layer)
            assert target.triples(layer) == source.triples(layer)
            for doc_id in source.document_ids(layer):
                assert target.document(doc_id) == source.document(doc_id)
                assert target.chunks(doc_id) == source.chunks(doc_id)
                assert target.stages(doc_id) == source.stages(doc_id)
        assert target.concepts() == source.concepts()
        assert target.links() == source.links()
        assert target.decisions() == source.decisions()


def test_a_workspace_moved_to_a_sparql_server_answers_reviews_and_exports(
        built_workspace: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    with Workspace.open(root) as ws:
        before = ws.ask(QUESTION)
        counts = ws.store.counts()
    target: StoreConfig = store_config("sparql", request, bulk=True)  # type: ignore[assignment]
    result = CliRunner().invoke(app, ["store", "copy", "--to", "sparql", "--url", target.url,
                                      "--graph-store-url", target.graph_store_url,
                                      "--base-iri", target.base_iri, "--switch",
                                      "-w", str(root)])
    assert result.exit_code == 0, result.output
    assert "every count agrees" in result.output
    with Workspace.open(root) as ws:
        assert ws.settings.store.backend == "sparql" and ws.store.counts() == counts
        after = ws.ask(QUESTION)
        assert after.text == before.text
        assert [c.chunk_id for c in after.citations] == [c.chunk_id for c in before.citations]
        statement = ws.store.triples(Layer.LITERATURE)[0]
        ws.review(Request(ReviewAction.REJECT, statement.id, "wrong"), "curator")
        assert ws.store.triple(statement.id).review is ReviewState.REJECTED
        report = ws.export(tmp_path / "out.nq", "nq", reviewed="all")
        assert report.edges > 0 and statement.id in (tmp_path / "out.nq").read_text()
    # Back to the embedded store, whose old copy is replaced.
    result = CliRunner().invoke(app, ["store", "copy", "--to", "oxigraph", "--replace",
                                      "--switch", "-w", str(root)])
    assert result.exit_code == 0, result.output
    with Workspace.open(root) as ws:
        assert ws.settings.store.backend == "oxigraph"
        assert ws.store.triple(statement.id).review is ReviewState.REJECTED
    refused = CliRunner().invoke(app, ["store", "copy", "--to", "oxigraph", "-w", str(root)])
    assert refused.exit_code == 1 and "already in that oxigraph store" in refused.output


def test_a_workspace_moved_to_postgres_answers_reviews_and_exports_as_before(
        built_workspace: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    with Workspace.open(root) as ws:
        before = {mode: ws.ask(QUESTION, mode=mode)
                  for mode in ("u-retrieval", "hybrid", "local", "traverse")}
        counts = ws.store.counts()
        exported = ws.export(tmp_path / "before.nq", "nq", reviewed="all")
    target: StoreConfig = store_config("postgres", request)  # type: ignore[assignment]
    result = CliRunner().invoke(app, ["store", "copy", "--to", "postgres", "--url", target.url,
                                      "--schema-name", target.schema_name, "--password-env",
                                      target.password_env, "--switch", "-w", str(root)])
    assert result.exit_code == 0, result.output
    assert "every count agrees" in result.output
    with Workspace.open(root) as ws:
        assert ws.settings.store.backend == "postgres" and ws.store.counts() == counts
        for mode, answer in before.items():
            after = ws.ask(QUESTION, mode=mode)
            assert after.text == answer.text, mode
            assert [c.chunk_id for c in after.citations] == [
                c.chunk_id for c in answer.citations], mode
        report = ws.export(tmp_path / "after.nq", "nq", reviewed="all")
        assert report.edges == exported.edges
        assert sorted((tmp_path / "after.nq").read_text().splitlines()) == sorted(
            (tmp_path / "before.nq").read_text().splitlines())
        statement = ws.store.triples(Layer.LITERATURE)[0]
        ws.review(Request(ReviewAction.REJECT, statement.id, "wrong"), "curator")
        assert ws.store.triple(statement.id).review is ReviewState.REJECTED
    assert os.environ[target.password_env] not in (root / "medkg.toml").read_text()
