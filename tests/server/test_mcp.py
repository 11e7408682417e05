"""``medkg mcp`` through the official MCP SDK's own client: over stdio (the server
a child process, as an agent starts it) and over streamable HTTP with the
workspace's bearer tokens; every tool on the built example workspace, hostile
arguments refused with a clear error, and nothing written without
``--allow-review --reviewer``."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from medkg.cli import app as cli
from medkg.layout import WorkspaceLayout
from medkg.model import Layer, ReviewState
from medkg.server.access import add_token
from medkg.workspace import Workspace
from tests.conftest import copy_workspace

mcp = pytest.importorskip("mcp", reason="the mcp SDK is a dependency of medkg: reinstall")
pytestmark = pytest.mark.slow
MEDKG = str(Path(sys.executable).parent / "medkg")
QUESTION = "What are the side effects of lisinopril?"
TOOLS = {"ask", "search_evidence", "entity", "define", "explain"}


def _run(session: Callable[[Any], Awaitable[None]], server: Any) -> None:
    from mcp import Client

    async def main() -> None:
        async with Client(server, read_timeout_seconds=300) as client:
            await session(client)

    asyncio.run(main())


async def _every_tool(client: Any) -> None:
    """Each tool on the example workspace, and hostile arguments to each."""
    listed = {t.name for t in (await client.list_tools()).tools}
    assert listed == TOOLS  # read-only: no review tool
    got = await client.call_tool("search_evidence", {"question": QUESTION, "top": 3})
    assert not got.is_error, got.content
    evidence = got.structured_content
    passages = evidence["passages"]
    assert passages[0]["rank"] == 1 and "[1]" in evidence["context"]
    assert all(p["text"] and p["document_id"].startswith("doc-") for p in passages)
    answer = await client.call_tool("ask", {"question": QUESTION, "show_proposed": True})
    assert not answer.is_error and answer.structured_content["citations"]
    quote = answer.structured_content["citations"][0]
    document = await client.read_resource(f"medkg://documents/{quote['document_id']}")
    text = json.loads(document.contents[0].text)["text"]
    assert text[quote["start"]:quote["end"]] == quote["quote"]  # offsets resolve
    chunk = await client.read_resource(f"medkg://chunks/{passages[0]['chunk_id']}")
    assert json.loads(chunk.contents[0].text)["text"] == passages[0]["text"]
    entity = await client.call_tool("entity", {"entity": "lisinopril"})
    view = entity.structured_content["view"]
    assert view["entity"]["name"].lower() == "lisinopril" and view["triples"]
    assert {t["state"] for t in view["triples"]} <= {"proposed", "accepted", "rejected",
                                                    "edited"}
    assert view["entity"]["concepts"][0]["definition"]
    again = await client.call_tool("entity", {"entity": view["entity"]["id"]})
    assert again.structured_content["view"]["entity"]["id"] == view["entity"]["id"]
    defined = await client.call_tool("define", {"term": "lisinopril"})
    assert defined.structured_content["concepts"][0]["name"] == "lisinopril"
    explained = await client.call_tool("explain", {"question": QUESTION, "mode": "hybrid"})
    assert "candidate chunks ranked" in explained.structured_content["text"]
    for tool, arguments, says in (
            ("search_evidence", {"question": QUESTION, "top": 0}, "top"),
            ("search_evidence", {"question": QUESTION, "mode": "drop"}, "mode"),
            ("ask", {"question": ""}, "question"),
            ("ask", {"question": "x" * 5000}, "question"),
            ("ask", {"question": "\x00\x01 "}, "empty"),
            ("ask", {"question": "?? \x7f"}, "no words"),
            ("explain", {}, "question"),
            ("entity", {"entity": "ent-0000000000000000"}, "no entity"),
            ("define", {"term": "lisinopril", "limit": 10**9}, "limit"),
            ("review", {"target": "tri-00", "action": "accept"}, "Unknown tool")):
        refused = await client.call_tool(tool, arguments)
        assert refused.is_error, (tool, arguments)
        assert says in refused.content[0].text, (tool, refused.content[0].text)
    with pytest.raises(mcp.MCPError, match="no document with id"):
        await client.read_resource("medkg://documents/doc-0000000000000000")


def test_stdio_every_tool_read_only(built_workspace: Path, tmp_path: Path) -> None:
    from mcp.client.stdio import StdioServerParameters

    root = copy_workspace(built_workspace, tmp_path / "ws")

    def graph() -> tuple[object, ...]:
        with Workspace.open(root, access="read") as ws:
            return ws.store.revision(), ws.store.counts(), len(ws.store.decisions())

    before = graph()
    _run(_every_tool, StdioServerParameters(command=MEDKG, args=["mcp", "-w", str(root)],
                                            env={"HF_HUB_OFFLINE": "1"}))
    assert graph() == before  # nothing was written


def test_http_needs_a_workspace_token(built_workspace: Path, tmp_path: Path) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    root = copy_workspace(built_workspace, tmp_path / "ws")
    token = add_token(WorkspaceLayout(root), "agent")
    proc = subprocess.Popen([MEDKG, "mcp", "--http", "--port", "0", "-w", str(root)],
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "300", "HF_HUB_OFFLINE": "1"})
    try:
        url, deadline = "", time.monotonic() + 120
        assert proc.stderr is not None
        while not url and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            found = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", line)
            url = found.group(1) if found else ""
        assert url, "the MCP server did not start"
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            refused = httpx2.post(url, headers=headers, json={})
            assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"

        async def one_call(client: Any) -> None:
            got = await client.call_tool("search_evidence", {"question": QUESTION, "top": 2})
            assert not got.is_error and got.structured_content["passages"]
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS

        authorised = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                        timeout=300)
        _run(one_call, streamable_http_client(url, http_client=authorised))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_review_only_with_the_flag_and_a_name(built_workspace: Path, tmp_path: Path) -> None:
    from medkg.server.mcpserver import build_server

    root = copy_workspace(built_workspace, tmp_path / "ws")
    refused = CliRunner().invoke(cli, ["mcp", "-w", str(root), "--allow-review"])
    assert refused.exit_code == 1 and "--reviewer NAME" in refused.output
    with Workspace.open(root) as ws:
        target = next(t for t in ws.store.iter_triples(Layer.LITERATURE)
                      if t.review is ReviewState.PROPOSED)

        async def review(client: Any) -> None:
            assert "review" in {t.name for t in (await client.list_tools()).tools}
            bad = await client.call_tool("review", {"target": "'; DROP TABLE", "action": "accept"})
            assert bad.is_error and "target" in bad.content[0].text
            bad = await client.call_tool("review", {"target": target.id, "action": "delete"})
            assert bad.is_error and "action" in bad.content[0].text
            done = await client.call_tool("review", {"target": target.id, "action": "reject",
                                                     "reason": "not in the source"})
            assert not done.is_error, done.content
            assert done.structured_content["reviewer"] == "Dr Ada"

        _run(review, build_server(ws, reviewer="Dr Ada"))
        assert ws.store.triple(target.id).review is ReviewState.REJECTED
        assert ws.store.decisions(target.id)[-1].reviewer == "Dr Ada"
