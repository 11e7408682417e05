"""`medkg build --levels N`: the SAC-KG loop over the sample documents, end to end."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from medkg.growth.corpus import node_of
from medkg.model import Layer
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES, SEED_OBO

pytestmark = pytest.mark.slow
runner = CliRunner()


def _workspace(root: Path) -> None:
    with Workspace.create(root) as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([EXAMPLES / "user"], Layer.USER)
        ws.ingest([EXAMPLES / "literature"], Layer.LITERATURE)


def test_build_levels_grows_from_the_user_layer(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _workspace(root)
    result = runner.invoke(app, ["build", "--levels", "2", "-w", str(root)])
    assert result.exit_code == 0, result.output
    assert "SAC-KG loop" in result.output
    with Workspace.open(root) as ws:
        triples = ws.store.triples()
        assert triples and all(t.level in (1, 2) for t in triples)
        seeds = {node_of(e) for e in ws.store.entities(Layer.USER)}
        entities = {e.id: e for layer in (Layer.USER, Layer.LITERATURE)
                    for e in ws.store.entities(layer)}
        # Every level-1 triple is about a seed; every level-2 one about a grown node.
        for t in triples:
            ends = {node_of(entities[t.head]), node_of(entities[t.tail])}
            if t.level == 1:
                assert ends & seeds
        db = sqlite3.connect(root / "construction" / "growth.sqlite")
        grown = {r[0] for r in db.execute("SELECT node FROM nodes WHERE level = 2 AND grow = 1")}
        for t in triples:
            if t.level == 2:
                assert {node_of(entities[t.head]), node_of(entities[t.tail])} & grown
    # A second build has nothing new: the finished loop is not repeated.
    again = runner.invoke(app, ["build", "--levels", "2", "-w", str(root)])
    assert again.exit_code == 0, again.output
    with Workspace.open(root) as ws:
        assert sorted(t.id for t in ws.store.triples()) == sorted(t.id for t in triples)


def test_no_seeds_is_a_clear_error(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    with Workspace.create(root) as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([EXAMPLES / "literature"], Layer.LITERATURE)
    result = runner.invoke(app, ["build", "--levels", "1", "-w", str(root)])
    assert result.exit_code == 1
    assert "no seed entities" in result.output and "construction.seeds" in result.output
    named = runner.invoke(app, ["build", "-w", str(root)],
                          env={"MEDKG_CONSTRUCTION__LEVELS": "1",
                               "MEDKG_CONSTRUCTION__SEEDS": "metformin, hypertension"})
    assert named.exit_code == 0, named.output
    with Workspace.open(root) as ws:
        assert ws.store.triples()
