"""``medkg merges``: review entity-resolution merges and undo wrong ones."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from medkg.cli._common import WorkspaceOpt, _run, console, out

merges = typer.Typer(help="Review and undo entity-resolution merges.", no_args_is_help=True)


@merges.command("list")
def list_merges(workspace: WorkspaceOpt = Path(".")) -> None:
    """Every merge: the merged entity, the one it joined, score, method, documents."""
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        rows = ws.merges()
    table = Table("merged entity", "into", "score", "method", "mentions", "documents")
    for link, source, target in rows:
        docs = sorted({m.document_id for m in (*source.mentions, *target.mentions)})
        table.add_row(f"{source.name} ({source.id})", f"{target.name} ({target.id})",
                      f"{link.score:.3f}", link.method,
                      f"{len(source.mentions)} + {len(target.mentions)}", ", ".join(docs))
    out.print(table)
    console.print(f"{len(rows)} merge(s)")


@merges.command("undo")
def undo(
    entity_id: Annotated[str, typer.Argument(help="the merged entity's id")],
    workspace: WorkspaceOpt = Path("."),
) -> None:
    """Split an entity from the one it was merged into; later builds keep them apart."""
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        link = _run(lambda: ws.undo_merge(entity_id))
    console.print(f"{link.source} and {link.target} are now kept apart")
