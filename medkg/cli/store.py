"""``medkg store``: move the workspace's graph to another store backend."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from medkg.cli._common import (
    AuthOpt,
    GraphStoreUrlOpt,
    PasswordEnvOpt,
    UpdateUrlOpt,
    UserOpt,
    WorkspaceOpt,
    _fail,
    _run,
    console,
    out,
)
from medkg.errors import ConfigError, MedKGError

store = typer.Typer(help="The graph store: move the graph to another backend.",
                    no_args_is_help=True)


@store.command("copy")
def store_copy(
    to: Annotated[str, typer.Option("--to", help="target backend: sqlite, postgres, sparql, "
                                                  "neo4j or oxigraph")],
    url: Annotated[str, typer.Option(help="postgres: the database (postgresql://USER@HOST/DB, "
                                          "no password); sparql: the query endpoint; neo4j: "
                                          "the server (neo4j://HOST:7687)")] = "",
    schema_name: Annotated[str, typer.Option(
        help="postgres: the schema for this workspace's tables")] = "medkg",
    password_file: Annotated[str, typer.Option(
        help="postgres: a file (chmod 600) holding the password")] = "",
    database: Annotated[str, typer.Option(help="neo4j: the database")] = "neo4j",
    update_url: UpdateUrlOpt = "",
    graph_store_url: GraphStoreUrlOpt = "",
    user: UserOpt = "",
    password_env: PasswordEnvOpt = "",
    auth: AuthOpt = "basic",
    base_iri: Annotated[str, typer.Option(
        help="the graph's IRIs on the target (default: the workspace's)")] = "",
    batch_size: Annotated[int, typer.Option(help="most quads per write")] = 2000,
    replace: Annotated[bool, typer.Option(
        "--replace", help="clear the target's graph (under its base IRI) first")] = False,
    switch: Annotated[bool, typer.Option(
        "--switch", help="afterwards, keep the workspace's graph in the target")] = False,
    workspace: WorkspaceOpt = Path("."),
) -> None:
    """Copy the graph into another store backend, a batch at a time, and check that
    every count agrees; with --switch the workspace then uses that store."""
    from pydantic import ValidationError

    from medkg.config import StoreConfig
    from medkg.workspace import Workspace

    if to not in ("sqlite", "postgres", "sparql", "neo4j", "oxigraph"):
        _fail(ConfigError(f"cannot copy to {to!r}",
                          hint="--to sqlite, postgres, sparql, neo4j or oxigraph"))
    with _run(lambda: Workspace.open(workspace)) as ws:
        try:
            target = StoreConfig(
                backend=to, url=url, update_url=update_url, user=user,
                graph_store_url=graph_store_url, database=database,
                password_env=password_env, auth=auth, batch_size=batch_size,
                schema_name=schema_name, password_file=password_file,
                base_iri=base_iri or ws.settings.store.base_iri)
        except ValidationError as exc:
            _fail(ConfigError(f"bad target settings: {exc.errors()[0]['msg']}"))
            return
        total = ws.store.counts().quads
        shown = {"at": 0}

        def progress(done: int) -> None:
            if done - shown["at"] >= max(total // 20, 1) or done == total:
                console.print(f"  {done:,} / {total:,} quads")
                shown["at"] = done

        try:
            report = ws.copy_graph(target, replace=replace, switch=switch, progress=progress)
        except MedKGError as exc:
            _fail(exc)
            return
    table = Table("count", "source", "target")
    target_rows = dict(report.target.rows())
    for key, value in report.source.rows():
        table.add_row(key, str(value), str(target_rows.get(key, 0)))
    out.print(table)
    where = target.url or "the workspace's graph directory"
    unit = "objects" if report.by_objects else "quads"
    out.print(f"copied {report.quads:,} {unit} to {to} ({where}) in {report.seconds:.1f} s "
              f"({report.per_second:,.0f} {unit}/s); every count agrees"
              + (" (quads apart: the property graph keeps no RDF bookkeeping)"
                 if report.by_objects else ""))
    if switch:
        out.print(f"the workspace now keeps its graph in {to}"
                  + "; the graph in the old store is left as it was")


