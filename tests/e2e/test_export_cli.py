"""`medkg export` writes only where it is told to, and says why when it cannot
(issues: "export overwrites any file without asking", and the export cases of
"tracebacks instead of errors")."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from tests.conftest import SEED_OBO

runner = CliRunner()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    assert runner.invoke(app, ["init", str(ws)]).exit_code == 0
    assert runner.invoke(app, ["vocab", "load", "-w", str(ws), str(SEED_OBO)]).exit_code == 0
    return ws


def test_defect_11_export_does_not_overwrite_without_asking(workspace: Path,
                                                          tmp_path: Path) -> None:
    target = tmp_path / "notes.ttl"
    target.write_text("my own file\n", encoding="utf-8")
    refused = runner.invoke(app, ["export", "-w", str(workspace), str(target)])
    assert refused.exit_code == 1 and "exists" in refused.output and "--force" in refused.output
    assert target.read_text(encoding="utf-8") == "my own file\n"
    forced = runner.invoke(app, ["export", "-w", str(workspace), str(target), "--force"])
    assert forced.exit_code == 0, forced.output
    assert "skos:Concept" in target.read_text(encoding="utf-8")


def test_defect_11_export_never_writes_over_the_workspace(workspace: Path) -> None:
    config = workspace / "medkg.toml"
    before = config.read_bytes()
    result = runner.invoke(app, ["export", "-w", str(workspace), str(config), "--force"])
    assert result.exit_code == 1 and "the workspace's own files" in result.output
    assert config.read_bytes() == before
    assert runner.invoke(app, ["stats", "-w", str(workspace)]).exit_code == 0  # still usable
    beside = runner.invoke(app, ["export", "-w", str(workspace), str(workspace / "kg.ttl")])
    assert beside.exit_code == 0, beside.output  # a new file in the directory is fine


@pytest.mark.parametrize("where", ["missing/graph.ttl", "."])
def test_defect_10_export_to_a_bad_target_is_an_error(workspace: Path, tmp_path: Path,
                                                     where: str) -> None:
    result = runner.invoke(app, ["export", "-w", str(workspace), str(tmp_path / where)])
    assert result.exit_code == 1, result.output
    assert ("no directory" in result.output or "is a directory" in result.output)
    assert "Traceback" not in result.output
    assert not list(tmp_path.glob("*.tmp"))
