"""`medkg review` for scripts: the queue, decisions, the audit log and
decisions as files, through the CLI on a built workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from medkg.workspace import Workspace
from tests.conftest import copy_workspace

pytestmark = pytest.mark.slow
runner = CliRunner()


def _json(args: list[str]) -> object:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_scripted_review_and_decisions_as_files(built_workspace: Path, tmp_path: Path) -> None:
    root = str(copy_workspace(built_workspace, tmp_path / "ws"))
    queue = _json(["review", "queue", "-w", root, "--kind", "statement", "--limit", "3"])
    assert isinstance(queue, dict) and queue["total"] > 3
    a, b, c = (i["id"] for i in queue["items"])
    accepted = _json(["review", "accept", a, "-w", root, "--reviewer", "Dr Ada"])
    assert isinstance(accepted, dict) and accepted["reviewer"] == "Dr Ada"
    _json(["review", "reject", b, "-w", root, "--reason", "not in the text",
           "--reviewer", "Dr Ada"])
    edited = _json(["review", "edit", c, "-w", root, "--negated", "--reviewer", "Dr Bo"])
    assert isinstance(edited, dict) and edited["after"]["qualifiers"]["negated"] is True
    shown = _json(["review", "show", c, "-w", root])
    assert isinstance(shown, dict) and shown["triple"]["review"] == "edited"
    assert shown["revised_as"] and shown["history"][0]["reviewer"] == "Dr Bo"
    text = runner.invoke(app, ["review", "show", c, "-w", root])
    assert text.exit_code == 0 and "replaced by" in text.output
    log = _json(["review", "log", "-w", root])
    assert isinstance(log, list) and [d["action"] for d in log] == ["accept", "reject", "edit"]
    # Errors: an unknown id, an unknown state; nothing is recorded.
    bad = runner.invoke(app, ["review", "accept", "tri-nope", "-w", root])
    assert bad.exit_code == 1 and "no statement with id 'tri-nope'" in bad.output
    assert runner.invoke(app, ["review", "queue", "-w", root, "--state", "maybe"]).exit_code == 1
    # Decisions out as TSV, and into another copy of the workspace.
    tsv = tmp_path / "decisions.tsv"
    assert runner.invoke(app, ["review", "export", str(tsv), "-w", root]).exit_code == 0
    other = str(copy_workspace(built_workspace, tmp_path / "other"))
    imported = _json(["review", "import", str(tsv), "-w", other])
    assert imported == {"recorded": 3, "skipped": 0, "unresolved": []}
    again = _json(["review", "import", str(tsv), "-w", other])
    assert isinstance(again, dict) and again["recorded"] == 0 and again["skipped"] == 3
    with Workspace.open(root) as ws1, Workspace.open(other) as ws2:
        assert {t.id: t.review for t in ws1.store.triples()} == \
            {t.id: t.review for t in ws2.store.triples()}
    # A malformed file: its line named, nothing applied.
    broken = tmp_path / "broken.tsv"
    broken.write_text("reviewer\ttarget\taction\nann\t" + a + "\treject\nann\ttri-x\tmaybe\n")
    refused = runner.invoke(app, ["review", "import", str(broken), "-w", other])
    assert refused.exit_code == 1 and "broken.tsv:3: unknown action" in refused.output
    assert len(_json(["review", "log", "-w", other])) == 3  # type: ignore[arg-type]
    # Undo, from the log's id.
    undone = _json(["review", "undo", log[1]["id"], "-w", root])
    assert isinstance(undone, dict) and undone["undoes"] == log[1]["id"]
    assert _json(["review", "show", b, "-w", root])["triple"]["review"] == "proposed"  # type: ignore[index]


def test_init_makes_a_token_and_prints_it_once(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path / "ws")])
    assert result.exit_code == 0, result.output
    assert "#token=" in result.output and "medkg serve" in result.output
    token = result.output.split("#token=")[1].split()[0]
    assert token not in (tmp_path / "ws" / "tokens.json").read_text()
    added = runner.invoke(app, ["token", "add", "Dr Bo", "-w", str(tmp_path / "ws")])
    assert added.exit_code == 0 and len(added.stdout.strip().splitlines()[-1]) >= 40
