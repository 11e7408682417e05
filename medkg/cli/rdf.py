"""``medkg rdf`` and ``medkg sparql``: the graph's RDF projection, and read-only
SPARQL on the live graph without exporting it first."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from medkg.cli._common import WorkspaceOpt, _fail, _run, open_to_read, out
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
