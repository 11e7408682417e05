"""The local model runs in a child process, so a native crash in llama.cpp is an
error medkg reports, never a dead medkg.

The regression this guards: llama.cpp repacks weights into its AMX buffer type
at load on CPUs with AMX, and its AMX matmul then segfaults; with the model in
medkg's own process that killed ``medkg build`` and pytest. Default settings now
load with no extra buffer types (no repacking) and answer on every x86-64 CPU;
the tests print which CPU features they ran with."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from medkg.config import LLMConfig
from medkg.errors import LLMUnavailableError
from medkg.llm.client import LLM
from medkg.llm.gguf_backend import GGUFBackend, cpu_flags
from medkg.llm.ledger import Ledger
from medkg.llm.openai_backend import OpenAIBackend
from medkg.llm.port import GenerationParams
from medkg.llm.prompts import load_prompt
from medkg.llm.schemas import TagSummaries, tag_summaries
from tests.llm.conftest import Server

pytestmark = pytest.mark.slow
PARAMS = GenerationParams(max_tokens=256)
TEXT = "Lisinopril lowers blood pressure; a dry cough is a common adverse effect."


def _features() -> str:
    name, flags = cpu_flags()
    amx = sorted(f for f in flags if f.startswith("amx")) or ["no AMX"]
    return f"{name or 'unknown CPU'} ({', '.join(amx)})"


def _ask(llm: LLM, text: str = TEXT) -> TagSummaries:
    return llm.structured("tag_summary", load_prompt("tag_summary").render(text=f"[1] {text}"),
                          tag_summaries(1))


def test_default_settings_answer_on_this_cpu(model_path: Path, tmp_path: Path) -> None:
    """Fails (segfault of the whole test run) on an AMX CPU when the model loads
    with llama.cpp's extra buffer types, as it did before ``llm.extra_buffer_types``."""
    cfg = LLMConfig(backend="gguf", model=str(model_path))
    assert cfg.extra_buffer_types is False
    llm = LLM(GGUFBackend(cfg), Ledger(tmp_path / "llm.sqlite"), PARAMS)
    try:
        for text in (TEXT, "Metformin is first-line therapy for type 2 diabetes."):
            _ask(llm, text)
    finally:
        llm.close()
    [s] = llm.ledger.summary()
    assert (s.calls, s.failed) == (2, 0)
    print(f"\ndefault gguf settings answered on {_features()}")


def _extra_buffer_lines(log: Path) -> list[str]:
    """Lines of llama.cpp's load log about extra buffer types (repacked weights: the
    CPU_REPACK or AMX buffer types), the CPU feature summary excepted."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    assert any("load_tensors" in line for line in lines), lines[-5:]  # the loader's log
    return [line for line in lines if not line.startswith("CPU :")
            and re.search(r"repack|amx", line, re.IGNORECASE)]


def test_default_settings_load_without_repacking(model_path: Path) -> None:
    """llama.cpp's own load log: with the defaults no extra buffer type (AMX or
    another repacked layout) is even considered, and the model answers; with
    ``--extra-buffer-types`` the log shows the difference on this same CPU."""
    server = Server(model_path, "--verbose")
    server.start()
    try:
        llm = LLM(OpenAIBackend(LLMConfig(backend="openai", model="smollm2",
                                          base_url=server.url, max_retries=0)),
                  Ledger(server.log.parent / "llm.sqlite"), PARAMS)
        _ask(llm)
        llm.close()
    finally:
        server.stop()
    assert _extra_buffer_lines(server.log) == []
    repacking = Server(model_path, "--verbose", "--extra-buffer-types")
    repacking.start()  # loading is safe; AMX crashed in the matmul of a call
    repacking.stop()
    control = _extra_buffer_lines(repacking.log)
    assert control, "with extra buffer types on, llama.cpp's log names them"
    print(f"\nno extra buffer types with the defaults on {_features()}; "
          f"with them on: {control[0][:120]}")


def test_a_crash_of_the_model_process_is_a_recorded_error(model_path: Path,
                                                          tmp_path: Path) -> None:
    backend = GGUFBackend(LLMConfig(backend="gguf", model=str(model_path)))
    ledger = Ledger(tmp_path / "llm.sqlite")
    llm = LLM(backend, ledger, PARAMS)
    try:
        _ask(llm)  # alive and answering
        # The crash arrives while a call is in flight, as llama.cpp's AMX segfault did.
        threading.Timer(0.3, os.kill, (backend.pid, signal.SIGSEGV)).start()
        with pytest.raises(LLMUnavailableError, match="died with signal SIGSEGV") as err:
            for i in range(50):  # until one call is in flight when the signal lands
                _ask(llm, f"{TEXT} Visit {i}.")
        assert "llm.extra_buffer_types" in str(err.value)  # the hint names the setting
        assert "medkg itself is unharmed" in str(err.value)
    finally:
        llm.close()
    [(stage, item, reason)] = ledger.failures()
    assert (stage, item) == ("tag_summary", "backend:gguf") and "SIGSEGV" in reason
    [s] = ledger.summary()
    assert s.failed == 1 and s.calls >= 2
    print(f"\ncrash recorded: {reason.splitlines()[0]}")


def test_the_model_process_ends_with_medkg(model_path: Path) -> None:
    """A medkg killed with -9 leaves no model process behind."""
    script = ("import sys, time\n"
              "from medkg.config import LLMConfig\n"
              "from medkg.llm.gguf_backend import GGUFBackend\n"
              f"b = GGUFBackend(LLMConfig(backend='gguf', model={str(model_path)!r}))\n"
              "print(b.pid, flush=True)\n"
              "time.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait(timeout=10)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.2)
    assert not _alive(child), f"model process {child} outlived its parent"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split()[2] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def test_a_proxy_in_the_environment_does_not_intercept_the_local_model(
        model_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Behind a corporate proxy (HTTP(S)_PROXY set, loopback not in NO_PROXY) the
    calls to the model process on 127.0.0.1 still go straight to it."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    llm = LLM(GGUFBackend(LLMConfig(backend="gguf", model=str(model_path))),
              Ledger(tmp_path / "llm.sqlite"), PARAMS)
    try:
        _ask(llm)
        assert llm.backend.count_tokens(TEXT) > 3
    finally:
        llm.close()


def test_a_file_that_is_no_model_is_a_clear_error(tmp_path: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install -e .[dev])")
    bogus = tmp_path / "notes.gguf"
    bogus.write_bytes(b"this is not a model\n" * 100)
    with pytest.raises(LLMUnavailableError, match="ended with exit status") as err:
        GGUFBackend(LLMConfig(backend="gguf", model=str(bogus)))
    assert "its last output" in str(err.value)  # what llama.cpp said, for the user
    assert "GGUF file" in str(err.value)
