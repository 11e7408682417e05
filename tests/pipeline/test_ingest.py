"""The ingest stage: what it counts and how it leaves the workspace."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from medkg.model import Layer
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow


def test_defect_12_identical_files_in_one_batch_count_once(tmp_path: Path) -> None:
    note = (EXAMPLES / "user" / "note-02-cough-on-lisinopril.txt").read_text(encoding="utf-8")
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(note, encoding="utf-8")
    with Workspace.create(tmp_path / "ws") as ws:
        report = ws.ingest([tmp_path / "a.txt", tmp_path / "b.txt"], Layer.USER)
        assert (report.documents, report.skipped) == (1, 1)
        assert len(ws.store.document_ids()) == 1


def test_defect_16_workspace_files_are_the_owners_alone(tmp_path: Path) -> None:
    with Workspace.create(tmp_path / "ws") as ws:
        mode = stat.S_IMODE(ws.root.stat().st_mode)
    assert mode == 0o700  # notes, quotes and the LLM cache are not world-readable
