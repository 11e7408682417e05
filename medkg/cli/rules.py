"""``medkg rules``: the RuleHub's rules, and SHACL validation of a workspace graph."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from medkg.cli._common import (
    JsonOpt,
    WorkspaceOpt,
    _run,
    console,
    out,
    print_json,
    read_listing,
)

rules = typer.Typer(help="List the RuleHub's rules; validate a graph with SHACL.",
                    no_args_is_help=True)


@rules.command("list")
def list_rules(as_json: JsonOpt = False) -> None:
    """Every rule: id, kind, severity, the error type it reports, SHACL or not, message."""
    from medkg.pipeline import listing

    ruleset = _run(listing.rules)
    if as_json:
        print_json(ruleset)
        return
    table = Table("id", "kind", "severity", "error", "shacl", "message",
                  title=f"RuleHub v{ruleset.version}: {len(ruleset.rules)} rules")
    for r in ruleset.rules:
        table.add_row(r.id, r.kind, r.severity, r.error, "yes" if r.shacl else "",
                      r.message)
    out.print(table)


@rules.command("log")
def rule_log(
    workspace: WorkspaceOpt = Path("."),
    limit: Annotated[int, typer.Option(min=1, max=100_000)] = 50,
    as_json: JsonOpt = False,
) -> None:
    """The statements the RuleHub rejected or restated during builds, newest first,
    with the rules and their reasons."""
    from medkg.pipeline import listing

    rows = read_listing(workspace, lambda parts: listing.rule_outcomes(parts, limit), as_json)
    if rows is None:
        return
    table = Table("statement", "outcome", "rules and reasons")
    for r in rows:
        table.add_row(r.triple_id, r.outcome, r.reason)
    out.print(table)


@rules.command("check")
def check(
    workspace: WorkspaceOpt = Path("."),
    report: Annotated[Path | None, typer.Option(help="write the SHACL report (Turtle)")] = None,
    shapes: Annotated[Path | None, typer.Option(help="write the SHACL shapes (Turtle)")] = None,
) -> None:
    """Validate the workspace's graph against the rules' SHACL shapes (pySHACL).
    Exits with 1 when a hard rule is violated."""
    from medkg.rulehub.shacl import shapes_graph, validate
    from medkg.workspace import Workspace

    if shapes is not None:
        shapes_graph().serialize(shapes, format="turtle")
    with _run(lambda: Workspace.open(workspace)) as ws:
        result = _run(lambda: validate(ws.store, base_iri=ws.settings.store.base_iri))
    if report is not None:
        result.report.serialize(report, format="turtle")
    table = Table("rule", "results")
    for rule_id, n in sorted(result.by_rule.items()):
        table.add_row(rule_id, str(n))
    if result.by_rule:
        out.print(table)
    console.print(f"conforms: {result.conforms}; {result.hard_violations} violation(s) of "
                  f"hard rules, {result.warnings} warning(s)")
    if result.hard_violations:
        raise typer.Exit(code=1)
