"""The vocab commands on a real workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from tests.conftest import SEED_OBO

runner = CliRunner()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    assert runner.invoke(app, ["init", str(path)]).exit_code == 0
    result = runner.invoke(app, ["vocab", "load", str(SEED_OBO), "-w", str(path)])
    assert result.exit_code == 0, result.output
    assert "loaded 74 concepts" in result.output
    return path


def test_search_show_and_list(ws: Path) -> None:
    result = runner.invoke(app, ["vocab", "search", "hypertensoin", "-w", str(ws), "--json"])
    assert result.exit_code == 0, result.output
    top = json.loads(result.stdout)[0]
    assert (top["name"], top["method"]) == ("hypertension", "approximate")
    shown = runner.invoke(app, ["vocab", "show", top["id"], "-w", str(ws), "--json"])
    assert json.loads(shown.stdout)["definition"].startswith("Persistently raised")
    listed = runner.invoke(app, ["vocab", "list", "-w", str(ws)])
    assert "medkg-seed@2026-11-29" in listed.output and "DISO" in listed.output


def test_malformed_vocabulary_loads_nothing(ws: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.obo"
    bad.write_text("[Term]\nid: X:1\nname: fine\n\n[Term]\nid: X:2\nbroken line\n")
    result = runner.invoke(app, ["vocab", "load", str(bad), "-w", str(ws)])
    assert result.exit_code == 1
    assert "bad.obo:7" in result.output
    show = runner.invoke(app, ["vocab", "show", "X:1", "-w", str(ws)])
    assert show.exit_code == 1 and "no concept" in show.output


def test_unknown_concept_is_a_clear_error(ws: Path) -> None:
    result = runner.invoke(app, ["vocab", "show", "NOPE:1", "-w", str(ws)])
    assert result.exit_code == 1 and "no concept with id 'NOPE:1'" in result.output
