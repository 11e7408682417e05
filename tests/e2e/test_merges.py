"""Entity-resolution merges in a workspace: listed, undone, and never made again."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from medkg.model import Layer, Link, LinkKind
from medkg.workspace import Workspace
from tests.conftest import SEED_OBO

pytestmark = pytest.mark.slow
runner = CliRunner()
NOTE = ("Congestive heart failures were treated with furosemide. The congestive heart failure "
        "improved. Blood pressure was stable.")


def test_list_and_undo_a_merge(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    note = tmp_path / "note.txt"
    note.write_text(NOTE, encoding="utf-8")
    with Workspace.create(root) as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([note], Layer.USER)
        ws.build()
        entities = ws.store.entities(Layer.USER)
        a, b = entities[0], entities[1]
        # A merge as resolution records it (whatever this small note produced itself).
        ws.store.add_links([Link(kind=LinkKind.SAME_AS, source=a.id, target=b.id, score=0.9,
                                 method="resolution:embedding+name")])
    listed = runner.invoke(app, ["merges", "list", "-w", str(root)])
    assert listed.exit_code == 0 and "1 merge(s)" in listed.output
    undone = runner.invoke(app, ["merges", "undo", a.id, "-w", str(root)])
    assert undone.exit_code == 0, undone.output
    again = runner.invoke(app, ["merges", "undo", a.id, "-w", str(root)])
    assert again.exit_code == 1 and "is not merged" in again.output
    with Workspace.open(root) as ws:
        refusals = ws.store.links(kind=LinkKind.DIFFERENT_FROM)
        assert [(x.source, x.target) for x in refusals] == [(a.id, b.id)]
        ws.settings.linking.resolution_min_cosine = 0.0  # merge anything resolvable...
        ws.settings.linking.resolution_min_name_similarity = 0.0
        ws.build()  # ...yet the refused pair stays apart
        merged = {frozenset((x.source, x.target)) for x in ws.store.links(kind=LinkKind.SAME_AS)}
        assert frozenset((a.id, b.id)) not in merged
