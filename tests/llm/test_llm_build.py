"""The LLM engine inside a real build, with the local GGUF model: dry-run estimate,
the ledger after the build, failures recorded, the graph built, a rebuild costs
nothing (every call cached)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from medkg.model import Layer
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES, SEED_OBO

pytestmark = pytest.mark.slow
runner = CliRunner()
NOTES = ["note-02-cough-on-lisinopril.txt"]


def test_build_with_the_gguf_engine(model_path: Path, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    with Workspace.create(root) as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([EXAMPLES / "user" / n for n in NOTES], Layer.USER)
    llm = f"gguf:{model_path}"
    dry = runner.invoke(app, ["build", "-w", str(root), "--llm", llm, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "LLM call(s)" in dry.output
    with Workspace.open(root) as ws:
        ws.settings.llm.backend, ws.settings.llm.model = "gguf", str(model_path)
        ws.settings.extraction.engine = "llm"
        estimate = ws.estimate_build()
        report = ws.build()
        stages = {s.stage: s for s in ws.ledger.summary()}
        failures = ws.ledger.failures()
    assert report.documents == 1
    assert set(stages) == {"extract", "tag_summary"}
    assert stages["extract"].calls == stages["tag_summary"].calls  # one of each per chunk
    summary = stages["extract"].model_copy(update={
        k: getattr(stages["extract"], k) + getattr(stages["tag_summary"], k)
        for k in ("calls", "prompt_tokens", "completion_tokens", "first_parsed", "repaired",
                  "failed")})
    assert summary.calls == estimate.calls  # as estimated
    assert summary.first_parsed + summary.repaired + summary.failed == summary.calls
    assert summary.first_parsed == summary.calls - summary.failed  # grammar: no repairs needed
    ratio_in = summary.prompt_tokens / estimate.prompt_tokens
    assert 0.8 < ratio_in < 1.25  # counted with the model's own tokenizer; no repairs
    print(f"\ndry-run {estimate}; ledger {summary.model_dump()}; "
          f"prompt ratio {ratio_in:.2f}, output ratio "
          f"{summary.completion_tokens / estimate.completion_tokens:.2f}; "
          f"{len(failures)} failed item(s)")
    for stage, item, reason in failures:  # every failure says what and why
        assert stage in ("extract", "tag_summary") and item.startswith("chunk-") and reason
    stats = runner.invoke(app, ["stats", "-w", str(root)])
    assert stats.exit_code == 0 and "LLM ledger" in stats.output
    asked = runner.invoke(app, ["ask", "-w", str(root), "--llm", llm, "--json",
                                "What caused the cough?"])
    assert asked.exit_code == 0, asked.output
    answer = json.loads(asked.stdout)
    assert "generation" in answer["trace"]  # generated, or why the extractive one was kept
    numbers = {c["n"] for c in answer["citations"]}
    assert {int(n) for n in re.findall(r"\[(\d+)\]", answer["text"])} <= numbers


def test_unreachable_endpoint_fails_the_build_clearly(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    with Workspace.create(root) as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([EXAMPLES / "user" / NOTES[0]], Layer.USER)
        ws.settings.llm.base_url = "http://127.0.0.1:9/v1"
        ws.settings.llm.max_retries = 0
        ws.settings.llm.timeout_s = 5
        ws.save_settings()
    result = runner.invoke(app, ["build", "-w", str(root), "--llm", "openai:any"])
    assert result.exit_code == 1
    assert "cannot reach the LLM endpoint" in result.output
    with Workspace.open(root) as ws:  # nothing was marked built: a rerun resumes
        [doc] = ws.store.document_ids(Layer.USER)
        assert "extracted" not in ws.store.stages(doc)
