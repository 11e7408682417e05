"""The HTTP API's request bodies and answers that are its own (the rest are the
pipeline's and the review's models, answered as they are)."""

from typing import Annotated, Generic, TypeVar

from pydantic import BaseModel, Field

from medkg.config import RetrievalMode
from medkg.model import (
    EntityEdit,
    ReviewAction,
    StatementEdit,
    Text,
    Triple,
)
from medkg.pipeline.listing import DocumentInfo
from medkg.pipeline.review import Request as ReviewRequest

T = TypeVar("T")

Id = Annotated[str, Field(min_length=1, max_length=200)]


class Problem(BaseModel):
    error: str
    hint: str | None = None


class AskBody(BaseModel):
    question: Text = Field(min_length=1, max_length=4000)
    mode: RetrievalMode | None = None
    # also list the statements below facts.min_precision, as unreviewed
    show_proposed: bool | None = None


class RetrieveBody(AskBody):
    # the best passages of the ranking (the passages the evidence cites are added)
    top: int = Field(default=8, ge=1, le=100)


class ReviewBody(BaseModel):
    """One decision: ``target`` (a statement, entity or merged entity id) and the
    action; ``edit`` is the curator's version of a statement, ``values`` an
    entity's new name, type or concepts; an undo names ``undoes``."""

    action: ReviewAction
    target: str = Field("", max_length=200)
    reason: str = Field("", max_length=2000)
    edit: StatementEdit | None = None
    values: EntityEdit | None = None
    undoes: str | None = Field(None, max_length=200)

    def request(self) -> ReviewRequest:
        return ReviewRequest(self.action, self.target, self.reason, self.edit or self.values,
                             self.undoes)


class BulkBody(BaseModel):
    decisions: list[ReviewBody] = Field(min_length=1, max_length=1000)


class UndoBody(BaseModel):
    reason: str = Field("", max_length=2000)


class DocumentText(DocumentInfo):
    text: str


class IngestResult(BaseModel):
    documents: int
    chunks: int
    skipped: int
    failed: dict[str, str]
    replaced: list[str] = []  # earlier versions of the same upload name, deleted


class DeleteResult(BaseModel):
    id: str
    chunks: int
    entities: int
    triples: int


class BuildResult(BaseModel):
    documents: int
    entities: int
    triples: int
    links: int
    review_unresolved: int


class StatementLine(BaseModel):
    triple: Triple
    head_name: str
    tail_name: str


class Page(BaseModel, Generic[T]):
    total: int
    offset: int
    items: list[T]


class Me(BaseModel):
    reviewer: str
    workspace: str
