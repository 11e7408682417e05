"""``medkg rdf`` and ``medkg sparql``: the graph's RDF projection, and read-only
SPARQL on the live graph without exporting it first."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from medkg.cli._common import (
    AuthOpt,
    GraphStoreUrlOpt,
    PasswordEnvOpt,
    UpdateUrlOpt,
    UserOpt,
    WorkspaceOpt,
    _fail,
    _run,
    open_to_read,
    out,
)
from medkg.errors import MedKGError

rdf = typer.Typer(help="The graph as RDF: a projection of its tables (Oxigraph).",
                  no_args_is_help=True)


@rdf.command("rebuild")
def rdf_rebuild(workspace: WorkspaceOpt = Path(".")) -> None:
    """Make the RDF projection again from the tables (it is also remade, when stale,
    before a SPARQL query)."""
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        try:
            quads = ws.rebuild_rdf()
        except MedKGError as exc:
            _fail(exc)
            return
    out.print(f"the RDF projection holds {quads:,} quads ({ws.layout.rdf})")


def sparql(
    query: Annotated[str, typer.Argument(help="a SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, "
                                              "DESCRIBE), or - to read it from stdin")],
    fmt: Annotated[str, typer.Option("--format", help="json, xml, csv or tsv (solutions); "
                                                      "nt or ttl (graphs)")] = "",
    workspace: WorkspaceOpt = Path("."),
) -> None:
    """Query the live graph (its RDF projection, remade first when the graph changed);
    updates are refused."""
    text = sys.stdin.read() if query == "-" else query
    with open_to_read(workspace) as ws:
        try:
            _media, answer = ws.sparql(text, fmt or None)
        except MedKGError as exc:
            _fail(exc)
            return
    sys.stdout.write(answer.decode("utf-8"))
    if not answer.endswith(b"\n"):
        sys.stdout.write("\n")


def publish(
    to: Annotated[str, typer.Option("--to", help="a SPARQL 1.1 server "
                                                  "(sparql+http://HOST:8890/sparql: the RDF) "
                                                  "or Neo4j (neo4j://HOST:7687: the "
                                                  "property graph)")],
    update_url: UpdateUrlOpt = "",
    graph_store_url: GraphStoreUrlOpt = "",
    user: UserOpt = "",
    password_env: PasswordEnvOpt = "",
    auth: AuthOpt = "basic",
    database: Annotated[str, typer.Option(help="the Neo4j database")] = "neo4j",
    batch_size: Annotated[int, typer.Option(help="most quads (Neo4j: nodes or "
                                                 "relationships) per request")] = 2000,
    verify: Annotated[bool, typer.Option(help="count the server's quads after")] = True,
    replace: Annotated[bool, typer.Option(
        "--replace", help="empty this graph's named graphs on the server first and send "
                          "everything")] = False,
    workspace: WorkspaceOpt = Path("."),
) -> None:
    """Publish the graph's RDF to a SPARQL server, or its property graph to Neo4j:
    only what changed since the last publish there (deletions and review decisions
    included); a publish cut short is finished by the next; the server's count is
    checked against the graph's."""
    from medkg.workspace import Workspace

    def say(what: str, n: int) -> None:
        if n % 20_000 < 2000:
            out.print(f"  {what} {n:,}")

    with _run(lambda: Workspace.open(workspace)) as ws:
        try:
            report = ws.publish(to, update_url=update_url, graph_store_url=graph_store_url,
                                user=user, password_env=password_env, auth=auth,
                                batch_size=batch_size, verify=verify, replace=replace,
                                database=database, progress=say)
        except MedKGError as exc:
            _fail(exc)
            return
    unit = report.unit
    out.print(f"published to {report.target}: {report.added:,} {unit} added or changed, "
              f"{report.removed:,} removed; the graph holds {report.quads:,}")
    if verify:
        if not report.verified:
            _fail(MedKGError(f"the server holds {report.on_server:,} {unit} of this graph, "
                             f"the graph {report.quads:,}",
                             hint="something else writes those graphs on the server (or "
                                  "this workspace's journal of it was lost): publish again "
                                  "with --replace"))
        out.print("the server's count agrees")
