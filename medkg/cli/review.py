"""``medkg review``: the curator's commands, for scripts as much as for people
(``--json`` on each). Every decision names its reviewer (``--reviewer``, else
``$MEDKG_REVIEWER``, else the login name) and is kept in the audit log."""

from __future__ import annotations

import getpass
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel
from rich.table import Table

from medkg.cli._common import WorkspaceOpt, _run, console, out
from medkg.model import (
    Decision,
    EntityEdit,
    Layer,
    Predicate,
    Qualifiers,
    ReviewAction,
    ReviewState,
    ReviewTarget,
    StatementEdit,
)

review = typer.Typer(help="Review the graph: the queue, decisions, their audit log.",
                     no_args_is_help=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON")]
ReasonOpt = Annotated[str, typer.Option("--reason", "-r", help="why (kept in the audit log)")]


def default_reviewer() -> str:
    return os.environ.get("MEDKG_REVIEWER") or getpass.getuser()


ReviewerOpt = Annotated[str | None, typer.Option(
    "--reviewer", help="who decides (default: $MEDKG_REVIEWER, else your login name)")]


def _dump(value: Any) -> None:
    def plain(v: Any) -> Any:
        if isinstance(v, BaseModel):
            return v.model_dump(mode="json")
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    sys.stdout.write(json.dumps(plain(value), indent=2, ensure_ascii=False) + "\n")


def _said(decision: Decision, as_json: bool) -> None:
    if as_json:
        _dump(decision)
        return
    console.print(f"{decision.action.value} {decision.target_kind.value} {decision.target} "
                  f"by {decision.reviewer} (decision {decision.id})", soft_wrap=True)


def _decide(workspace: Path, reviewer: str | None, as_json: bool, **request: Any) -> None:
    from medkg.pipeline.review import Request
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        decision = _run(lambda: ws.review(Request(**request), reviewer or default_reviewer()))
    _said(decision, as_json)


@review.command("queue")
def queue(
    workspace: WorkspaceOpt = Path("."),
    layer: Annotated[Layer | None, typer.Option(help="user or literature")] = None,
    predicate: Annotated[Predicate | None, typer.Option()] = None,
    entity: Annotated[str | None, typer.Option(help="an entity id or part of a name")] = None,
    document: Annotated[str | None, typer.Option(help="a document id")] = None,
    state: Annotated[str, typer.Option(
        help="proposed, accepted, rejected, edited or any")] = "proposed",
    kind: Annotated[ReviewTarget | None, typer.Option(help="statement or merge")] = None,
    limit: Annotated[int, typer.Option(min=1)] = 50,
    as_json: JsonOpt = False,
) -> None:
    """What to review first: statements and merges by priority, with the reasons."""
    from medkg.errors import ReviewError
    from medkg.review.queue import QueueFilter
    from medkg.workspace import Workspace

    if state != "any" and state not in {s.value for s in ReviewState}:
        raise ReviewError(f"unknown state {state!r}",
                          hint="proposed, accepted, rejected, edited or any")
    flt = QueueFilter(layer=layer, predicate=predicate, entity=entity, document=document,
                      state=None if state == "any" else ReviewState(state), kind=kind)
    with _run(lambda: Workspace.open(workspace)) as ws:
        items = _run(lambda: ws.review_queue(flt))
    if as_json:
        _dump({"total": len(items), "items": items[:limit]})
        return
    table = Table("priority", "kind", "id", "statement / merge", "state", "why")
    for item in items[:limit]:
        table.add_row(f"{item.priority:.2f}", item.kind.value, item.id, item.label,
                      item.state.value, "; ".join(r.code for r in item.reasons))
    out.print(table)
    console.print(f"{len(items)} item(s); showing {min(limit, len(items))}")


@review.command("show")
def show(
    target: Annotated[str, typer.Argument(help="a statement (tri-...) or entity (ent-...) id")],
    workspace: WorkspaceOpt = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """A statement or an entity with everything a curator needs, and its history."""
    from medkg.review.views import view_of
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        view = _run(lambda: view_of(ws.store, target))
    if as_json:
        _dump(view)
        return
    out.print(view.render(), highlight=False, soft_wrap=True)


@review.command("accept")
def accept(target: Annotated[str, typer.Argument(help="statement id")],
           workspace: WorkspaceOpt = Path("."), reason: ReasonOpt = "",
           reviewer: ReviewerOpt = None, as_json: JsonOpt = False) -> None:
    """Accept a statement."""
    _decide(workspace, reviewer, as_json, action=ReviewAction.ACCEPT, target=target,
            reason=reason)


@review.command("reject")
def reject(target: Annotated[str, typer.Argument(help="statement id")],
           workspace: WorkspaceOpt = Path("."), reason: ReasonOpt = "",
           reviewer: ReviewerOpt = None, as_json: JsonOpt = False) -> None:
    """Reject a statement: no answer uses it, no rebuild brings it back."""
    _decide(workspace, reviewer, as_json, action=ReviewAction.REJECT, target=target,
            reason=reason)


@review.command("edit")
def edit(
    target: Annotated[str, typer.Argument(help="statement id")],
    workspace: WorkspaceOpt = Path("."),
    predicate: Annotated[Predicate | None, typer.Option()] = None,
    head: Annotated[str | None, typer.Option(help="another head entity id")] = None,
    tail: Annotated[str | None, typer.Option(help="another tail entity id")] = None,
    negated: Annotated[bool | None, typer.Option("--negated/--not-negated")] = None,
    uncertain: Annotated[bool | None, typer.Option("--uncertain/--certain")] = None,
    reason: ReasonOpt = "", reviewer: ReviewerOpt = None, as_json: JsonOpt = False,
) -> None:
    """Replace a statement by the curator's version (what is not given stays)."""
    from medkg.pipeline.review import Request
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        triple = _run(lambda: ws.store.triple(target))
        q = triple.qualifiers
        quals = Qualifiers(**{**q.model_dump(),
                              **({"negated": negated} if negated is not None else {}),
                              **({"uncertain": uncertain} if uncertain is not None else {})})
        after = StatementEdit(head=head or triple.head, predicate=predicate or triple.predicate,
                              tail=tail or triple.tail, qualifiers=quals)
        decision = _run(lambda: ws.review(Request(ReviewAction.EDIT, target, reason, after),
                                          reviewer or default_reviewer()))
    _said(decision, as_json)


@review.command("rename")
def rename(target: Annotated[str, typer.Argument(help="entity id")],
           name: Annotated[str, typer.Argument(help="the new name")],
           workspace: WorkspaceOpt = Path("."), reason: ReasonOpt = "",
           reviewer: ReviewerOpt = None, as_json: JsonOpt = False) -> None:
    """Give an entity another name."""
    _decide(workspace, reviewer, as_json, action=ReviewAction.RENAME, target=target,
            reason=reason, after=EntityEdit(name=name))


@review.command("retype")
def retype(target: Annotated[str, typer.Argument(help="entity id")],
           type_: Annotated[str, typer.Argument(metavar="TYPE", help="a semantic group: "
                                                "CHEM, DISO, ...")],
           workspace: WorkspaceOpt = Path("."), reason: ReasonOpt = "",
           reviewer: ReviewerOpt = None, as_json: JsonOpt = False) -> None:
    """Give an entity another semantic group."""
    _decide(workspace, reviewer, as_json, action=ReviewAction.RETYPE, target=target,
            reason=reason, after=EntityEdit(type=type_.upper()))


@review.command("renormalise")
def renormalise(target: Annotated[str, typer.Argument(help="entity id")],
                concepts: Annotated[list[str], typer.Argument(help="concept ids (CURIEs)")],
                workspace: WorkspaceOpt = Path("."), reason: ReasonOpt = "",
                reviewer: ReviewerOpt = None, as_json: JsonOpt = False) -> None:
    """Normalise an entity to other vocabulary concepts (its definitions follow)."""
    _decide(workspace, reviewer, as_json, action=ReviewAction.RENORMALISE, target=target,
            reason=reason, after=EntityEdit(concept_ids=concepts))


@review.command("confirm")
def confirm(target: Annotated[str, typer.Argument(help="the merged entity's id")],
            workspace: WorkspaceOpt = Path("."), reason: ReasonOpt = "",
            reviewer: ReviewerOpt = None, as_json: JsonOpt = False) -> None:
    """Confirm an entity-resolution merge: later builds keep it."""
    _decide(workspace, reviewer, as_json, action=ReviewAction.CONFIRM, target=target,
            reason=reason)


@review.command("split")
def split(target: Annotated[str, typer.Argument(help="the merged entity's id")],
          workspace: WorkspaceOpt = Path("."), reason: ReasonOpt = "",
          reviewer: ReviewerOpt = None, as_json: JsonOpt = False) -> None:
    """Split a merged entity from the one it joined: later builds keep them apart."""
    _decide(workspace, reviewer, as_json, action=ReviewAction.SPLIT, target=target,
            reason=reason)


@review.command("undo")
def undo(decision: Annotated[str, typer.Argument(help="the decision's id (rev-...)")],
         workspace: WorkspaceOpt = Path("."), reason: ReasonOpt = "",
         reviewer: ReviewerOpt = None, as_json: JsonOpt = False) -> None:
    """Take a decision back (the undo is on record too)."""
    _decide(workspace, reviewer, as_json, action=ReviewAction.UNDO, undoes=decision,
            reason=reason)


@review.command("log")
def log(target: Annotated[str | None, typer.Argument(help="only this target's decisions")] = None,
        workspace: WorkspaceOpt = Path("."), as_json: JsonOpt = False) -> None:
    """The audit log: who decided what, when, why; oldest first."""
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        decisions = _run(lambda: ws.review_log(target))
    if as_json:
        _dump(decisions)
        return
    table = Table("when (UTC)", "reviewer", "action", "target", "reason", "decision")
    for d in decisions:
        what = f"undo {d.undoes}" if d.action is ReviewAction.UNDO else d.action.value
        table.add_row(d.at.strftime("%Y-%m-%d %H:%M:%S"), d.reviewer, what,
                      f"{d.target_kind.value} {d.target}", d.reason, d.id)
    out.print(table)
    console.print(f"{len(decisions)} decision(s)")


@review.command("import")
def import_(path: Annotated[Path, typer.Argument(help="decisions as .jsonl or .tsv")],
            workspace: WorkspaceOpt = Path("."), reviewer: ReviewerOpt = None,
            as_json: JsonOpt = False) -> None:
    """Apply decisions made elsewhere (every row is checked before any is applied)."""
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        done = _run(lambda: ws.import_decisions(path, reviewer or default_reviewer()))
    if as_json:
        _dump({"recorded": len(done.decisions), "skipped": done.skipped,
               "unresolved": done.applied.unresolved})
        return
    console.print(f"recorded {len(done.decisions)} decision(s); {done.skipped} were on record "
                  "already")


@review.command("export")
def export(path: Annotated[Path, typer.Argument(help="file to write: .jsonl or .tsv")],
           workspace: WorkspaceOpt = Path("."),
           force: Annotated[bool, typer.Option("--force", help="replace the file")] = False
           ) -> None:
    """Every decision, as JSONL or TSV."""
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        n = _run(lambda: ws.export_decisions(path, overwrite=force))
    console.print(f"wrote {n} decision(s) to {path}")
