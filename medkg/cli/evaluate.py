"""``medkg eval``: measure medkg on gold-standard data."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from medkg.cli._common import WorkspaceOpt, _run, out

evaluate = typer.Typer(help="Measure medkg on gold-standard data.", no_args_is_help=True)


@evaluate.command("extraction")
def eval_extraction(
    gold: Annotated[Path, typer.Option("--gold", help="a PubTator file (BC5CDR, BioRED, ...)")],
    workspace: WorkspaceOpt = Path("."),
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Entity, normalisation and relation scores of the builtin engine on a gold file.

    Uses the workspace's vocabulary (e.g. `medkg vocab load --default`).
    """
    from medkg.evaluation.extraction import evaluate as run_evaluation
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        index = ws.concept_index()
        report = _run(lambda: run_evaluation(gold, index, ws.pipeline(index),
                                             ws.relation_model(index)))
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
        return
    table = Table("measure", "P", "R", "F1")
    m = report.entities.micro
    table.add_row("entities (micro)", f"{m.p:.3f}", f"{m.r:.3f}", f"{m.f1:.3f}")
    for name, s in report.entities.by_type.items():
        table.add_row(f"  {name}", f"{s.p:.3f}", f"{s.r:.3f}", f"{s.f1:.3f}")
    r = report.relations
    table.add_row("relations (document pairs)", f"{r.p:.3f}", f"{r.r:.3f}", f"{r.f1:.3f}")
    out.print(table)
    n = report.normalization
    by_type = ", ".join(f"{t} {a:.3f}" for t, a in n.by_type.items())
    out.print(f"normalisation accuracy {n.accuracy:.3f} over {n.scored_mentions} matched "
              f"mentions ({by_type}); {report.documents} documents in {report.seconds:.1f} s")
