"""The ``medkg`` command line (Typer + Rich)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from medkg.errors import MedKGError
from medkg.model import Layer

app = typer.Typer(
    name="medkg",
    help="Build a layered medical knowledge graph from documents and ask it questions.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
console = Console(stderr=True)
out = Console()

DEFAULT_QUESTION = "What is the first-line treatment for type 2 diabetes, and what are its risks?"

WorkspaceOpt = Annotated[
    Path, typer.Option("--workspace", "-w", help="workspace directory", show_default=True)
]
T = TypeVar("T")

if TYPE_CHECKING:
    from medkg.workspace import Workspace


def _fail(exc: MedKGError) -> None:
    console.print(f"[bold red]error:[/] {exc.message}", highlight=False)
    if exc.hint:
        console.print(f"[yellow]hint:[/] {exc.hint}", highlight=False)
    raise typer.Exit(code=1)


def _run(action: Callable[[], T]) -> T:
    try:
        return action()
    except MedKGError as exc:
        _fail(exc)
        raise  # unreachable: _fail exits


@contextmanager
def _progress() -> Iterator[Callable[[str, int, int], None]]:
    """A Rich progress bar per stage, fed by the workspace's progress callback."""
    with Progress(
        TextColumn("{task.description:<8}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), console=console, transient=False, disable=not console.is_terminal,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


@app.command()
def init(path: Annotated[Path, typer.Argument(help="directory to create")] = Path(".")) -> None:
    """Create a workspace (a directory with medkg.toml and its stores)."""
    from medkg.workspace import Workspace

    ws = _run(lambda: Workspace.create(path))
    ws.close()
    console.print(f"created workspace {path} (settings in {path / 'medkg.toml'})")


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="files or directories")],
    layer: Annotated[Layer, typer.Option(help="which layer the documents belong to")] = Layer.USER,
    workspace: WorkspaceOpt = Path("."),
) -> None:
    """Ingest documents (.txt .md .jsonl .pdf) or, with --layer vocabulary, an OBO file."""
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        if layer is Layer.VOCABULARY:
            for path in paths:
                _load_vocabulary(ws, path)
            return
        with _progress() as progress:
            report = _run(lambda: ws.ingest(paths, layer, progress))
    console.print(
        f"ingested {report.documents} document(s), {report.chunks} chunk(s); "
        f"{report.skipped} already present"
    )
    for failed, why in report.failed.items():
        console.print(f"[red]skipped[/] {failed}: {why.split(': ', 1)[-1]}", highlight=False)
    if report.failed and not report.documents and not report.skipped:
        raise typer.Exit(code=1)


@app.command()
def build(workspace: WorkspaceOpt = Path(".")) -> None:
    """Extract entities and triples from new documents and link the three layers."""
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws, _progress() as progress:
        report = _run(lambda: ws.build(progress))
    console.print(
        f"built {report.documents} new document(s); the graph has {report.entities} entities, "
        f"{report.triples} triples and {report.links} cross-layer links"
    )


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="the question")],
    workspace: WorkspaceOpt = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="print the answer as JSON")] = False,
) -> None:
    """Answer a question with numbered citations and definitions."""
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        answer = _run(lambda: ws.ask(question))
    if as_json:
        sys.stdout.write(answer.model_dump_json(indent=2) + "\n")
    else:
        out.print(answer.render(), highlight=False, soft_wrap=True)


@app.command()
def stats(workspace: WorkspaceOpt = Path(".")) -> None:
    """Counts of documents, chunks, entities, triples, concepts and links."""
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        counts = ws.store.counts()
    table = Table("what", "count")
    for key, value in counts.items():
        table.add_row(key, str(value))
    out.print(table)


@app.command()
def export(
    output: Annotated[Path, typer.Argument(help="file to write")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="ttl, trig, nq or jsonld")] = "ttl",
    workspace: WorkspaceOpt = Path("."),
) -> None:
    """Export the whole graph (all layers, links, provenance) as RDF."""
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        _run(lambda: ws.export(output, fmt))
    console.print(f"wrote {output}")


vocab = typer.Typer(help="The vocabulary layer: load, list, show and search concepts.",
                    no_args_is_help=True)
app.add_typer(vocab, name="vocab")


def _load_vocabulary(ws: Workspace, path: Path | None) -> None:
    with _progress() as progress:
        load = _run(lambda: ws.load_vocabulary(path, progress))
    where = path or "the installed packages (HPO, MeSH labels, drug names)"
    console.print(f"loaded {len(load.concepts)} concepts from {where} ({load.source})")
    for warning in load.warnings:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)


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
            _load_vocabulary(ws, None)
        for path in paths or []:
            _load_vocabulary(ws, path)


@vocab.command("list")
def vocab_list(workspace: WorkspaceOpt = Path(".")) -> None:
    """Concept counts by source and semantic group."""
    from collections import Counter

    from medkg.ontology.semantic import GROUPS
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        concepts = ws.store.concepts()
    table = Table("source", "group", "concepts", "with definition")
    counts = Counter((c.source, c.semantic_group or "-") for c in concepts)
    defined = Counter((c.source, c.semantic_group or "-") for c in concepts if c.definition)
    for (source, group), n in sorted(counts.items()):
        table.add_row(source, f"{group} {GROUPS.get(group, '')}", str(n),
                      str(defined[(source, group)]))
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
        concept = _run(lambda: ws.store.concept(concept_id))
    if as_json:
        sys.stdout.write(concept.model_dump_json(indent=2) + "\n")
        return
    for key, value in concept.model_dump().items():
        if value not in (None, [], False):
            out.print(f"[bold]{key}[/]: {', '.join(value) if isinstance(value, list) else value}",
                      highlight=False)


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
    from medkg.ontology.export import check_owl, to_skos, write_owl
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


evaluate = typer.Typer(help="Measure medkg on gold-standard data.", no_args_is_help=True)
app.add_typer(evaluate, name="eval")


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
                                             ws.relation_model()))
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
    out.print(f"normalisation accuracy {report.normalization['accuracy']:.3f} over "
              f"{report.normalization['scored_mentions']} matched mentions; "
              f"{report.documents} documents in {report.seconds:.1f} s")


def _examples_dir(given: Path | None) -> Path:
    candidates = [given] if given else [Path("examples"), Path(__file__).parents[1] / "examples"]
    for candidate in candidates:
        if candidate and (candidate / "vocabulary").is_dir():
            return candidate
    raise MedKGError(
        "cannot find the sample documents (an examples/ directory with vocabulary/, "
        "literature/ and user/)", hint="run from the repository root or pass --examples DIR",
    )


@app.command()
def demo(
    directory: Annotated[Path, typer.Option("--dir", help="demo workspace")] = Path(".medkg-demo"),
    examples: Annotated[Path | None, typer.Option(help="sample data directory")] = None,
    question: Annotated[list[str] | None, typer.Option("--question", "-q")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Build a KG from the bundled sample documents and answer sample questions."""
    from medkg.workspace import Workspace

    source = _run(lambda: _examples_dir(examples))
    with _run(lambda: Workspace.create(directory, exist_ok=True)) as ws:
        for obo in sorted((source / "vocabulary").glob("*.obo")):
            _load_vocabulary(ws, obo)
        with _progress() as progress:
            for layer in (Layer.LITERATURE, Layer.USER):
                r = _run(lambda lay=layer: ws.ingest([source / lay.value], lay, progress))  # type: ignore[misc]
                console.print(f"{layer.value}: {r.documents} new document(s), {r.chunks} chunks, "
                              f"{r.skipped} already present")
            b = _run(lambda: ws.build(progress))
        console.print(f"graph: {b.entities} entities, {b.triples} triples, {b.links} "
                      f"cross-layer links ({b.documents} document(s) new to this build)")
        answers = [_run(lambda q=q: ws.ask(q)) for q in (question or [DEFAULT_QUESTION])]  # type: ignore[misc]
    if as_json:
        sys.stdout.write(json.dumps([a.model_dump(mode="json") for a in answers], indent=2) + "\n")
        return
    for answer in answers:
        out.rule()
        out.print(answer.render(), highlight=False, soft_wrap=True)


def main() -> None:  # pragma: no cover - console script entry
    app()
