"""``medkg mcp``: the workspace as a Model Context Protocol server for agents, on
the official ``mcp`` SDK (stdio by default; streamable HTTP on loopback behind
the workspace's bearer tokens).

Tools: ``ask`` (the answer with citations, facts, conditions and definitions),
``search_evidence`` (``medkg retrieve``: the ranked evidence with every
source's score and a context block), ``entity`` (an entity by id or name: its
concepts and definitions, mentions, statements with their review state),
``define`` (the vocabulary, approximate), ``explain`` (the trace of a
question). Resources: documents and chunks by id. Read-only unless the server
was started with ``--allow-review`` and a reviewer's name; then ``review``
records a curator's accept or reject under that name.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Literal, TypeVar

from pydantic import BaseModel, Field

from medkg.errors import MedKGError, NotFoundError, RequestError
from medkg.model import Concept, Layer
from medkg.retrieval.answer import Answer
from medkg.retrieval.evidence import Retrieval
from medkg.review.views import EntityView, entity_view

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from starlette.types import ASGIApp, Receive, Scope, Send

    from medkg.workspace import Workspace

T = TypeVar("T")
INSTRUCTIONS = (
    "A layered medical knowledge graph built from the user's documents and the "
    "literature. Use search_evidence to get ranked, cited passages to answer from (cite "
    "them as [n]); ask for medkg's own extractive answer; entity and define for what a "
    "name means here; explain for how an answer was found. Only statements a curator "
    "accepted or whose calibrated confidence is high enough are facts; the rest are "
    "marked proposed. A passage or quote with flags (family history, hedged, negated) "
    "does not state a fact about the patient.")

Question = Annotated[str, Field(min_length=1, max_length=4000, description="the question")]
Mode = Literal["u-retrieval", "hybrid", "local", "traverse", "vector", "bm25", "global", "auto"]


class Definitions(BaseModel):
    term: str
    concepts: list[Concept]  # best first: exact and abbreviation matches, then approximate
    scores: list[float]  # each concept's match score (1.0 exact)


class EntityResult(BaseModel):
    view: EntityView
    # when looked up by name: the other entities of similar names, best first
    others: list[str] = Field(default_factory=list)


class Explanation(BaseModel):
    question: str
    mode: str
    text: str  # medkg ask --explain's trace, as text
    trace: dict[str, object]


class DocumentResource(BaseModel):
    id: str
    layer: Layer
    title: str
    source: str
    text: str


class ChunkResource(BaseModel):
    id: str
    document_id: str
    layer: Layer
    start: int  # document offsets: the document's text[start:end] == text
    end: int
    text: str


class ReviewResult(BaseModel):
    decision_id: str
    action: str
    target: str
    reviewer: str


def build_server(workspace: Workspace, *, reviewer: str | None = None) -> MCPServer:
    """The MCP server over an open workspace (the caller keeps it open). With a
    ``reviewer`` (and the workspace open to write), the ``review`` tool is offered."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import (
        ResourceError,
        ResourceNotFoundError,
        ToolError,
    )

    lock = threading.Lock()
    server: MCPServer = MCPServer(name="medkg", instructions=INSTRUCTIONS,
                                  version="1", log_level="WARNING")

    def run(action: Callable[[], T]) -> T:
        with lock:
            try:
                return action()
            except MedKGError as exc:
                hint = f" (hint: {exc.hint})" if exc.hint else ""
                raise ToolError(f"{exc.message}{hint}") from None

    def read(action: Callable[[], T]) -> T:
        """A resource's read: a missing one is "not found" (-32602), any other error
        of medkg's says what failed (-32603); neither is logged as a crash."""
        with lock:
            try:
                return action()
            except NotFoundError as exc:
                raise ResourceNotFoundError(exc.message) from None
            except MedKGError as exc:
                raise ResourceError(exc.message) from None

    @server.tool(description="Answer a clinical evidence question from the workspace: "
                 "extractive sentences with numbered citations (quote, document, offsets, "
                 "qualifier flags), facts with confidence and review state, conditions the "
                 "answer holds under, definitions, and whether the documents answer it at all.")
    def ask(question: Question, mode: Mode | None = None,
            show_proposed: bool = False) -> Answer:
        answer = run(lambda: workspace.ask(question, mode=mode,
                                           show_proposed=show_proposed or None))
        answer.trace = answer.trace.model_copy(update={"candidates": None})  # explain has it
        return answer

    @server.tool(description="The evidence for a question without a composed answer, for "
                 "you to answer from: the best passages of the ranking (document, offsets, "
                 "text, fused score and each source's rank and score), the facts that cite "
                 "them with review state, conditions, definitions, and a context block whose "
                 "[n] markers are the passages' numbers.")
    def search_evidence(question: Question, mode: Mode | None = None,
                        top: Annotated[int, Field(ge=1, le=100)] = 8,
                        show_proposed: bool = False) -> Retrieval:
        return run(lambda: workspace.retrieve(question, mode=mode, top=top,
                                              show_proposed=show_proposed or None))

    @server.tool(description="An entity of the graph by id (ent-...) or by name: its "
                 "vocabulary concepts with definitions, mentions in documents, merges, and "
                 "the statements it takes part in with their review state.")
    def entity(entity: Annotated[str, Field(min_length=1, max_length=300)]) -> EntityResult:
        return run(lambda: _entity(workspace, entity))

    @server.tool(description="Look a term up in the workspace's vocabulary (exact, "
                 "abbreviation, then approximate matches): concepts with their definitions, "
                 "synonyms, semantic group and parents.")
    def define(term: Annotated[str, Field(min_length=1, max_length=300)],
               limit: Annotated[int, Field(ge=1, le=20)] = 5) -> Definitions:
        found = run(lambda: workspace.concept_index().search(_clean(term), limit))
        return Definitions(term=term, concepts=[c.concept for c in found],
                           scores=[round(c.score, 4) for c in found])

    @server.tool(description="How medkg found the answer to a question: the path through "
                 "the tag tree, the traversal's hops, the entities and triples used, the "
                 "full candidate ranking.")
    def explain(question: Question, mode: Mode | None = None) -> Explanation:
        answer = run(lambda: workspace.ask(question, mode=mode))
        return Explanation(question=answer.question, mode=answer.mode,
                           text=answer.render_trace(),
                           trace=answer.trace.model_dump(mode="json", exclude_none=True))

    @server.resource("medkg://documents/{document_id}", mime_type="application/json",
                     description="A document of the workspace: its layer, title, source "
                     "and whole text (citation offsets index into it).")
    def document(document_id: str) -> str:
        doc = read(lambda: workspace.store.document(_clean(document_id)))
        return DocumentResource(id=doc.id, layer=doc.layer, title=doc.title,
                                source=doc.source, text=doc.text).model_dump_json()

    @server.resource("medkg://chunks/{chunk_id}", mime_type="application/json",
                     description="A chunk of a document with its document offsets.")
    def chunk(chunk_id: str) -> str:
        c = read(lambda: workspace.store.chunk(_clean(chunk_id)))
        return ChunkResource(id=c.id, document_id=c.document_id, layer=c.layer,
                             start=c.start, end=c.end, text=c.text).model_dump_json()

    if reviewer is not None:
        if workspace.read_only:
            raise RequestError("review needs the workspace open to write",
                               hint="stop the process that writes it, then start again")

        @server.tool(description=f"Record a curator's decision as {reviewer}: accept or "
                     "reject a statement (tri-...) with a reason. It is kept in the audit "
                     "log and applied to the graph.")
        def review(target: Annotated[str, Field(pattern=r"^tri-[0-9a-f]{4,64}$")],
                   action: Literal["accept", "reject"],
                   reason: Annotated[str, Field(max_length=2000)] = "") -> ReviewResult:
            from medkg.model import ReviewAction
            from medkg.pipeline.review import Request

            decision = run(lambda: workspace.review(
                Request(ReviewAction(action), target, _clean(reason)), reviewer))
            return ReviewResult(decision_id=decision.id, action=decision.action.value,
                                target=decision.target, reviewer=decision.reviewer)
    return server


def _clean(text: str) -> str:
    from medkg.text import clean_text

    return clean_text(text).strip()


def _entity(workspace: Workspace, name_or_id: str) -> EntityResult:
    """By id, or the entities whose names are nearest ``name_or_id``: an exact name
    (either layer) first, then by name vector."""
    wanted = _clean(name_or_id)
    if wanted.startswith("ent-"):
        return EntityResult(view=entity_view(workspace.store, wanted))
    hits = workspace.index("entities").search(workspace.embedder.embed([wanted])[0], 10)
    order = [e for e, _ in hits]
    briefs = workspace.store.entity_briefs(order, mentions=False)
    ranked = sorted(briefs, key=lambda b: (b.name.lower() != wanted.lower(),
                                           order.index(b.id)))
    if not ranked:
        raise RequestError(f"no entity named like {wanted[:80]!r} in this workspace",
                           hint="the define tool looks a term up in the vocabulary")
    return EntityResult(view=entity_view(workspace.store, ranked[0].id),
                        others=[f"{b.name} ({b.layer.value}) {b.id}" for b in ranked[1:]])


class BearerTokens:
    """ASGI middleware: every HTTP request needs one of the workspace's bearer tokens
    (``medkg token add``), checked before the request reaches the MCP app."""

    def __init__(self, app: ASGIApp, check: Callable[[str], bool]) -> None:
        self.app, self.check = app, check

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers", []))
            auth = headers.get(b"authorization", b"").decode("latin-1")
            if not (auth.startswith("Bearer ") and self.check(auth[7:].strip())):
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body",
                            "body": b'{"error": "a valid bearer token is needed"}'})
                return
        await self.app(scope, receive, send)
