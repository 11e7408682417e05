"""Defect 9 of the reliability issue: a received workspace's ``medkg.toml`` must
not send an environment variable, the question and the documents to a host of
its choosing without the user confirming it once."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from medkg.config import LLMConfig
from medkg.errors import ConfigError
from medkg.llm import trust
from medkg.llm.port import Message
from medkg.workspace import Workspace


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        _Recorder.seen.append(self.headers.get("Authorization", ""))
        self.send_response(500)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def recorder() -> Iterator[str]:
    _Recorder.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def _received(tmp_path: Path, base_url: str, key_env: str) -> Path:
    """A workspace as someone else might hand it over: its file names the endpoint."""
    root = tmp_path / "received"
    Workspace.create(root).close()
    config = root / "medkg.toml"
    text = config.read_text(encoding="utf-8")
    text = text.replace('backend = "none"\nmodel = ""', 'backend = "openai"\nmodel = "m"', 1)
    text = text.replace('base_url = ""', f'base_url = "{base_url}"', 1)
    text = text.replace('api_key_env = "OPENAI_API_KEY"', f'api_key_env = "{key_env}"', 1)
    config.write_text(text, encoding="utf-8")
    return root


def test_defect_09_a_workspace_file_cannot_send_a_secret_until_confirmed(
        tmp_path: Path, recorder: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SECRET", "s3cret")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # the recorder is on loopback
    root = _received(tmp_path, recorder, "MY_SECRET")
    with Workspace.open(root) as ws:
        with pytest.raises(ConfigError, match="only once you have confirmed it") as err:
            ws.llm()
        assert "MY_SECRET" in err.value.message and "medkg trust" in (err.value.hint or "")
    assert _Recorder.seen == []  # nothing was sent
    with Workspace.open(root) as ws:
        ws.trust_endpoint()
    with Workspace.open(root) as ws:
        ws.settings.llm.max_retries = 0
        llm = ws.llm()  # confirmed: now used
        with pytest.raises(Exception) as sent:
            llm.backend.complete([Message(role="user", content="hi")], None, llm.params)
    assert _Recorder.seen, sent.value
    assert _Recorder.seen[0] == "Bearer s3cret"


def test_defect_09_an_edited_endpoint_needs_confirming_again(tmp_path: Path, recorder: str
                                                             ) -> None:
    root = _received(tmp_path, recorder, "MY_SECRET")
    with Workspace.open(root) as ws:
        ws.trust_endpoint()
    config = root / "medkg.toml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        recorder, "https://collector.example.net/v1"), encoding="utf-8")
    with Workspace.open(root) as ws, pytest.raises(ConfigError):
        ws.llm()


def test_defect_09_the_users_own_settings_need_no_confirmation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _received(tmp_path, "https://collector.example.net/v1", "MY_SECRET")
    # The environment is the user's: it overrides the file and is used as given.
    monkeypatch.setenv("MEDKG_LLM__BASE_URL", "https://api.example.org/v1")
    monkeypatch.setenv("MEDKG_LLM__API_KEY_ENV", "OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with Workspace.open(root) as ws:
        trust.check(ws.root, ws.layout.config, ws.settings.llm)


def test_which_endpoints_leave_the_machine() -> None:
    assert trust.leaves_machine(LLMConfig(backend="openai"))
    assert trust.leaves_machine(LLMConfig(backend="openai", base_url="https://x.org/v1"))
    assert not trust.leaves_machine(LLMConfig(backend="openai", base_url="http://127.0.0.1:8/v1"))
    assert not trust.leaves_machine(LLMConfig(backend="openai", base_url="http://[::1]:8/v1"))
    assert not trust.leaves_machine(LLMConfig(backend="openai", base_url="http://localhost/v1"))
    assert not trust.leaves_machine(LLMConfig(backend="gguf", model="m.gguf"))
