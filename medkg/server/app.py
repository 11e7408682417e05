"""The HTTP API and the review page of one workspace (FastAPI).

The app owns the workspace (Oxigraph takes one process): every request works
on it under one lock, so a decision, a build and a question never interleave.
Every ``/api`` endpoint needs ``Authorization: Bearer <token>``; the token says
who the reviewer is. Errors are JSON ``{"error", "hint"}`` with a 4xx status.
"""

import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from fastapi import Depends, FastAPI, File, Form, HTTPException, Query, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from medkg.config import RetrievalMode
from medkg.errors import MedKGError, NotFoundError, RequestError
from medkg.export.formats import FORMATS
from medkg.export.view import Reviewed
from medkg.model import (
    Decision,
    Layer,
    Predicate,
    ReviewAction,
    ReviewState,
    ReviewTarget,
)
from medkg.pipeline import listing
from medkg.pipeline.listing import DocumentInfo, MergeInfo, Stats
from medkg.pipeline.review import Request as ReviewRequest
from medkg.retrieval.answer import Answer
from medkg.retrieval.evidence import Retrieval
from medkg.review.queue import QueueFilter, QueueItem
from medkg.review.views import EntityView, StatementView, entity_view, statement_view
from medkg.server.access import Reviewer, reviewer_of
from medkg.server.limits import MAX_UPLOAD, RequestLimits
from medkg.server.models import (
    AskBody,
    BuildResult,
    BulkBody,
    DeleteResult,
    DocumentText,
    IngestResult,
    Me,
    Page,
    Problem,
    RetrieveBody,
    ReviewBody,
    StatementLine,
    UndoBody,
)
from medkg.text import clean_text
from medkg.workspace import Workspace

T = TypeVar("T")
PAGE = resources.files("medkg.server") / "page"
MEDIA = {"ttl": "text/turtle", "trig": "application/trig", "nq": "application/n-quads",
         "jsonld": "application/ld+json", "owl": "application/rdf+xml",
         "graphml": "application/graphml+xml", "sssom": "text/tab-separated-values"}
ExportFormat = Literal["ttl", "trig", "nq", "jsonld", "owl", "graphml", "sssom"]
# every format that writes one file (the directory formats are for the CLI)
assert set(ExportFormat.__args__) == {  # type: ignore[attr-defined]
    f.name for f in FORMATS.values() if not f.directory} == set(MEDIA)

_bearer = HTTPBearer(auto_error=False)


def _who(request: Request,
         credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
         ) -> Reviewer:
    """The reviewer the request's bearer token belongs to; 401 without one."""
    layout = request.app.state.workspace.layout
    found = reviewer_of(layout, credentials.credentials) if credentials else None
    if found is None:
        raise HTTPException(401, "a valid bearer token is needed",
                            headers={"WWW-Authenticate": "Bearer"})
    return found


Who = Annotated[Reviewer, Depends(_who)]


def create_app(workspace: Workspace) -> FastAPI:
    """The app over an open workspace (the caller keeps it open while serving)."""
    app = FastAPI(title="medkg", version="1", summary="A layered medical knowledge graph: "
                  "questions with citations, curator review, export.",
                  responses={401: {"model": Problem}})
    app.state.workspace = workspace
    app.add_middleware(RequestLimits, layout=workspace.layout)  # token and size first
    lock = threading.RLock()
    layout = workspace.layout
    state: dict[str, Any] = {"retriever": None}

    @contextmanager
    def owned() -> Iterator[Workspace]:
        with lock:
            yield workspace

    def changed() -> None:
        state["retriever"] = None  # its caches hold entities and triples as they were

    def run(action: Callable[[], T]) -> T:
        with lock:
            return action()

    @app.exception_handler(MedKGError)
    def _medkg_error(_request: Request, exc: MedKGError) -> JSONResponse:
        status = 404 if isinstance(exc, NotFoundError) else 400
        return JSONResponse(Problem(error=exc.message, hint=exc.hint).model_dump(),
                            status_code=status)

    @app.exception_handler(RequestValidationError)
    def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        # Said in medkg's own words, never echoing the input (it may be hostile,
        # or not even encodable: a lone surrogate in a JSON string).
        problems = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
        return JSONResponse(Problem(error="the request is not valid: " + "; ".join(
            clean_text(p) for p in problems[:5]), hint="see /docs for the request's "
            "schema").model_dump(), status_code=422)

    @app.exception_handler(HTTPException)
    def _http_error(_request: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse(Problem(error=str(exc.detail)).model_dump(),
                            status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(OSError)
    def _os_error(_request: Request, exc: OSError) -> JSONResponse:
        return JSONResponse(Problem(error=f"the workspace failed: {exc.strerror or exc}",
                                    hint="check the server's disk and permissions").model_dump(),
                            status_code=503)

    # -- the page (static files; no data in them) ---------------------------------

    @app.get("/", include_in_schema=False)
    def page() -> HTMLResponse:
        return HTMLResponse((PAGE / "index.html").read_text(encoding="utf-8"),
                            headers={"Content-Security-Policy": CSP,
                                     "X-Content-Type-Options": "nosniff",
                                     "Referrer-Policy": "no-referrer"})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(status_code=204)

    app.mount("/static", StaticFiles(directory=str(PAGE)), name="static")

    # -- the API ------------------------------------------------------------------

    @app.get("/api/me", response_model=Me, tags=["session"])
    def me(reviewer: Who) -> Me:
        return Me(reviewer=reviewer.name, workspace=str(layout.root))

    @app.post("/api/ask", response_model=Answer, tags=["ask"],
              responses={400: {"model": Problem}})
    def ask(body: AskBody, _reviewer: Who) -> Answer:
        """The same JSON as ``medkg ask --json``: the answer, citations, facts,
        definitions and the trace."""
        with owned() as ws:
            if state["retriever"] is None:
                state["retriever"] = ws.retriever()
            return ws.ask(body.question, mode=body.mode, retriever=state["retriever"],
                          show_proposed=body.show_proposed)

    def retrieved(question: str, mode: RetrievalMode | None, top: int,
                  show_proposed: bool | None) -> Retrieval:
        with owned() as ws:
            if state["retriever"] is None:
                state["retriever"] = ws.retriever()
            return ws.retrieve(question, mode=mode, top=top, retriever=state["retriever"],
                               show_proposed=show_proposed)

    @app.post("/api/retrieve", response_model=Retrieval, tags=["ask"],
              responses={400: {"model": Problem}})
    def retrieve(body: RetrieveBody, _reviewer: Who) -> Retrieval:
        """The same JSON as ``medkg retrieve --json``: the evidence for a question
        (ranked passages, facts with their review state, conditions, definitions) and
        a context block citing the passages, for an LLM of your own. No answer is
        composed."""
        return retrieved(body.question, body.mode, body.top, body.show_proposed)

    @app.get("/api/retrieve", response_model=Retrieval, tags=["ask"],
             responses={400: {"model": Problem}})
    def retrieve_get(_reviewer: Who, q: Annotated[str, Query(min_length=1, max_length=4000)],
                     mode: RetrievalMode | None = None,
                     top: Annotated[int, Query(ge=1, le=100)] = 8,
                     show_proposed: bool | None = None) -> Retrieval:
        """``POST /api/retrieve`` as a GET: ``?q=QUESTION&mode=&top=``."""
        return retrieved(q, mode, top, show_proposed)

    @app.get("/api/documents", response_model=list[DocumentInfo], tags=["documents"])
    def documents(_reviewer: Who, layer: Layer | None = None) -> list[DocumentInfo]:
        """The same JSON as ``medkg documents --json``."""
        return run(lambda: listing.documents(workspace.parts, layer))

    @app.get("/api/stats", response_model=Stats, tags=["documents"])
    def stats(_reviewer: Who) -> Stats:
        """The same JSON as ``medkg stats --json``: what the graph holds, and the LLM
        ledger."""
        return run(lambda: listing.stats(workspace.parts))

    @app.get("/api/documents/{document_id}", response_model=DocumentText, tags=["documents"],
             responses={404: {"model": Problem}})
    def document(document_id: str, _reviewer: Who) -> DocumentText:
        with owned() as ws:
            doc = ws.store.document(document_id)
            return DocumentText(id=doc.id, layer=doc.layer, title=doc.title, source=doc.source,
                                stages=sorted(ws.store.stages(doc.id)), text=doc.text,
                                revision_of=doc.revision_of)

    @app.post("/api/documents", response_model=IngestResult, tags=["documents"],
              responses={400: {"model": Problem}, 413: {"model": Problem}})
    def upload(_reviewer: Who, file: Annotated[UploadFile, File()],
               layer: Annotated[Layer, Form()] = Layer.USER) -> IngestResult:
        """Ingest one uploaded document (.txt .md .jsonl .pdf); ``POST /api/build``
        extracts from it. An upload of the same name replaces the earlier one."""
        if layer is Layer.VOCABULARY:
            raise RequestError("vocabularies are loaded with `medkg vocab load`")
        data = file.file.read(MAX_UPLOAD + 1)
        if len(data) > MAX_UPLOAD:
            raise HTTPException(413, f"a document may have at most {MAX_UPLOAD} bytes")
        name = upload_name(file.filename)
        with tempfile.TemporaryDirectory() as tmp, owned() as ws:
            # The client's name is the document's identity, never a path here.
            path = Path(tmp) / f"upload{Path(name).suffix.lower()}"
            path.write_bytes(data)
            # the upload's name is its identity: the same name again replaces it
            report = ws.ingest([path], layer, names={path: f"upload:{name}"})
            changed()
        reasons = [why.split(": ", 1)[-1] for why in report.failed.values()]
        failed = dict(zip([name], reasons, strict=False))  # one file was sent
        return IngestResult(documents=report.documents, chunks=report.chunks,
                            skipped=report.skipped, failed=failed, replaced=report.replaced)

    @app.delete("/api/documents/{document_id}", response_model=DeleteResult,
                tags=["documents"], responses={404: {"model": Problem}})
    def delete(document_id: str, _reviewer: Who) -> DeleteResult:
        with owned() as ws:
            gone = ws.delete_document(document_id)
            changed()
        return DeleteResult(id=document_id, chunks=len(gone.chunks),
                            entities=len(gone.entities), triples=len(gone.triples))

    @app.post("/api/build", response_model=BuildResult, tags=["documents"])
    def build(_reviewer: Who) -> BuildResult:
        """Extract from new documents, link, apply every review decision again."""
        with owned() as ws:
            report = ws.build()
            changed()
        return BuildResult(documents=report.documents, entities=report.entities,
                           triples=report.triples, links=report.links,
                           review_unresolved=report.review_unresolved)

    @app.get("/api/statements", response_model=Page[StatementLine], tags=["statements"])
    def statements(
        _reviewer: Who, layer: Layer | None = None, predicate: Predicate | None = None,
        entity: Annotated[str | None, Query(max_length=200)] = None,
        document: Annotated[str | None, Query(max_length=200)] = None,
        state: ReviewState | None = None,
        offset: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
    ) -> Page[StatementLine]:
        with owned() as ws:
            found = [t for t in ws.store.triples(layer)
                     if (predicate is None or t.predicate is predicate)
                     and (state is None or t.review is state)
                     and (document is None or document in {e.document_id for e in t.evidence})
                     and (entity is None or entity in (t.head, t.tail))]
            shown = found[offset:offset + limit]
            names = {b.id: b.name for b in ws.store.entity_briefs(
                {e for t in shown for e in (t.head, t.tail)})}
        return Page[StatementLine](total=len(found), offset=offset, items=[
            StatementLine(triple=t, head_name=names.get(t.head, t.head),
                          tail_name=names.get(t.tail, t.tail)) for t in shown])

    @app.get("/api/statements/{triple_id}", response_model=StatementView, tags=["statements"],
             responses={404: {"model": Problem}})
    def statement(triple_id: str, _reviewer: Who) -> StatementView:
        return run(lambda: statement_view(workspace.store, triple_id))

    @app.get("/api/queue", response_model=Page[QueueItem], tags=["review"])
    def queue(
        _reviewer: Who, layer: Layer | None = None, predicate: Predicate | None = None,
        entity: Annotated[str | None, Query(max_length=200)] = None,
        document: Annotated[str | None, Query(max_length=200)] = None,
        state: Literal["proposed", "accepted", "rejected", "edited", "any"] = "proposed",
        kind: ReviewTarget | None = None,
        offset: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
    ) -> Page[QueueItem]:
        """Statements and merges to review, highest priority first, with the reasons."""
        flt = QueueFilter(layer=layer, predicate=predicate, entity=entity, document=document,
                          state=None if state == "any" else ReviewState(state), kind=kind)
        items = run(lambda: workspace.review_queue(flt))
        return Page[QueueItem](total=len(items), offset=offset,
                               items=items[offset:offset + limit])

    @app.post("/api/review", response_model=Decision, tags=["review"],
              responses={400: {"model": Problem}, 404: {"model": Problem}})
    def review(body: ReviewBody, reviewer: Who) -> Decision:
        with owned() as ws:
            decision = ws.review(body.request(), reviewer.name)
            changed()
            return decision

    @app.post("/api/review/bulk", response_model=list[Decision], tags=["review"],
              responses={400: {"model": Problem}, 404: {"model": Problem}})
    def review_bulk(body: BulkBody, reviewer: Who) -> list[Decision]:
        """Several decisions: all are checked first; one bad one records none."""
        with owned() as ws:
            done = ws.review_many([d.request() for d in body.decisions], reviewer.name)
            changed()
            return done.decisions

    @app.post("/api/review/{decision_id}/undo", response_model=Decision, tags=["review"],
              responses={400: {"model": Problem}})
    def undo(decision_id: str, body: UndoBody, reviewer: Who) -> Decision:
        with owned() as ws:
            decision = ws.review(ReviewRequest(ReviewAction.UNDO, reason=body.reason,
                                               undoes=decision_id), reviewer.name)
            changed()
            return decision

    @app.get("/api/audit", response_model=list[Decision], tags=["review"])
    def audit(_reviewer: Who, target: Annotated[str | None, Query(max_length=200)] = None
              ) -> list[Decision]:
        """Every decision (or those about one target), oldest first."""
        return run(lambda: workspace.review_log(target))

    @app.get("/api/entities/{entity_id}", response_model=EntityView, tags=["entities"],
             responses={404: {"model": Problem}})
    def entity(entity_id: str, _reviewer: Who) -> EntityView:
        return run(lambda: entity_view(workspace.store, entity_id))

    @app.get("/api/merges", response_model=list[MergeInfo], tags=["entities"])
    def merges(_reviewer: Who) -> list[MergeInfo]:
        """The same JSON as ``medkg merges list --json``."""
        return run(lambda: listing.merges(workspace.parts))

    @app.get("/api/export", tags=["export"], response_class=PlainTextResponse,
             responses={200: {"content": {m: {} for m in MEDIA.values()}}})
    def export(_reviewer: Who, fmt: Annotated[ExportFormat, Query(alias="format")] = "ttl",
               reviewed: Reviewed = "not-rejected") -> Response:
        """The graph as RDF, OWL, GraphML or SSSOM; ``reviewed`` as for
        ``medkg export --reviewed``."""
        with tempfile.TemporaryDirectory() as tmp, owned() as ws:
            path = Path(tmp) / f"graph.{fmt}"
            ws.export(path, fmt, reviewed=reviewed)
            body = path.read_bytes()
        return Response(body, media_type=MEDIA[fmt])

    @app.get("/sparql", tags=["export"], response_class=PlainTextResponse,
             operation_id="sparql_query_get")
    async def sparql_get(request: Request, _reviewer: Who) -> Response:
        """The SPARQL 1.1 Protocol, read-only, on the live graph: ``query`` as a URL
        parameter; the answer in the media type ``Accept`` names (JSON results by
        default). An update is refused."""
        return await sparql(request)

    @app.post("/sparql", tags=["export"], response_class=PlainTextResponse,
              operation_id="sparql_query_post")
    async def sparql_post(request: Request, _reviewer: Who) -> Response:
        """The SPARQL 1.1 Protocol, read-only, on the live graph: ``query`` as a
        form field or an ``application/sparql-query`` body; the answer in the media
        type ``Accept`` names (JSON results by default). An update is refused."""
        return await sparql(request)

    async def sparql(request: Request) -> Response:
        """The SPARQL 1.1 Protocol, read-only, on the live graph: ``query`` as a URL
        parameter (GET), a form field or an ``application/sparql-query`` body (POST);
        the answer in the media type ``Accept`` names (JSON results by default).
        An update is refused."""
        query = request.query_params.get("query")
        if request.method == "POST":
            kind = request.headers.get("content-type", "").split(";")[0].strip()
            if kind == "application/sparql-query":
                query = (await request.body()).decode("utf-8", "replace")
            elif kind == "application/x-www-form-urlencoded":
                form = await request.form()
                if "update" in form:
                    raise HTTPException(403, "this endpoint is read-only: updates are refused")
                found = form.get("query")
                query = found if isinstance(found, str) else None
            elif kind == "application/sparql-update":
                raise HTTPException(403, "this endpoint is read-only: updates are refused")
        if "update" in request.query_params:
            raise HTTPException(403, "this endpoint is read-only: updates are refused")
        if not query:
            raise HTTPException(400, "no query: pass query=... (SPARQL 1.1 Protocol)")
        fmt = sparql_format(request.headers.get("accept", ""))
        media, body = await run_in_threadpool(lambda: run(lambda: workspace.sparql(query, fmt)))
        return Response(body, media_type=media)

    return app


def sparql_format(accept: str) -> str | None:
    """The answer format an Accept header asks for (None: the default, JSON results
    or N-Triples)."""
    from medkg.store.projection import GRAPH_FORMATS, SOLUTION_FORMATS

    wanted = [part.split(";")[0].strip() for part in accept.split(",")]
    for media in wanted:
        for name, known in (*SOLUTION_FORMATS.items(), *GRAPH_FORMATS.items()):
            if media == known:
                return name
    return None


MAX_NAME_BYTES = 200


def upload_name(filename: str | None) -> str:
    """An upload's name, checked: it names the document (``upload:NAME``), so it
    must be a plain file name with a readable suffix; anything else is a 400
    that says what is wrong with it."""
    from medkg.reading.readers import READERS

    name = (filename or "upload.txt").strip()
    hint = "send a plain file name such as notes.txt (letters, digits, spaces, . - _)"
    if clean_text(name) != name or "\x7f" in name:
        raise RequestError("the file name holds control characters or undecodable text",
                          hint=hint)
    if "/" in name or "\\" in name or name in {".", ".."} or name.startswith("."):
        raise RequestError(f"the file name {name!r} is a path, not a plain file name",
                          hint=hint)
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise RequestError(f"the file name is {len(name.encode('utf-8'))} bytes long; at "
                          f"most {MAX_NAME_BYTES} are taken", hint=hint)
    if Path(name).suffix.lower() not in READERS:
        raise RequestError(f"unsupported file type {Path(name).suffix or '(none)'!r}",
                          hint=f"supported: {', '.join(sorted(READERS))}")
    return name


# The page runs only its own script and style; document text is never markup.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
