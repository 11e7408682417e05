"""``medkg merges``: review entity-resolution merges and undo wrong ones."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from medkg.cli._common import JsonOpt, WorkspaceOpt, _run, console, out, read_listing
from medkg.cli.review import ReviewerOpt, default_reviewer

merges = typer.Typer(help="Review and undo entity-resolution merges.", no_args_is_help=True)


@merges.command("list")
def list_merges(workspace: WorkspaceOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Every merge: the merged entity, the one it joined, score, method, documents."""
    from medkg.pipeline import listing

    rows = read_listing(workspace, listing.merges, as_json)
    if rows is None:
        return
    table = Table("merged entity", "into", "score", "method", "mentions", "documents")
    for m in rows:
        table.add_row(f"{m.source_name} ({m.source})", f"{m.target_name} ({m.target})",
                      f"{m.score:.3f}", m.method, f"{m.source_mentions} + {m.target_mentions}",
                      ", ".join(m.documents))
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
