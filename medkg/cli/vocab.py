"""``medkg vocab``: load, list, show, search, diff and export the vocabulary layer."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from medkg.cli._common import (
    JsonOpt,
    WorkspaceOpt,
    _fail,
    _progress,
    _run,
    console,
    label,
    out,
    read_listing,
)
from medkg.errors import MedKGError

if TYPE_CHECKING:
    from medkg.workspace import Workspace

vocab = typer.Typer(help="The vocabulary layer: load, list, show and search concepts.",
                    no_args_is_help=True)


def load_vocabulary(ws: Workspace, path: Path | None) -> None:
    with _progress() as progress:
        load = _run(lambda: ws.load_vocabulary(path, progress))
    where = path or ("the installed packages (HPO with its genes, MeSH, MeSH diseases, "
                     "drug names, HGNC genes)")
    console.print(f"loaded {len(load.concepts)} concepts from {where} ({load.source})")
    for warning in load.warnings:
        console.print(label("warning:", "yellow", warning))


@vocab.command("load")
def vocab_load(
    paths: Annotated[list[Path] | None, typer.Argument(
        help=".obo file, UMLS META directory, MeSH list or .tsv/.csv table")] = None,
    default: Annotated[bool, typer.Option(
        "--default", help="the vocabulary installed packages ship: HPO, MeSH, drugs")] = False,
    workspace: WorkspaceOpt = Path("."),
) -> None:
    """Load vocabularies into the vocabulary layer (E3)."""
    from medkg.workspace import Workspace

    if not paths and not default:
        _fail(MedKGError("nothing to load", hint="give files or directories, or --default"))
    with _run(lambda: Workspace.open(workspace)) as ws:
        if default:
            load_vocabulary(ws, None)
        for path in paths or []:
            load_vocabulary(ws, path)


@vocab.command("list")
def vocab_list(workspace: WorkspaceOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Concept counts by source and semantic group."""
    from medkg.pipeline import listing

    groups = read_listing(workspace, listing.vocabulary, as_json)
    if groups is None:
        return
    table = Table("source", "group", "concepts", "with definition")
    for g in groups:
        table.add_row(g.source, f"{g.group} {g.group_name}", str(g.concepts),
                      str(g.with_definition))
    out.print(table)


@vocab.command("show")
def vocab_show(
    concept_id: Annotated[str, typer.Argument(help="e.g. HP:0001250 or UMLS:C0011849")],
    workspace: WorkspaceOpt = Path("."),
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """One concept with its names, definition, type, parents and cross-references."""
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        # Any id finds its concept: its own, a replaced one, or one merged into it.
        found = ws.concept_index().resolve(concept_id)
        concept = found or _run(lambda: ws.store.concept(concept_id))
    if as_json:
        sys.stdout.write(concept.model_dump_json(indent=2) + "\n")
        return
    for key, value in concept.model_dump().items():
        if value not in (None, [], False):
            shown = ", ".join(value) if isinstance(value, list) else str(value)
            out.print(label(f"{key}:", "bold", shown))


@vocab.command("search")
def vocab_search(
    text: Annotated[str, typer.Argument(help="a name, synonym, abbreviation or misspelling")],
    k: Annotated[int, typer.Option("-k", help="how many candidates")] = 5,
    workspace: WorkspaceOpt = Path("."),
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Ranked concept candidates for a piece of text."""
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        candidates = ws.concept_index().search(text, k)
    if as_json:
        rows = [{"id": c.concept.id, "name": c.concept.name, "score": round(c.score, 4),
                 "method": c.method, "term": c.term} for c in candidates]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    table = Table("score", "id", "name", "group", "matched", "how")
    for c in candidates:
        table.add_row(f"{c.score:.3f}", c.concept.id, c.concept.name,
                      c.concept.semantic_group or "-", c.term, c.method)
    out.print(table)


@vocab.command("diff")
def vocab_diff(
    old: Annotated[Path, typer.Argument(help="the older release (any vocabulary format)")],
    new: Annotated[Path, typer.Argument(help="the newer release")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Added, removed, renamed and obsoleted concepts between two releases."""
    from medkg.ontology.diff import diff
    from medkg.ontology.loaders import load_file

    result = diff(_run(lambda: load_file(old)).concepts, _run(lambda: load_file(new)).concepts)
    if as_json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
        return
    out.print(result.summary(), highlight=False)
    for r in result.renamed[:20]:
        out.print(f"  renamed   {r.id}: {r.old!r} -> {r.new!r}", highlight=False)
    for o in result.obsoleted[:20]:
        out.print(f"  obsoleted {o.id} {o.name!r} -> {o.replaced_by or 'no replacement'}",
                  highlight=False)


@vocab.command("export")
def vocab_export(
    output: Annotated[Path, typer.Argument(help="file to write")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="skos (Turtle) or owl (RDF/XML)")]
    = "skos",
    check: Annotated[bool, typer.Option(
        "--check", help="with owl: run the HermiT reasoner (needs Java) on the result")] = False,
    workspace: WorkspaceOpt = Path("."),
) -> None:
    """Export the vocabulary layer as SKOS or OWL."""
    from medkg.export.vocabulary import check_owl, to_skos, write_owl
    from medkg.store.vocab import IRIs
    from medkg.workspace import Workspace

    if fmt not in {"skos", "owl"}:
        _fail(MedKGError(f"unknown vocabulary export format {fmt!r}", hint="use skos or owl"))
    with _run(lambda: Workspace.open(workspace)) as ws:
        concepts = ws.store.concepts()
        iris = IRIs(ws.settings.store.base_iri)  # the store mints concept IRIs the same way
    base = iris.base.rstrip("/")
    if fmt == "skos":
        to_skos(concepts, iris, f"{base}/vocabulary").serialize(output, format="turtle")
    else:
        write_owl(concepts, iris, f"{base}/vocabulary.owl", output)
        if check:
            _run(lambda: check_owl(output))
            console.print("HermiT: consistent, no unsatisfiable classes")
    console.print(f"wrote {len(concepts)} concepts to {output}")
