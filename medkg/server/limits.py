"""What every request must pass before its body is read (an ASGI middleware).

FastAPI reads a JSON body, whole, before the endpoint's dependencies run, so a
token checked by a dependency is checked after the body is in memory. Here,
ahead of the app: a request to ``/api`` without a valid bearer token is refused
before one byte of its body is read, and every body is capped (an upload at its
own limit, any other request far lower), by its ``Content-Length`` when it
says one and by counting as it arrives when it does not.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from medkg.layout import WorkspaceLayout
from medkg.server.access import reviewer_of

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_UPLOAD = 20 * 1024 * 1024  # a document, as the upload endpoint reads it
MAX_FORM = MAX_UPLOAD + 64 * 1024  # ... with the multipart framing around it
MAX_BODY = 4 * 1024 * 1024  # any other request: a question, a thousand decisions
UPLOAD_PATH = "/api/documents"


class _TooLarge(Exception):
    pass


class RequestLimits:
    def __init__(self, app: ASGIApp, layout: WorkspaceLayout) -> None:
        self.app = app
        self.layout = layout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        if path.startswith("/api") and not self._authorised(headers.get("authorization", "")):
            await _problem(send, 401, "a valid bearer token is needed", None,
                           {"www-authenticate": "Bearer"})
            return
        limit = MAX_FORM if (path == UPLOAD_PATH and scope.get("method") == "POST") \
            else MAX_BODY
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await _problem(send, 413, f"the request body is {int(declared):,} bytes; at "
                           f"most {limit:,} are read here", _HINT)
            return
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise _TooLarge
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except _TooLarge:
            if not started:
                await _problem(send, 413, f"the request body is over the {limit:,} bytes "
                               "read here", _HINT)

    def _authorised(self, header: str) -> bool:
        scheme, _, token = header.partition(" ")
        return scheme.lower() == "bearer" and bool(token.strip()) and \
            reviewer_of(self.layout, token.strip()) is not None


_HINT = "a document is uploaded as a file (POST /api/documents, 20 MB at most)"


async def _problem(send: Send, status: int, error: str, hint: str | None,
                   extra: dict[str, str] | None = None) -> None:
    body = json.dumps({"error": error, "hint": hint}).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
