"""Bad input gets a clear message and loses nothing; an interrupted ingest resumes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from medkg.errors import WorkspaceError
from medkg.model import Layer
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES, SEED_OBO

pytestmark = pytest.mark.slow
runner = CliRunner()


def make_bad_files(folder: Path) -> list[Path]:
    from pypdf import PdfWriter

    folder.mkdir()
    empty = folder / "empty.txt"
    empty.write_text("")
    binary = folder / "photo.txt"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(256)) * 4)
    scan = folder / "scan.pdf"
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    with scan.open("wb") as f:
        writer.write(f)
    huge = folder / "huge.txt"
    line = b"The patient reports fatigue and a dry cough after starting lisinopril.\n"
    with huge.open("wb") as f:
        for _ in range(50_000_000 // len(line) + 1):
            f.write(line)
    return [empty, binary, scan, huge]


def test_bad_files_are_reported_and_nothing_is_lost(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "ws")
    ws.load_vocabulary(SEED_OBO)
    ws.ingest([EXAMPLES / "user" / "note-02-cough-on-lisinopril.txt"], Layer.USER)
    ws.build()
    before = ws.store.counts()
    bad = make_bad_files(tmp_path / "bad")
    good = EXAMPLES / "user" / "note-05-asthma-review.txt"
    report = ws.ingest([*bad, good], Layer.USER)
    assert report.documents == 1
    failed = report.failed
    assert "no text to ingest" in failed[str(bad[0])]
    assert "binary" in failed[str(bad[1])]
    assert "no text layer" in failed[str(bad[2])]
    assert "over the 25 MB ingest limit" in failed[str(bad[3])]
    after = ws.store.counts()
    assert after.user.documents == before.user.documents + 1
    assert after.user.entities == before.user.entities  # nothing of the old graph lost
    ws.close()


def test_cli_reports_bad_files_by_name(tmp_path: Path) -> None:
    ws_dir = tmp_path / "ws"
    assert runner.invoke(app, ["init", str(ws_dir)]).exit_code == 0
    empty = tmp_path / "empty.md"
    empty.write_text("\n")
    result = runner.invoke(app, ["ingest", str(empty), "-w", str(ws_dir)])
    assert result.exit_code == 1
    assert "empty.md" in result.output and "no text to ingest" in result.output


def test_cli_errors_are_messages_not_tracebacks(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ask", "anything", "-w", str(tmp_path / "nowhere")])
    assert result.exit_code == 1
    assert "not a medkg workspace" in result.output and "medkg init" in result.output
    assert "Traceback" not in result.output


def test_build_without_vocabulary_says_how_to_fix(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "ws")
    with pytest.raises(WorkspaceError, match="no vocabulary") as err:
        ws.build()
    assert err.value.hint and "medkg vocab load --default" in err.value.hint
    ws.close()


class Crash(Exception):
    pass


def test_interrupted_ingest_resumes_without_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean = Workspace.create(tmp_path / "clean")
    clean.ingest([EXAMPLES / "literature"], Layer.LITERATURE)
    expected = clean.store.counts()
    clean.close()

    ws = Workspace.create(tmp_path / "crashed")
    calls = {"n": 0}
    original = ws.store.mark_stage

    def crash_on_third(doc_id: str, stage: str) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise Crash("killed mid-ingest")
        original(doc_id, stage)

    monkeypatch.setattr(ws.store, "mark_stage", crash_on_third)
    with pytest.raises(Crash):
        ws.ingest([EXAMPLES / "literature"], Layer.LITERATURE)
    monkeypatch.undo()
    ws.close()

    resumed = Workspace.open(tmp_path / "crashed")
    report = resumed.ingest([EXAMPLES / "literature"], Layer.LITERATURE)
    assert report.skipped == 2 and report.documents == 8
    assert resumed.store.counts() == expected
    assert len(resumed.index("chunks")) == expected.literature.chunks
    resumed.close()


def test_defect_14_ingest_exits_nonzero_when_files_were_skipped(tmp_path: Path) -> None:
    """One bad file among good ones: the good ones are ingested, and the exit code
    says that not everything was (it was 0)."""
    ws_dir = tmp_path / "ws"
    assert runner.invoke(app, ["init", str(ws_dir)]).exit_code == 0
    empty = tmp_path / "empty.md"
    empty.write_text("\n")
    good = EXAMPLES / "user" / "note-02-cough-on-lisinopril.txt"
    result = runner.invoke(app, ["ingest", str(empty), str(good), "-w", str(ws_dir)])
    assert result.exit_code == 1
    assert "ingested 1 document(s)" in result.output
    assert "1 file(s) could not be ingested" in result.output
    again = runner.invoke(app, ["ingest", str(good), "-w", str(ws_dir)])
    assert again.exit_code == 0 and "1 already present" in again.output  # not a failure
