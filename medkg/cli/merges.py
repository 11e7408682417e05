"""``medkg merges``: review entity-resolution merges and undo wrong ones."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from medkg.cli._common import WorkspaceOpt, _run, console, out
from medkg.cli.review import ReviewerOpt, default_reviewer

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
    reviewer: ReviewerOpt = None,
    reason: Annotated[str, typer.Option("--reason", "-r")] = "",
) -> None:
    """Split an entity from the one it was merged into; later builds keep them apart
    (the same as ``medkg review split``: on record in the audit log)."""
    from medkg.model import ReviewAction
    from medkg.pipeline.review import Request
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        decision = _run(lambda: ws.review(Request(ReviewAction.SPLIT, entity_id, reason),
                                          reviewer or default_reviewer()))
        before = decision.before
    target = getattr(before, "target", "?")
    console.print(f"{entity_id} and {target} are now kept apart (decision {decision.id})")
