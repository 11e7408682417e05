"""``medkg eval``: measure medkg on gold-standard data."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from medkg.cli._common import WorkspaceOpt, _run, label, out
from medkg.config import RETRIEVAL_MODES

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
        report = _run(lambda: run_evaluation(gold, index, ws.nlp(index),
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


@evaluate.command("qa")
def eval_qa(
    dataset: Annotated[Path, typer.Option("--dataset", help="a BioASQ task B file (or a "
                                          "directory of them) or a PubMedQA JSON file")],
    fmt: Annotated[str, typer.Option("--format", help="bioasq or pubmedqa")],
    mode: Annotated[str, typer.Option(help=", ".join(RETRIEVAL_MODES))] = "u-retrieval",
    workspace: Annotated[Path | None, typer.Option(
        "--workspace", "-w", help="where the dataset's workspace is built (reused when it "
        "exists); default .medkg-qa/NAME")] = None,
    limit: Annotated[int | None, typer.Option(help="ask only the first N questions")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Retrieval and answer scores on a QA dataset, in a workspace built from its texts."""
    from medkg.cli._common import console
    from medkg.evaluation.qa import READERS, chunk_keys, qa_workspace, run_questions
    if fmt not in READERS or mode not in RETRIEVAL_MODES:
        console.print(label("error:", "red", f"unknown format {fmt!r} or mode {mode!r}; "
                            f"formats: bioasq, pubmedqa; modes: {', '.join(RETRIEVAL_MODES)}"))
        raise typer.Exit(code=2)
    data = _run(lambda: READERS[fmt](dataset))
    if not data.items:
        console.print(label("error:", "red", f"{dataset}: no questions with gold documents"))
        raise typer.Exit(code=1)
    root = workspace or Path(".medkg-qa") / dataset.stem
    with _run(lambda: qa_workspace(root, data, console.print)) as ws:
        key_of_chunk = chunk_keys(ws)
        retriever = ws.retriever()
        items = data.items[:limit] if limit else data.items
        report = _run(lambda: run_questions(
            items, lambda q: ws.ask(q, mode=mode, retriever=retriever), key_of_chunk.get,
            mode, len(data.documents), len(key_of_chunk), lambda i, n: None))
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
        return
    table = Table("measure", "value")
    for name, value in report.retrieval.items():
        table.add_row(name, f"{value:.3f}")
    acc = report.answers["yesno_accuracy"]
    table.add_row("yes/no accuracy", "n/a (no answer engine said yes or no)" if acc is None
                  else f"{acc:.3f}")
    table.add_row("latency p50 / p95 ms", f"{report.latency_ms['p50']} / "
                  f"{report.latency_ms['p95']}")
    out.print(f"{report.questions} questions, mode {mode}, {report.documents} documents "
              f"({report.chunks} chunks)")
    out.print(table)
    if report.failed:
        out.print(f"{len(report.failed)} question(s) failed and are not in the scores:")
        for f in report.failed[:20]:
            out.print(f"  {f.question[:80]!r}: {f.error}", soft_wrap=True)
