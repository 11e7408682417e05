"""Who may use a workspace's server: ``tokens.json`` (mode 0600) maps bearer
tokens to reviewer names; the first is made by ``medkg init`` for the login name,
more by ``medkg token add NAME``. Only digests of the tokens are stored, so the
file alone lets no one in. (Which process owns a served workspace:
:mod:`medkg.lock`.)"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from medkg.errors import WorkspaceError
from medkg.files import atomic_text
from medkg.layout import WorkspaceLayout

TOKEN_BYTES = 32


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Reviewer:
    name: str


def _read(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data["tokens"]
        assert isinstance(entries, list)
        return [{"name": str(e["name"]), "sha256": str(e["sha256"])} for e in entries]
    except (ValueError, KeyError, TypeError, AssertionError) as exc:
        raise WorkspaceError(f"{path} is damaged: {exc}",
                             hint="delete it and make a token with `medkg token add NAME`"
                             ) from exc


def add_token(layout: WorkspaceLayout, name: str) -> str:
    """A new token for ``name``; returned once, only its digest is kept."""
    name = " ".join(name.split())
    if not name or len(name) > 120:
        raise WorkspaceError("a reviewer name has 1 to 120 characters")
    entries = _read(layout.tokens)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    entries.append({"name": name, "sha256": _digest(token)})
    with atomic_text(layout.tokens) as fh:
        fh.write(json.dumps({"tokens": entries}, indent=2) + "\n")  # mode 0600
    return token


def reviewer_of(layout: WorkspaceLayout, token: str) -> Reviewer | None:
    """The reviewer a bearer token belongs to, or None."""
    digest = _digest(token)
    found = None
    for entry in _read(layout.tokens):
        if hmac.compare_digest(entry["sha256"], digest):
            found = Reviewer(entry["name"])
    return found


def has_tokens(layout: WorkspaceLayout) -> bool:
    return bool(_read(layout.tokens))


# -- the server file --------------------------------------------------------------
