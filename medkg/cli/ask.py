"""``medkg ask`` (an answer with citations) and ``medkg retrieve`` (the evidence
only, for a language model of your own)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from medkg.cli._common import LLMOpt, WorkspaceOpt, _run, apply_llm_option, open_to_read, out


def ask(
    question: Annotated[str, typer.Argument(help="the question")],
    workspace: WorkspaceOpt = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="print the answer as JSON")] = False,
    llm: LLMOpt = None,
    mode: Annotated[str | None, typer.Option(
        help="u-retrieval (tag tree, the default), hybrid, local (entity neighbourhood), "
        "traverse (multi-hop paths from the question's entities, with the conditions the "
        "answer holds under), vector (chunk vector RAG), bm25, global or auto")] = None,
    explain: Annotated[bool, typer.Option(
        "--explain", help="also print the trace: path through the tag tree, refinement "
        "steps, the traversal's hops and paths, entities and triples used")] = False,
    show_proposed: Annotated[bool, typer.Option(
        "--show-proposed", help="also list the statements below facts.min_precision, "
        "marked 'unreviewed, low confidence' (they are never presented as facts)")] = False,
) -> None:
    """Answer a question with numbered citations and definitions (during a build,
    from what the build has committed so far). Only statements a curator accepted or
    whose calibrated confidence reaches facts.min_precision are stated as facts."""
    with open_to_read(workspace) as ws:
        _run(lambda: apply_llm_option(ws.settings, llm))
        answer = _run(lambda: ws.ask(question, mode=mode, show_proposed=show_proposed or None))
    if as_json:
        sys.stdout.write(answer.model_dump_json(indent=2) + "\n")
        return
    out.print(answer.render(), highlight=False, soft_wrap=True)
    if explain:
        out.print("\n" + answer.render_trace(), highlight=False, soft_wrap=True)


def retrieve(
    question: Annotated[str, typer.Argument(help="the question")],
    workspace: WorkspaceOpt = Path("."),
    as_json: Annotated[bool, typer.Option(
        "--json", help="print the passages, facts, conditions, definitions and the "
        "context block as JSON")] = False,
    mode: Annotated[str | None, typer.Option(
        help="as `medkg ask --mode` (default: the retrieval.mode setting)")] = None,
    top: Annotated[int, typer.Option(
        "--top", help="the best passages of the ranking to give (1-100); the passages "
        "the facts and conditions cite are added")] = 8,
    show_proposed: Annotated[bool, typer.Option(
        "--show-proposed", help="also list the statements below facts.min_precision, "
        "as proposed")] = False,
) -> None:
    """The evidence for a question, for a language model of your own: the ranked
    passages (document, offsets, text, each source's rank and score), the facts with
    their review state, the conditions and definitions, and a context block whose
    [n] cite the passages. No answer is composed and no LLM is called. Without
    --json, prints the context block."""
    with open_to_read(workspace) as ws:
        found = _run(lambda: ws.retrieve(question, mode=mode, top=top,
                                         show_proposed=show_proposed or None))
    if as_json:
        sys.stdout.write(found.model_dump_json(indent=2) + "\n")
        return
    out.print(found.context, highlight=False, soft_wrap=True, markup=False)
