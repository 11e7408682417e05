"""``medkg serve`` (the HTTP API and review page), ``medkg mcp`` (the MCP server)
and ``medkg token``."""

from __future__ import annotations

import contextlib
import ipaddress
import signal
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from medkg.cli._common import WorkspaceOpt, _fail, _run, console
from medkg.errors import WorkspaceError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from medkg.workspace import Workspace

token = typer.Typer(help="Bearer tokens for the HTTP API and the review page.",
                    no_args_is_help=True)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_host(host: str, allow_remote: bool) -> None:
    """Only a loopback address unless asked for: the API reads clinical notes."""
    if not _loopback(host) and not allow_remote:
        raise WorkspaceError(
            f"{host} is reachable from other machines",
            hint="the API serves clinical text: bind 127.0.0.1 (the default), or pass "
                 "--allow-remote behind TLS and a firewall you trust")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def page_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


@token.command("add")
def add(name: Annotated[str, typer.Argument(help="the reviewer's name (kept in the audit log)")],
        workspace: WorkspaceOpt = Path(".")) -> None:
    """Make a token for a reviewer; it is printed once (only its digest is kept)."""
    from medkg.layout import WorkspaceLayout
    from medkg.server.access import add_token
    from medkg.workspace import Workspace

    _run(lambda: Workspace.open(workspace)).close()
    secret = _run(lambda: add_token(WorkspaceLayout(workspace), name))
    console.print(f"token for {name} (shown once; kept as a digest in "
                  f"{WorkspaceLayout(workspace).tokens}):")
    typer.echo(secret)


def serve(
    workspace: WorkspaceOpt = Path("."),
    host: Annotated[str, typer.Option(help="address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="0 picks a free port")] = 8765,
    allow_remote: Annotated[bool, typer.Option(
        "--allow-remote", help="allow an address other machines can reach")] = False,
) -> None:
    """Serve the HTTP API (OpenAPI at /docs) and the review page over a workspace.
    While it runs, the server owns the workspace: other medkg commands on it stop
    and name its URL."""
    import uvicorn

    from medkg.layout import WorkspaceLayout
    from medkg.lock import claim, release
    from medkg.server.access import add_token, has_tokens
    from medkg.server.app import create_app
    from medkg.workspace import Workspace

    check_host(host, allow_remote)
    layout = WorkspaceLayout(workspace)
    with _run(lambda: Workspace.open(workspace)) as ws:
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
            sock.listen(128)  # connections wait from now on, before uvicorn serves them
        except OSError as exc:
            raise WorkspaceError(f"cannot listen on {host}:{port}: {exc.strerror}",
                                 hint="pick another --port") from exc
        url = page_url(host, sock.getsockname()[1])
        _run(lambda: claim(layout, url))
        try:
            if not has_tokens(layout):
                from medkg.cli.review import default_reviewer

                secret = add_token(layout, default_reviewer())
                console.print(f"made a token for {default_reviewer()} (shown once): open "
                              f"{url}#token={secret}")
            console.print(f"medkg serving {ws.root} at {url} (API documentation {url}docs); "
                          "Ctrl-C stops it", soft_wrap=True)
            config = uvicorn.Config(create_app(ws), log_level="warning", access_log=False)
            # uvicorn shuts down on Ctrl-C or SIGTERM, then passes the signal on: both
            # end here, so the server file goes.
            signal.signal(signal.SIGTERM, _interrupt)
            with contextlib.suppress(KeyboardInterrupt):
                uvicorn.Server(config).run(sockets=[sock])
        finally:
            release(layout)
            sock.close()
    console.print("medkg server stopped; the workspace is free for other commands")


def mcp(
    workspace: WorkspaceOpt = Path("."),
    http: Annotated[bool, typer.Option(
        "--http", help="serve streamable HTTP on loopback (bearer tokens of `medkg token "
        "add`) instead of stdio")] = False,
    host: Annotated[str, typer.Option(help="--http: a loopback address")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="--http: 0 picks a free port")
                    ] = 8766,
    allow_review: Annotated[bool, typer.Option(
        "--allow-review", help="offer the review tool (accept / reject a statement), "
        "recorded under --reviewer; without it nothing can be written")] = False,
    reviewer: Annotated[str | None, typer.Option(
        help="with --allow-review: the name the decisions are recorded under")] = None,
) -> None:
    """Serve the workspace to agents over the Model Context Protocol: tools ask,
    search_evidence, entity, define and explain; documents and chunks as resources.
    Read-only unless --allow-review --reviewer NAME. Stdio by default (stdout is the
    protocol; messages go to stderr)."""
    from medkg.errors import RequestError
    from medkg.server.mcpserver import build_server
    from medkg.workspace import Workspace

    if allow_review and not (reviewer or "").strip():
        _fail(RequestError("--allow-review needs --reviewer NAME",
                           hint="the decisions are recorded under that name"))
    if http:
        check_host(host, allow_remote=False)
    name = reviewer.strip() if allow_review and reviewer else None
    with _run(lambda: Workspace.open(workspace, access="write" if name else "read")) as ws:
        server = _run(lambda: build_server(ws, reviewer=name))
        if not http:
            console.print(f"medkg MCP server on stdio over {ws.root}"
                          + (f"; review as {name}" if name else "; read-only"), soft_wrap=True)
            server.run("stdio")
            return
        _serve_mcp_http(ws, server, host, port)


def _serve_mcp_http(ws: Workspace, server: MCPServer, host: str, port: int) -> None:
    import uvicorn

    from medkg.layout import WorkspaceLayout
    from medkg.server.access import add_token, has_tokens, reviewer_of
    from medkg.server.mcpserver import BearerTokens

    layout = WorkspaceLayout(ws.root)
    if not has_tokens(layout):
        from medkg.cli.review import default_reviewer

        secret = add_token(layout, default_reviewer())
        console.print(f"made a token for {default_reviewer()} (shown once): {secret}")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        raise WorkspaceError(f"cannot listen on {host}:{port}: {exc.strerror}",
                             hint="pick another --port") from exc
    bound = sock.getsockname()[1]
    app = BearerTokens(server.streamable_http_app(host=host),
                       lambda token: reviewer_of(layout, token) is not None)
    console.print(f"medkg MCP server at http://{host}:{bound}/mcp over {ws.root} "
                  "(Authorization: Bearer TOKEN); Ctrl-C stops it", soft_wrap=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    signal.signal(signal.SIGTERM, _interrupt)
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])
    sock.close()
