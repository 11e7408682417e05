"""Deleting a document: the graph ends as if it had never been ingested."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from medkg.model import Layer
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES, SEED_OBO

pytestmark = pytest.mark.slow
runner = CliRunner()
KEEP = EXAMPLES / "user" / "note-01-diabetes-followup.txt"
DROP = EXAMPLES / "user" / "note-02-cough-on-lisinopril.txt"


def _layer_counts(ws: Workspace) -> dict[str, int]:
    return {k: v for k, v in ws.store.counts().rows() if k.startswith(("user.", "literature."))}


def test_delete_equals_never_ingested(tmp_path: Path) -> None:
    with Workspace.create(tmp_path / "only") as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([KEEP], Layer.USER)
        ws.build()
        expected = _layer_counts(ws)
        expected_entities = sorted(e.id for e in ws.store.entities(Layer.USER))
    root = tmp_path / "both"
    with Workspace.create(root) as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([KEEP, DROP], Layer.USER)
        ws.build()
        drop_id = next(d for d in ws.store.document_ids(Layer.USER)
                       if ws.store.document(d).source.endswith(DROP.name))
        entities_before = len(ws.index("entities"))
    listed = runner.invoke(app, ["documents", "-w", str(root)])
    assert listed.exit_code == 0 and "extracted" in listed.output
    result = runner.invoke(app, ["delete", drop_id, "-w", str(root)])
    assert result.exit_code == 0, result.output
    assert "deleted" in result.output
    with Workspace.open(root) as ws:
        assert _layer_counts(ws) == expected
        assert sorted(e.id for e in ws.store.entities(Layer.USER)) == expected_entities
        assert len(ws.index("entities")) < entities_before
        assert all(x.source in set(expected_entities) or x.kind.value == "definition_of"
                   for x in ws.store.links())
    again = runner.invoke(app, ["delete", drop_id, "-w", str(root)])
    assert again.exit_code == 1
