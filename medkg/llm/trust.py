"""Which LLM endpoints a workspace file may send text and keys to.

A workspace can come from someone else (a colleague's directory, an archive).
Its ``medkg.toml`` could name ``llm.base_url = "https://anywhere"`` and
``llm.api_key_env = "SOME_SECRET"``; a plain ``medkg ask`` would then send that
variable as a Bearer token, with the question and the documents' text, to that
host. So an endpoint that leaves this machine, or a key variable other than
the default, is used only when it comes from the user: the environment
(``MEDKG_LLM__*``), the command line (``--llm``), the Python API, or a file the
user confirmed once with ``medkg trust``. The confirmation is kept in the
user's own configuration directory, not in the workspace, keyed by the
workspace's path and the endpoint's settings: a file edited afterwards to name
another endpoint needs confirming again.
"""

from __future__ import annotations

import ipaddress
import json
import os
import tomllib
from pathlib import Path
from urllib.parse import urlparse

from medkg import files
from medkg.config import ENV_PREFIX, LLMConfig
from medkg.errors import ConfigError
from medkg.fingerprints import fingerprint

ENDPOINT_KEYS = ("backend", "model", "base_url", "api_key_env")
DEFAULT_KEY_ENV = LLMConfig.model_fields["api_key_env"].default


def trust_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "medkg" / "trusted-endpoints.json"


def leaves_machine(cfg: LLMConfig) -> bool:
    """Whether calls go to another host (the gguf backend runs here)."""
    if cfg.backend != "openai":
        return False
    host = urlparse(cfg.base_url or "https://api.openai.com/v1").hostname or ""
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


def _from_file(config: Path, cfg: LLMConfig) -> list[str]:
    """The endpoint settings in effect that the workspace file (and nothing the
    user set since: environment, command line, API) decided."""
    try:
        raw = tomllib.loads(config.read_text(encoding="utf-8")).get("llm", {})
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []
    decided = []
    for key in ENDPOINT_KEYS:
        if (key in raw and raw[key] == getattr(cfg, key)
                and f"{ENV_PREFIX}LLM__{key.upper()}" not in os.environ):
            decided.append(key)
    return decided


def _entry(workspace: Path, cfg: LLMConfig) -> str:
    return fingerprint(str(workspace.resolve()), [getattr(cfg, k) for k in ENDPOINT_KEYS])


def _trusted() -> set[str]:
    try:
        return set(json.loads(trust_file().read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return set()


def trust(workspace: Path, cfg: LLMConfig) -> None:
    """Record that the user confirmed this workspace's endpoint settings."""
    entries = _trusted() | {_entry(workspace, cfg)}
    path = trust_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    files.write_text(path, json.dumps(sorted(entries)))


def check(workspace: Path, config: Path, cfg: LLMConfig) -> None:
    """Refuse an endpoint that the workspace file alone chose and the user has not
    confirmed, when it would send text off this machine or send a key other than
    ``OPENAI_API_KEY``."""
    if cfg.backend != "openai":
        return
    if not leaves_machine(cfg) and cfg.api_key_env == DEFAULT_KEY_ENV:
        return
    # Where the text goes and which key goes with it: the base URL (or, when it is
    # empty, the backend that turns sending to api.openai.com on) and the key variable.
    chosen = _from_file(config, cfg)
    decided: list[str] = [k for k in ("base_url", "api_key_env") if k in chosen]
    if not cfg.base_url and "backend" in chosen:
        decided.append("backend")
    if not decided or _entry(workspace, cfg) in _trusted():
        return
    where = cfg.base_url or "https://api.openai.com/v1"
    raise ConfigError(
        f"{config} sends questions and document text to {where} with the key in "
        f"${cfg.api_key_env} (set there: {', '.join(f'llm.{k}' for k in decided)}); "
        "medkg uses an endpoint from a workspace file only once you have confirmed it",
        hint=f"if you trust it: `medkg trust -w {workspace}`; or set the endpoint yourself "
        f"({ENV_PREFIX}LLM__BASE_URL, {ENV_PREFIX}LLM__API_KEY_ENV)")
