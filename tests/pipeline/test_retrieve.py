"""Retrieval only (``medkg retrieve``, ``/api/retrieve``): the evidence behind an
answer, every marker resolving to a passage of the store, from one function
behind the Python API, the CLI and the HTTP API."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from medkg.cli import app as cli
from medkg.errors import MedKGError
from medkg.layout import WorkspaceLayout
from medkg.retrieval.evidence import Retrieval
from medkg.server.access import add_token
from medkg.server.app import create_app
from medkg.workspace import Workspace
from tests.conftest import copy_workspace

pytestmark = pytest.mark.slow
QUESTION = "What are the side effects of lisinopril?"


@pytest.fixture(scope="module")
def ws(built_workspace: Path) -> Iterator[Workspace]:
    with Workspace.open(built_workspace, access="read") as opened:
        yield opened


def test_every_marker_resolves_to_the_stored_text(ws: Workspace) -> None:
    got = ws.retrieve(QUESTION, top=3, show_proposed=True)
    assert got.answerable and got.passages
    assert [p.n for p in got.passages] == list(range(1, len(got.passages) + 1))
    ranked = [p for p in got.passages if p.rank is not None]
    assert [p.rank for p in ranked][:3] == [1, 2, 3]  # the best three first, in order
    for p in got.passages:
        doc = ws.store.document(p.document_id)
        assert doc.text[p.start:p.end] == p.text
        assert p.sources or p.rank is None
        for q in p.quotes:
            assert p.start <= q.start < q.end <= p.end and doc.text[q.start:q.end] == q.text
    numbers = {p.n for p in got.passages}
    assert got.facts or got.proposed
    for fact in [*got.facts, *got.proposed]:
        assert fact.passages and set(fact.passages) <= numbers
        assert fact.review.value in ("proposed", "accepted", "rejected", "edited")
    # the context cites exactly these passages, each once as a heading
    headings = re.findall(r"^\[(\d+)\] ", got.context, flags=re.M)
    assert [int(n) for n in headings] == sorted(numbers)
    assert set(int(n) for n in re.findall(r"\[(\d+)\]", got.context)) <= numbers
    assert "lisinopril" in got.context.lower()


def test_the_same_judgement_as_ask(ws: Workspace) -> None:
    answer = ws.ask(QUESTION, show_proposed=True)
    got = ws.retrieve(QUESTION, top=len(answer.trace.ranking), show_proposed=True)
    assert [f.triple_id for f in got.facts] == [f.triple_id for f in answer.facts]
    assert [f.triple_id for f in got.proposed] == [f.triple_id for f in answer.proposed]
    assert [p.chunk_id for p in got.passages if p.rank is not None] == answer.trace.ranking
    assert answer.trace.candidates is not None
    scores = [c.score for c in answer.trace.candidates]
    assert all(s is not None for s in scores) and scores == sorted(scores, reverse=True)
    # a flagged citation of the answer is flagged in its passage's quote too
    flagged = {(c.start, c.end): c.flags for c in answer.citations if c.flags}
    quotes = {(q.start, q.end): q.flags for p in got.passages for q in p.quotes}
    assert flagged and all(quotes[span] == flags for span, flags in flagged.items())


def test_each_mode_gives_its_sources(ws: Workspace) -> None:
    expected = {"vector": {"dense"}, "bm25": {"lexical"},
                "hybrid": {"lexical", "dense", "graph"}}
    for mode, sources in expected.items():
        got = ws.retrieve(QUESTION, mode=mode, top=5)
        first = got.passages[0]
        assert first.rank == 1 and set(first.sources) <= sources and first.sources
        if mode != "hybrid":  # one source: its own score is the ranking's
            (only,) = first.sources.values()
            assert only.rank == 1 and only.score == first.score


def test_nothing_found_is_said(ws: Workspace) -> None:
    got = ws.retrieve("What is the dose of zanubrutinib for Waldenstrom macroglobulinemia?")
    assert not got.answerable and got.not_found
    assert got.context.splitlines()[2].startswith("Note: the documents may not answer")


def test_bad_arguments_are_refused(ws: Workspace) -> None:
    for top in (0, 101):
        with pytest.raises(MedKGError, match="top must be between 1 and 100"):
            ws.retrieve(QUESTION, top=top)
    with pytest.raises(MedKGError, match="unknown retrieval mode"):
        ws.retrieve(QUESTION, mode="drop table")
    with pytest.raises(MedKGError):
        ws.retrieve(" \x00 ")


def test_cli_prints_the_context_or_json(built_workspace: Path, tmp_path: Path) -> None:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    runner = CliRunner()
    done = runner.invoke(cli, ["retrieve", QUESTION, "-w", str(root), "--top", "2"])
    assert done.exit_code == 0, done.output
    assert done.output.startswith(f"Question: {QUESTION}") and "[1] " in done.output
    done = runner.invoke(cli, ["retrieve", QUESTION, "-w", str(root), "--json"])
    assert done.exit_code == 0, done.output
    got = Retrieval.model_validate(json.loads(done.output))
    assert got.passages and got.context.startswith("Question:")
    done = runner.invoke(cli, ["retrieve", QUESTION, "-w", str(root), "--top", "0"])
    assert done.exit_code == 1 and "top must be between 1 and 100" in done.output


def test_api_get_and_post(built_workspace: Path, tmp_path: Path) -> None:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    auth = {"Authorization": f"Bearer {add_token(WorkspaceLayout(root), 'Dr Ada')}"}
    with Workspace.open(root) as opened, TestClient(create_app(opened)) as client:
        posted = client.post("/api/retrieve", json={"question": QUESTION, "top": 3},
                             headers=auth)
        assert posted.status_code == 200, posted.text
        got = client.get("/api/retrieve", params={"q": QUESTION, "top": 3}, headers=auth)
        assert got.json() == posted.json()
        assert Retrieval.model_validate(got.json()).passages[0].rank == 1
        for bad in ({"q": QUESTION, "top": 0}, {"q": QUESTION, "mode": "x"}, {"q": ""},
                    {"q": "x" * 4001}):
            refused = client.get("/api/retrieve", params=bad, headers=auth)
            assert refused.status_code == 422 and "error" in refused.json()
        assert client.get("/api/retrieve", params={"q": QUESTION}).status_code == 401
