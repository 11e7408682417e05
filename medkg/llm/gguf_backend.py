"""A local GGUF model through llama-cpp-python, in a child process, with
grammar-constrained decoding.

llama.cpp is native code: a crash in it (a segfault in its AMX kernels, say)
takes down the process it runs in. So the model never runs in medkg's own
process: :class:`GGUFBackend` starts :mod:`medkg.llm.gguf_server`
(llama-cpp-python's OpenAI-compatible server) as a child on a loopback socket,
talks to it with the ``openai`` backend, and stops it on :meth:`close` (and
when medkg exits or is killed: the child watches its parent). If the child dies,
the call in flight raises :class:`LLMUnavailableError` naming its exit signal
and the setting to change; the build stops there with nothing half-written and
resumes on the next run (answers already given are in the cache).

With a schema the request asks for JSON mode with the schema attached, which
llama.cpp compiles to a grammar, so a complete answer always parses. (An answer
cut off by ``llm.max_tokens`` can still be incomplete; the client repairs or
records it.) The child serves one call at a time.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path
from typing import IO, Any

from medkg.config import LLMConfig
from medkg.errors import LLMError, LLMUnavailableError
from medkg.llm.openai_backend import OpenAIBackend
from medkg.llm.port import Completion, GenerationParams, Message

_ALIAS = "local"
# The child is on loopback: a proxy from the environment must not see its traffic.
_LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))
LOCAL_TIMEOUT_S = 600.0  # a long answer from a model on the CPU takes minutes


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> tuple[str, set[str]]:
    """The CPU's model name and its feature flags (Linux; empty elsewhere)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "", set()
    name, flags = "", set[str]()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and not name:
            name = value.strip()
        elif key.strip() == "flags" and not flags:
            flags = set(value.split())
    return name, flags


def amx_flags() -> list[str]:
    """This CPU's AMX feature flags (``amx_tile``, ``amx_int8``, ``amx_bf16``, ...)."""
    return sorted(f for f in cpu_flags()[1] if f.startswith("amx"))


def _signal_name(returncode: int) -> str:
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-returncode).name}"
        return f"signal {-returncode}"
    return f"exit status {returncode}"


def _stop(process: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    log.close()


class LocalModelProcess:
    """The child process that serves one GGUF file on loopback."""

    def __init__(self, path: Path, cfg: LLMConfig) -> None:
        self.path = path
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        # Lives as long as the child; closed by close() or the finalizer.
        self._log = tempfile.TemporaryFile(prefix="medkg-gguf-")  # noqa: SIM115
        command = [sys.executable, "-m", "medkg.llm.gguf_server", "--model", str(path),
                   "--alias", _ALIAS, "--n-ctx", str(cfg.n_ctx), "--seed", str(cfg.seed),
                   "--n-threads", str(cfg.n_threads), "--fd", str(listener.fileno()),
                   "--parent-pid", str(os.getpid())]
        if cfg.extra_buffer_types:
            command.append("--extra-buffer-types")
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                            stdout=self._log, stderr=subprocess.STDOUT,
                                            pass_fds=(listener.fileno(),))
        except OSError as exc:
            self._log.close()
            raise LLMUnavailableError(f"cannot start the local model process: {exc}") from exc
        finally:
            listener.close()  # the child holds its own copy
        self._finalizer = weakref.finalize(self, _stop, self.process, self._log)
        self._wait_ready(cfg.start_timeout_s)

    @property
    def pid(self) -> int:
        return self.process.pid

    def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                status, tail = self.process.returncode, self.log_tail()
                self.close()
                raise LLMUnavailableError(
                    f"cannot load the GGUF model {self.path}: the local model process ended "
                    f"with {_signal_name(status)}{tail}",
                    hint=crash_hint() if status < 0 else
                    "is it a GGUF file this llama.cpp can read? its output above says why")
            try:
                with _LOOPBACK.open(f"{self.url}/models", timeout=2):
                    return
            except (OSError, urllib.error.URLError):
                time.sleep(0.2)
        self.close()
        raise LLMUnavailableError(
            f"the local model process did not load {self.path} within {timeout_s:g} s",
            hint="a large model on a slow disk needs longer: raise llm.start_timeout_s")

    def exit_status(self, wait_s: float = 2.0) -> int | None:
        """The child's exit code (negative: killed by that signal), or None while it
        runs. A crash races the failed request that revealed it, so wait a little."""
        try:
            return self.process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return None

    def log_tail(self, lines: int = 12) -> str:
        """The last lines the child wrote, for an error message ('' when none)."""
        if self._log.closed:
            return ""
        self._log.seek(0)
        text = self._log.read().decode("utf-8", "replace").strip()
        tail = text.splitlines()[-lines:]
        return ("\n  its last output:\n    " + "\n    ".join(tail)) if tail else ""

    def tokenize(self, text: str, timeout_s: float) -> list[int]:
        request = urllib.request.Request(
            self.url.removesuffix("/v1") + "/extras/tokenize",
            data=json.dumps({"input": text, "model": _ALIAS}).encode("utf-8"),
            headers={"Content-Type": "application/json"})
        with _LOOPBACK.open(request, timeout=timeout_s) as response:
            return list(json.loads(response.read())["tokens"])

    def close(self) -> None:
        self._finalizer()


def crash_hint() -> str:
    amx = amx_flags()
    cpu = (f"this CPU has AMX ({', '.join(amx)}); " if amx else "")
    return (f"llama.cpp crashed in native code. {cpu}llm.extra_buffer_types = true "
            "(weight repacking, AMX kernels) crashes llama.cpp on some CPUs: keep it false "
            "(the default); try llm.n_threads = 1 or a smaller llm.n_ctx; or serve the model "
            "outside medkg (llama.cpp's llama-server, vLLM, Ollama) and use "
            "--llm openai:MODEL with llm.base_url. The build resumes where it stopped.")


class GGUFBackend:
    name = "gguf"
    constrained = True

    def __init__(self, cfg: LLMConfig) -> None:
        path = Path(cfg.model).expanduser()
        if not path.is_file():
            raise LLMUnavailableError(f"no GGUF model file at {path}",
                                      hint="pass --llm gguf:PATH/TO/model.gguf")
        if importlib.util.find_spec("llama_cpp") is None:
            raise LLMUnavailableError(
                "llama-cpp-python is not installed",
                hint="pip install 'medkg[llm]' (builds llama.cpp; takes minutes)")
        self.model = path.name
        self._timeout_s = max(cfg.timeout_s, LOCAL_TIMEOUT_S)
        self._process = LocalModelProcess(path, cfg)
        # One call at a time, no retries: a dead child does not come back by waiting.
        self._client = OpenAIBackend(
            cfg.model_copy(update={"base_url": self._process.url, "model": _ALIAS,
                                   "max_retries": 0, "concurrency": 1,
                                   "timeout_s": self._timeout_s}),
            response_format="json_object+schema", api_key="local", use_proxy=False)

    @property
    def pid(self) -> int:
        """The process id of the child that runs the model."""
        return self._process.pid

    def _failed(self, exc: LLMError) -> LLMError:
        status = self._process.exit_status()
        if status is None:
            return exc
        return LLMUnavailableError(
            f"the local model process ({self.model}) died with {_signal_name(status)}; "
            f"medkg itself is unharmed{self._process.log_tail()}", hint=crash_hint())

    def complete(self, messages: list[Message], schema: dict[str, Any] | None,
                 params: GenerationParams) -> Completion:
        try:
            completion = self._client.complete(messages, schema, params)
        except LLMError as exc:
            raise self._failed(exc) from exc
        return completion.model_copy(update={"model": self.model})

    def count_tokens(self, text: str) -> int:
        try:
            return len(self._process.tokenize(text, self._timeout_s))
        except OSError as exc:
            raise self._failed(LLMUnavailableError(
                f"the local model process did not tokenize: {exc}")) from exc

    def close(self) -> None:
        self._client.close()
        self._process.close()
