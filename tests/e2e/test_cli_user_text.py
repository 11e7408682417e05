"""What a user wrote is printed as written: brackets in notes, titles, paths and
questions are text, never terminal markup (issue: "Rich markup in user text
crashes the CLI" and "The terminal drops bracketed text")."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from tests.conftest import SEED_OBO

pytestmark = pytest.mark.slow
runner = CliRunner()
NOTE = ("Clinic note [/ref]\n\nThe dry cough is likely caused by lisinopril [see addendum].\n"
        "Plan: stop lisinopril [/bold] and review in four weeks.\n")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("markup")
    notes = root / "notes [b]"
    notes.mkdir()
    (notes / "note [red]1.txt").write_text(NOTE, encoding="utf-8")
    ws = root / "ws"
    for args in (["init", str(ws)], ["vocab", "load", "-w", str(ws), str(SEED_OBO)],
                 ["ingest", "-w", str(ws), "--layer", "user", str(notes)],
                 ["build", "-w", str(ws)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
    return ws


def test_defect_03_rich_markup_in_user_text_does_not_crash_the_cli(workspace: Path) -> None:
    documents = runner.invoke(app, ["documents", "-w", str(workspace)])
    assert documents.exit_code == 0, documents.output
    assert "[/ref]" in documents.output
    asked = runner.invoke(app, ["ask", "-w", str(workspace), "What caused the [/i] cough?"])
    assert asked.exit_code == 0, asked.output
    assert "What caused the [/i] cough?" in asked.output


def test_defect_04_the_terminal_keeps_bracketed_text(workspace: Path) -> None:
    asked = runner.invoke(app, ["ask", "-w", str(workspace), "--mode", "local",
                                "--show-proposed", "What caused the dry cough?"])
    assert asked.exit_code == 0, asked.output
    quote = "The dry cough is likely caused by lisinopril [see addendum]."
    assert f'"{quote}"' in asked.output  # the exact quote, brackets and all
    assert "[user, conf" in asked.output  # each fact line keeps its layer and confidence


def test_an_error_naming_user_text_is_printed_as_written(tmp_path: Path) -> None:
    missing = tmp_path / "[b]missing"
    result = runner.invoke(app, ["documents", "-w", str(missing)])
    assert result.exit_code == 1
    assert "[b]missing" in result.output and "Traceback" not in result.output
