"""Readers while another process writes: ``ask``, ``stats``, ``documents`` and
``export`` open the workspace read-only and see what the writer has committed; a
second writer is told which process holds the workspace, never a raw lock error.

The writer here is a real second process holding a real Oxigraph store."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from medkg.lock import WorkspaceBusyError
from medkg.model import Layer
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES, copy_workspace

pytestmark = pytest.mark.slow
runner = CliRunner()

# Opens the workspace to write, ingests one more note (committed), says so, then
# waits for its stdin to close (the test's signal to end).
WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from medkg.model import Layer
    from medkg.workspace import Workspace

    ws = Workspace.open(sys.argv[1])
    ws.ingest([Path(sys.argv[2])], Layer.USER)
    print("committed", flush=True)
    sys.stdin.read()
    ws.close()
""")


@pytest.fixture
def writing(built_workspace: Path, tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    note = tmp_path / "note-new.txt"
    note.write_text("Atorvastatin was started for hypercholesterolaemia; no myalgia.\n",
                    encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(note)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "committed", line
    try:
        yield root, proc
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=60)


def test_second_writer_is_told_who_holds_the_workspace(
        writing: tuple[Path, subprocess.Popen[str]]) -> None:
    root, proc = writing
    with pytest.raises(WorkspaceBusyError) as caught:
        Workspace.open(root)
    assert caught.value.holder is not None and caught.value.holder.pid == proc.pid
    assert f"process {proc.pid}" in caught.value.message
    result = runner.invoke(app, ["ingest", str(EXAMPLES / "user"), "-w", str(root)])
    assert result.exit_code == 1
    assert f"process {proc.pid}" in result.output and "IO error" not in result.output
    assert "LOCK" not in result.output


def test_readers_work_during_a_write_and_see_what_was_committed(
        writing: tuple[Path, subprocess.Popen[str]], tmp_path: Path) -> None:
    root, proc = writing
    with Workspace.open(root, access="auto") as ws:
        assert ws.read_only and ws.busy is not None and ws.busy.pid == proc.pid
        sources = [ws.store.document(d).source for d in ws.store.document_ids(Layer.USER)]
        assert any(s.endswith("note-new.txt") for s in sources)  # committed by the writer
        answer = ws.ask("What treats type 2 diabetes?")
        assert answer.citations and answer.text
        with pytest.raises(Exception) as refused:
            ws.ingest([EXAMPLES / "user"], Layer.USER)
        assert "read-only" in str(refused.value)
    for command in (["ask", "What treats type 2 diabetes?"], ["stats"], ["documents"],
                    ["export", str(tmp_path / "out.nq"), "--format", "nq"]):
        result = runner.invoke(app, [*command, "-w", str(root)])
        assert result.exit_code == 0, (command, result.output)
        assert f"process {proc.pid}" in result.output  # the note says whose build it is
    assert (tmp_path / "out.nq").stat().st_size > 0


def test_the_lock_goes_with_its_process(built_workspace: Path, tmp_path: Path) -> None:
    root = copy_workspace(built_workspace, tmp_path / "ws")
    # A writer killed mid-command leaves no lock behind (the kernel's lock).
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time
        from medkg.workspace import Workspace
        ws = Workspace.open(sys.argv[1]); ws.store
        print("open", flush=True); time.sleep(600)
    """), str(root)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "open"
    proc.kill()
    proc.wait()
    with Workspace.open(root) as ws:
        assert not ws.read_only and ws.store.counts().user.documents == 3
