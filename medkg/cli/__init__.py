"""The ``medkg`` command line (Typer + Rich): the core commands; ``vocab`` and
``eval`` live in their own modules."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from medkg.cli._common import (
    Group,
    LLMOpt,
    WorkspaceOpt,
    _fail,
    _progress,
    _run,
    apply_llm_option,
    console,
    label,
    open_to_read,
    out,
)
from medkg.cli.ask import ask, retrieve
from medkg.cli.evaluate import evaluate
from medkg.cli.listing import documents, stats, status
from medkg.cli.merges import merges
from medkg.cli.rdf import publish, rdf, sparql
from medkg.cli.review import review
from medkg.cli.rules import rules
from medkg.cli.serve import mcp, serve, token
from medkg.cli.store import store
from medkg.cli.vocab import load_vocabulary, vocab
from medkg.engines import build_uses_llm
from medkg.errors import MedKGError
from medkg.model import Layer

app = typer.Typer(
    cls=Group,
    name="medkg",
    help="Build a layered medical knowledge graph from documents and ask it questions.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(vocab, name="vocab")
app.add_typer(evaluate, name="eval")
app.add_typer(merges, name="merges")
app.add_typer(rules, name="rules")
app.add_typer(review, name="review")
app.add_typer(token, name="token")
app.add_typer(store, name="store")
app.add_typer(rdf, name="rdf")
app.command()(sparql)
app.command()(publish)
app.command()(serve)
app.command()(mcp)

DEFAULT_QUESTION = "What is the first-line treatment for type 2 diabetes, and what are its risks?"


@app.command()
def init(path: Annotated[Path, typer.Argument(help="directory to create")] = Path(".")) -> None:
    """Create a workspace (a directory with medkg.toml and its stores)."""
    from medkg.cli.review import default_reviewer
    from medkg.cli.serve import page_url
    from medkg.server.access import add_token
    from medkg.workspace import Workspace

    ws = _run(lambda: Workspace.create(path))
    ws.close()
    console.print(f"created workspace {path} (settings in {ws.layout.config})")
    secret = _run(lambda: add_token(ws.layout, default_reviewer()))
    console.print(f"review page and API for {default_reviewer()}: run `medkg serve -w {path}`, "
                  f"then open {page_url('127.0.0.1', 8765)}#token={secret} (the token is shown "
                  "once; `medkg token add NAME` makes more)", soft_wrap=True)


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="files or directories")],
    layer: Annotated[Layer, typer.Option(help="which layer the documents belong to")] = Layer.USER,
    sync: Annotated[bool, typer.Option(
        "--sync", help="mirror the directories given: new files added, changed files "
        "replaced, documents of removed files deleted")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="with --sync: list what would be added, changed and removed")] = False,
    workspace: WorkspaceOpt = Path("."),
) -> None:
    """Ingest documents (.txt .md .jsonl .pdf) or, with --layer vocabulary, vocabularies.
    A file ingested again after an edit replaces its earlier version."""
    from medkg.workspace import Workspace

    if dry_run and not sync:
        _fail(MedKGError("--dry-run goes with --sync",
                         hint="medkg ingest --sync --dry-run DIR"))
    if sync and layer is Layer.VOCABULARY:
        _fail(MedKGError("--sync mirrors documents, not vocabularies",
                         hint="medkg vocab load FILE replaces a vocabulary"))
    if dry_run:
        with open_to_read(workspace) as ws:
            plan = _run(lambda: ws.plan_sync(paths, layer))
        for what, sources in (("add", plan.added), ("update", plan.changed),
                              ("delete", plan.removed)):
            for source in sources:  # tab-separated, for scripts
                sys.stdout.write(f"{what}\t{source}\n")
        for old, new in plan.moved:
            sys.stdout.write(f"move\t{old}\t{new}\n")
        for failed, why in plan.failed.items():
            reason = why.splitlines()[0].split(": ", 1)[-1]
            sys.stdout.write(f"unreadable\t{failed}\t{reason}\n")
        console.print(f"would add {len(plan.added)}, update {len(plan.changed)}, delete "
                      f"{len(plan.removed)}, move {len(plan.moved)}; "
                      f"{len(plan.unchanged)} unchanged, "
                      f"{len(plan.failed)} unreadable (kept as they are)")
        return
    with _run(lambda: Workspace.open(workspace)) as ws:
        if layer is Layer.VOCABULARY:
            for path in paths:
                load_vocabulary(ws, path)
            return
        with _progress() as progress:
            report = _run(lambda: ws.ingest(paths, layer, progress, sync=sync))
    console.print(
        f"ingested {report.documents} document(s), {report.chunks} chunk(s); "
        f"{report.skipped} already present"
        + (f"; {len(report.replaced)} earlier version(s) replaced" if report.replaced else "")
        + (f"; {len(report.removed)} document(s) of removed files or records deleted"
           if report.removed else "")
    )
    if report.replaced or report.removed:
        console.print("run `medkg build` to extract from the new versions")
    for failed, why in report.failed.items():
        console.print(label("skipped", "red", f"{failed}: {why.split(': ', 1)[-1]}"))
    if report.failed:  # a script must see that not every file made it in
        console.print(f"{len(report.failed)} file(s) could not be ingested; everything else "
                      "was kept")
        raise typer.Exit(code=1)


@app.command()
def build(
    workspace: WorkspaceOpt = Path("."),
    llm: LLMOpt = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="with the LLM engine: estimate calls, tokens and cost; call nothing"
    )] = False,
    levels: Annotated[int | None, typer.Option(
        min=0, help="grow the graph with the SAC-KG loop this many levels from the seeds "
        "(construction.seeds); 0 keeps every relation the extractor finds")] = None,
    executor: Annotated[str | None, typer.Option(
        help="where the builtin extraction runs: local, processes[:N], dask://HOST:PORT "
        "or auto (extraction.executor)")] = None,
    profile: Annotated[bool, typer.Option(
        "--profile", help="print where the time went, stage by stage")] = False,
    reextract: Annotated[bool, typer.Option(
        "--reextract", help="extract every document again, even those whose extraction "
        "is current (`medkg status` says which are not)")] = False,
) -> None:
    """Extract entities and triples from new documents (and again from those whose
    extraction inputs changed: settings, models, a vocabulary load that touches
    them) and link the three layers."""
    from medkg import timing
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        _run(lambda: apply_llm_option(ws.settings, llm))
        if levels is not None:
            ws.settings.construction.levels = levels
        if executor is not None:
            ws.settings.extraction.executor = executor
        if dry_run:
            if not build_uses_llm(ws.settings):
                console.print("the builtin engine makes no LLM calls: nothing to estimate "
                              "(pass --llm BACKEND:MODEL)")
                return
            est = _run(ws.estimate_build)
            out.print(f"{est.documents} document(s) to build: {est.calls} LLM call(s), about "
                      f"{est.prompt_tokens} prompt and {est.completion_tokens} output tokens, "
                      f"estimated cost ${est.cost_usd:.4f} (before cache hits)")
            for name, (calls, sent, answered) in est.stages.items():
                what = (f"extraction ({ws.settings.extraction.llm_profile} profile)"
                        if name == "extract" else "tag summaries")
                out.print(f"  {what}: {calls} call(s), about {sent} prompt and {answered} "
                          "output tokens")
            return
        uses_llm = build_uses_llm(ws.settings)
        before = ws.ledger.failure_count("extract") if uses_llm else 0
        started = time.perf_counter()
        with timing.recording() as clock, _progress() as progress:
            report = _run(lambda: ws.build(progress, reextract=reextract))
        wall = time.perf_counter() - started
        failures = ws.ledger.failure_count("extract") - before if uses_llm else 0
    again = f" ({report.reextracted} of them again)" if report.reextracted else ""
    console.print(
        f"built {report.documents} document(s){again}; the graph has {report.entities} "
        f"entities, {report.triples} triples and {report.links} cross-layer links"
    )
    if profile:
        out.print(timing.table(clock, wall), markup=False, highlight=False)
    if report.levels:
        table = Table("level", "heads", "generated", "rejected (by error)", "corrected",
                      "dropped", "kept", "grown", "pruned", title="SAC-KG loop")
        for lv in report.levels:
            by_error = ", ".join(f"{k} {v}" for k, v in sorted(lv.rejected.items())) or "0"
            table.add_row(*map(str, (lv.level, lv.heads, lv.generated)), by_error,
                          *map(str, (lv.corrected, lv.dropped, lv.kept, lv.grown, lv.pruned)))
        out.print(table)
    if report.rejected:
        console.print(f"{report.rejected} triple(s) broke a hard rule and were kept out; "
                      "`medkg stats` lists them")
    if failures:
        console.print(label(f"{failures} LLM item(s) failed;", "yellow",
                            "`medkg stats` lists them"))
    if report.unfinished:
        console.print(label(f"{report.unfinished} document(s) left unfinished:", "yellow",
                            "a chunk's LLM answer stayed unusable; `medkg build` asks again"))


app.command()(ask)
app.command()(retrieve)
app.command()(status)
app.command()(stats)
app.command()(documents)


@app.command()
def delete(
    document_ids: Annotated[list[str], typer.Argument(help="ids of documents to delete")],
    workspace: WorkspaceOpt = Path("."),
) -> None:
    """Delete documents and what only they supported (chunks, mentions, evidence,
    entities and triples left without support, their links and vectors)."""
    from medkg.workspace import Workspace

    failed = 0
    with _run(lambda: Workspace.open(workspace)) as ws:
        for doc_id in document_ids:  # one unknown id does not stop the others
            try:
                gone = ws.delete_document(doc_id)
            except MedKGError as exc:
                console.print(label("error:", "bold red", exc.message), soft_wrap=True)
                failed += 1
                continue
            console.print(f"deleted {doc_id}: {len(gone.chunks)} chunk(s), {gone.mentions} "
                          f"mention(s), {gone.evidence} evidence span(s), "
                          f"{len(gone.entities)} entit(ies) and {len(gone.triples)} triple(s) "
                          f"no other document supports, {gone.links} link(s)", soft_wrap=True)
    if failed:
        console.print(label("hint:", "yellow", "`medkg documents` lists the ids"))
        raise typer.Exit(code=1)


@app.command()
def trust(workspace: WorkspaceOpt = Path(".")) -> None:
    """Confirm the LLM endpoint the workspace's medkg.toml names (base URL, key
    variable): until then medkg sends nothing to an endpoint off this machine that
    only the file chose. Kept in your own config directory, not the workspace."""
    from medkg.llm.trust import leaves_machine, trust_file
    from medkg.workspace import Workspace

    with _run(lambda: Workspace.open(workspace)) as ws:
        cfg = ws.settings.llm
        ws.trust_endpoint()
    where = (cfg.base_url or "https://api.openai.com/v1") if cfg.backend == "openai" else "-"
    console.print(f"trusted for {workspace}: backend {cfg.backend}, model {cfg.model or '-'}, "
                  f"endpoint {where}{' (off this machine)' if leaves_machine(cfg) else ''}, "
                  f"key from ${cfg.api_key_env}; recorded in {trust_file()}", soft_wrap=True)


@app.command()
def export(
    output: Annotated[Path, typer.Argument(
        help="file to write (a directory for kgx-tsv, kgx-jsonl and neo4j-csv)")],
    fmt: Annotated[str, typer.Option(
        "--format", "-f", help="ttl, trig, nq, jsonld, kgx-tsv, kgx-jsonl, kgx-tsv-normalised, "
        "owl, graphml, neo4j-csv or sssom")] = "ttl",
    workspace: WorkspaceOpt = Path("."),
    force: Annotated[bool, typer.Option("--force", help="replace the output if it exists")] = False,
    reviewed: Annotated[str, typer.Option(
        help="which statements: not-rejected (what no curator rejected or replaced), "
        "accepted (only what a curator accepted) or all")] = "not-rejected",
    layer: Annotated[list[str] | None, typer.Option(
        "--layer", help="user, literature or vocabulary; repeat for several (default: all)")
    ] = None,
    min_confidence: Annotated[float, typer.Option(
        "--min-confidence", help="leave out statements below this confidence")] = 0.0,
    negated: Annotated[bool | None, typer.Option(
        "--negated/--no-negated", help="keep negated statements, flagged, never as plain "
        "edges (default: yes for the RDF formats, no for the others)")] = None,
    uncertain: Annotated[bool, typer.Option(
        "--uncertain/--no-uncertain", help="keep hedged, hypothetical and family-history "
        "statements, with their qualifiers")] = True,
) -> None:
    """Export the graph: RDF (all layers, links, provenance, review decisions), KGX with
    Biolink categories, OWL, GraphML, Neo4j import files or SSSOM mappings."""
    from medkg.export.formats import export_format
    from medkg.export.view import ALL_LAYERS, ExportFilter

    def choose() -> ExportFilter:
        spec = export_format(fmt)
        try:
            layers = frozenset(Layer(x) for x in layer) if layer else ALL_LAYERS
        except ValueError as exc:
            raise MedKGError(f"unknown layer in --layer {' '.join(layer or [])}",
                             hint="use user, literature or vocabulary") from exc
        return ExportFilter(layers=layers, reviewed=reviewed,  # type: ignore[arg-type]
                            min_confidence=min_confidence,
                            include_negated=spec.negated_by_default if negated is None
                            else negated, include_uncertain=uncertain)

    flt = _run(choose)
    with open_to_read(workspace) as ws:
        report = _run(lambda: ws.export(output, fmt, overwrite=force, flt=flt))
    counts = [f"{n} {what}" for n, what in ((report.nodes, "nodes"), (report.edges, "edges"),
                                             (report.mappings, "mappings")) if n]
    left = [f"{n} {why}" for why, n in sorted(report.left_out.items())]
    if report.statements_left_out:
        left.insert(0, f"{report.statements_left_out} statements by the filter")
    console.print(f"wrote {output}" + (f": {', '.join(counts)}" if counts else "")
                  + (f"; left out {', '.join(left)}" if left else ""), soft_wrap=True)


@app.command("import")
def import_graph(
    paths: Annotated[list[Path], typer.Argument(
        help="KGX node and edge files (*nodes.tsv, *edges.tsv, or .jsonl), or their directory")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="kgx")] = "kgx",
    layer: Annotated[Layer, typer.Option(
        help="the layer the graph joins: literature, user, or vocabulary (concepts and "
        "subclass_of only)")] = Layer.LITERATURE,
    workspace: WorkspaceOpt = Path("."),
) -> None:
    """Import a curated graph (KGX) into a layer. Every row is checked first: one bad row,
    named by file and line, and nothing is imported. Run `medkg build` after it to link."""
    from medkg.workspace import Workspace

    if fmt != "kgx":
        _fail(MedKGError(f"unknown import format {fmt!r}", hint="medkg imports kgx; for "
                         "documents and vocabularies use medkg ingest"))
    with _run(lambda: Workspace.open(workspace)) as ws:
        report = _run(lambda: ws.import_graph(paths, layer))
    what = (f"{report.concepts} concepts" if layer is Layer.VOCABULARY
            else f"{report.nodes} nodes and {report.edges} edges as {report.documents} "
            f"document(s)")
    console.print(f"imported {what} into the {layer.value} layer; run `medkg build -w "
                  f"{workspace}` to link it", soft_wrap=True)


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
            load_vocabulary(ws, obo)
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
