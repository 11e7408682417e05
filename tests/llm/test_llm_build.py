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
from medkg.engines import use_llm
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
        use_llm(ws.settings)
        estimate = ws.estimate_build()
        report = ws.build()
        stages = {s.stage: s for s in ws.ledger.summary()}
        failures = ws.ledger.failures()
    assert report.documents == 1
    assert set(stages) == {"extract", "tag_summary"}
    assert stages["extract"].calls == stages["tag_summary"].calls  # one of each per pack
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


CRASH_NOTES = ["note-02-cough-on-lisinopril.txt", "note-05-asthma-review.txt"]


def _gguf_workspace(root: Path, model_path: Path) -> None:
    with Workspace.create(root) as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([EXAMPLES / "user" / n for n in CRASH_NOTES], Layer.USER)
        ws.settings.llm.backend, ws.settings.llm.model = "gguf", str(model_path)
        # one call per chunk, so that a document's calls end before the next one's
        # begin (packed, the two notes would share one extraction call)
        ws.settings.llm.pack_tokens = 0
        use_llm(ws.settings)
        ws.save_settings()


def _sorted_quads(ws: Workspace, path: Path) -> list[str]:
    """The graph as sorted N-Quads, less the one clock reading in it (when each
    vocabulary source was loaded)."""
    ws.export(path, "nq")
    return sorted(line for line in path.read_text(encoding="utf-8").splitlines()
                  if "prov#generatedAtTime" not in line)


def test_a_model_crash_mid_build_is_recorded_and_the_build_resumes(
        model_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The local model process is killed with SIGSEGV (what llama.cpp's AMX crash
    does) at the first LLM call for the second document of a build: the build
    stops with an error that names the signal and the setting, the ledger and
    `medkg stats` record it, the first document stays built, and a rebuild ends
    with the same graph as a build that was never interrupted."""
    import os
    import signal

    from medkg.errors import LLMUnavailableError
    from medkg.llm.gguf_backend import GGUFBackend

    crashed, clean = tmp_path / "crashed", tmp_path / "clean"
    _gguf_workspace(crashed, model_path)
    _gguf_workspace(clean, model_path)
    with Workspace.open(crashed) as ws:
        backend = ws.llm().backend
        assert isinstance(backend, GGUFBackend)
        first, _ = ws.store.document_ids(Layer.USER)  # the order build takes them in
        crash_at = len(ws.store.chunks(first)) + 1  # one extraction call per chunk
        calls = 0
        complete = backend.complete

        def crash_at_the_second_document(*args: object) -> object:
            nonlocal calls
            calls += 1
            if calls == crash_at:
                os.kill(backend.pid, signal.SIGSEGV)
            return complete(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(backend, "complete", crash_at_the_second_document)
        with pytest.raises(LLMUnavailableError, match="died with signal SIGSEGV") as err:
            ws.build()
        assert "llm.extra_buffer_types" in str(err.value)
        done = {d: ws.store.stages(d) for d in ws.store.document_ids(Layer.USER)}
        failures = ws.ledger.failures()
    assert sorted("extracted" in s for s in done.values()) == [False, True]
    [(stage, reason)] = [(s, r) for s, item, r in failures if item == "backend:gguf"]
    assert stage == "extract" and "SIGSEGV" in reason
    stats = runner.invoke(app, ["stats", "-w", str(crashed)])
    assert stats.exit_code == 0, stats.output
    assert "failed extract backend:gguf: the local model process" in stats.output
    print(f"\nafter the crash: {sum('extracted' in s for s in done.values())} of {len(done)} "
          f"documents extracted; stats say: "
          f"{next(line for line in stats.output.splitlines() if 'backend:gguf' in line)}")

    resumed = runner.invoke(app, ["build", "-w", str(crashed)])
    assert resumed.exit_code == 0, resumed.output
    with Workspace.open(crashed) as ws:
        assert all("extracted" in ws.store.stages(d) for d in ws.store.document_ids(Layer.USER))
        [extract] = [s for s in ws.ledger.summary() if s.stage == "extract"]
        chunks = sum(len(ws.store.chunks(d)) for d in ws.store.document_ids(Layer.USER))
        after = _sorted_quads(ws, tmp_path / "crashed.nq")
    # Every chunk was asked once: the built document was not redone, the failed call
    # is the only extra one.
    assert (extract.calls, extract.failed) == (chunks + 1, 1)
    with Workspace.open(clean) as ws:
        ws.build()
        expected = _sorted_quads(ws, tmp_path / "clean.nq")
    assert after == expected
    print(f"resumed build: {len(after)} quads, identical to an uninterrupted build")
