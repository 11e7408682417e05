"""Several readers and one writer on a graph in a SPARQL server (Virtuoso).

The writer is a second process holding the workspace (its lock) while it ingests
one note at a time; after each commit, three reader threads (each its own
read-only workspace) and a ``medkg ask`` process answer at once, and every one of
them sees exactly the documents committed so far: the server isolates each
request, so no reader waits for the writer and none sees half a document."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from medkg.config import StoreConfig
from medkg.model import Layer
from medkg.workspace import Workspace
from tests.conftest import copy_workspace, store_config

pytestmark = pytest.mark.slow
NOTES = 3

# Ingests each note given, one at a time; after each commit says so and waits for
# a line on stdin; builds at the end.
WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from medkg.model import Layer
    from medkg.workspace import Workspace

    with Workspace.open(sys.argv[1]) as ws:
        for i, note in enumerate(sys.argv[2:], 1):
            ws.ingest([Path(note)], Layer.USER)
            print(f"committed {i}", flush=True)
            sys.stdin.readline()
        ws.build()
        print("built", flush=True)
        sys.stdin.readline()
""")


def read(root: Path) -> tuple[int, bool]:
    """What one reader sees: user documents, and whether an answer came with citations."""
    with Workspace.open(root, access="auto") as ws:
        assert ws.read_only
        documents = ws.store.counts().user.documents
        answer = ws.ask("What treats type 2 diabetes?")
        return documents, bool(answer.citations)


def test_readers_see_each_commit_of_a_writer_on_virtuoso(
        built_workspace: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    target: StoreConfig = store_config("sparql", request, bulk=True)  # type: ignore[assignment]
    with Workspace.open(root) as ws:
        ws.copy_graph(target, switch=True)
        first = ws.store.counts().user.documents
    notes = []
    for i in range(NOTES):
        note = tmp_path / f"note-{i}.txt"
        note.write_text(f"Note {i}: metformin {500 * (i + 1)} mg was started for type 2 "
                        "diabetes; no nausea.\n", encoding="utf-8")
        notes.append(str(note))
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(root), *notes],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert writer.stdin is not None and writer.stdout is not None
    try:
        with ThreadPoolExecutor(3) as pool:
            for i in range(1, NOTES + 1):
                assert writer.stdout.readline().strip() == f"committed {i}"
                seen = list(pool.map(read, [root] * 3))
                assert seen == [(first + i, True)] * 3, (i, seen)
                result = CliRunner().invoke(app, ["documents", "-w", str(root)])
                assert result.exit_code == 0 and f"process {writer.pid}" in result.output
                writer.stdin.write("\n")
                writer.stdin.flush()
            assert writer.stdout.readline().strip() == "built"
            seen = list(pool.map(read, [root] * 3))
            assert seen == [(first + NOTES, True)] * 3
            with Workspace.open(root, access="auto") as ws:
                assert all("extracted" in " ".join(ws.store.stages(d))
                           for d in ws.store.document_ids(Layer.USER))
        writer.stdin.write("\n")
        writer.stdin.flush()
        assert writer.wait(timeout=120) == 0
    finally:
        if writer.poll() is None:
            writer.kill()
