"""Core types of medkg (pydantic v2).

Identifiers are derived from content, so ingesting the same file twice, or
resuming an interrupted build, produces the same ids and therefore no
duplicates in the store.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from medkg.text import clean_text

# Text from outside medkg (files, vocabularies, imports, edits): normalised once,
# here, so no store or output format meets a lone surrogate or a forbidden control.
Text = Annotated[str, AfterValidator(clean_text)]


def stable_id(prefix: str, *parts: object) -> str:
    """A short, stable identifier: ``prefix`` + the first 16 hex digits of a SHA-256."""
    # surrogatepass: an id never fails on text that was not normalised (yet)
    joined = "\x1f".join(str(p) for p in parts)
    digest = hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{prefix}-{digest[:16]}"


class Layer(StrEnum):
    """The three layers of the graph (MedGraphRAG's E1/E2/E3)."""

    USER = "user"
    LITERATURE = "literature"
    VOCABULARY = "vocabulary"


class ReviewState(StrEnum):
    PROPOSED = "proposed"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    EDITED = "edited"


class Predicate(StrEnum):
    """The controlled set of relation predicates, aligned with the Biolink model."""

    TREATS = "treats"
    CAUSES = "causes"
    HAS_ADVERSE_EFFECT = "has_adverse_effect"
    PREVENTS = "prevents"
    CONTRAINDICATED_IN = "contraindicated_in"
    HAS_SYMPTOM = "has_symptom"
    DIAGNOSES = "diagnoses"
    LOCATION_OF = "location_of"
    IS_A = "is_a"
    ASSOCIATED_WITH = "associated_with"
    INTERACTS_WITH = "interacts_with"

    @property
    def biolink(self) -> str:
        """The Biolink model slot this predicate maps to (local name)."""
        return _BIOLINK[self]


_BIOLINK: dict[Predicate, str] = {
    Predicate.TREATS: "treats",
    Predicate.CAUSES: "causes",
    Predicate.HAS_ADVERSE_EFFECT: "has_adverse_event",
    Predicate.PREVENTS: "preventative_for_condition",
    Predicate.CONTRAINDICATED_IN: "contraindicated_in",
    Predicate.HAS_SYMPTOM: "has_phenotype",
    Predicate.DIAGNOSES: "diagnoses",
    Predicate.LOCATION_OF: "location_of",
    Predicate.IS_A: "subclass_of",
    Predicate.ASSOCIATED_WITH: "associated_with",
    Predicate.INTERACTS_WITH: "interacts_with",
}


class Document(BaseModel):
    """A source document. ``text`` is what every offset in the graph refers to."""

    id: str
    layer: Layer
    title: Text
    source: Text = Field(description="where the text came from: a path or a URI; a "
                        "document's identity across edits (its id names one version)")
    media_type: str
    text: Text
    revision_of: list[str] = Field(
        default_factory=list, description="ids of the earlier versions of this document "
        "(same source, other text) that it replaced, newest first (prov:wasRevisionOf)")

    @classmethod
    def create(
        cls, *, layer: Layer, title: str, source: str, media_type: str, text: str
    ) -> Document:
        text = clean_text(text)
        return cls(
            id=stable_id("doc", layer.value, text),
            layer=layer,
            title=title,
            source=source,
            media_type=media_type,
            text=text,
        )


class Chunk(BaseModel):
    """A contiguous piece of a document: ``text == document.text[start:end]``."""

    id: str
    document_id: str
    layer: Layer
    index: int
    start: int
    end: int
    text: Text

    @classmethod
    def create(cls, document: Document, index: int, start: int, end: int) -> Chunk:
        return cls(
            id=stable_id("chunk", document.id, start, end),
            document_id=document.id,
            layer=document.layer,
            index=index,
            start=start,
            end=end,
            text=document.text[start:end],
        )


class Qualifiers(BaseModel):
    """Assertion qualifiers (ConText) of a mention, carried onto its triples."""

    model_config = ConfigDict(frozen=True)

    negated: bool = False
    uncertain: bool = False
    hypothetical: bool = False
    historical: bool = False
    experiencer: str = "patient"
    population: str | None = None

    @classmethod
    def of_context(cls, ext: object) -> Qualifiers:
        """From medspaCy ConText's span attributes (``span._``)."""
        return cls(negated=bool(getattr(ext, "is_negated", False)),
                   uncertain=bool(getattr(ext, "is_uncertain", False)),
                   hypothetical=bool(getattr(ext, "is_hypothetical", False)),
                   historical=bool(getattr(ext, "is_historical", False)),
                   experiencer="family" if getattr(ext, "is_family", False) else "patient")

    def flags(self) -> list[str]:
        """What a reader must know before taking the mention as a fact about the
        patient, in the reader's words."""
        out = []
        if self.experiencer == "family":
            out.append("family history")
        elif self.experiencer != "patient":
            out.append(f"about {self.experiencer}")
        # ConText reads "family history of X" as historical too: that says nothing more
        historical = self.historical and self.experiencer == "patient"
        out += [word for on, word in ((self.negated, "negated"), (self.uncertain, "hedged"),
                                      (self.hypothetical, "hypothetical"),
                                      (historical, "historical")) if on]
        return out

    @property
    def is_factual(self) -> bool:
        """The one fact rule: whether a statement with these qualifiers may stand as a
        plain edge (``h p t`` in RDF, a Biolink edge in every export): not negated,
        not hedged or hypothetical, and about the patient (not family history)."""
        return not (self.negated or self.uncertain or self.hypothetical) \
            and self.experiencer == "patient"

    def about_someone_else_or_absent(self) -> bool:
        """Not an affirmed finding in the patient: set apart in answers about patients."""
        return self.experiencer != "patient" or self.negated or self.hypothetical


class Mention(BaseModel):
    """Where an entity is mentioned: document offsets and the exact surface text."""

    model_config = ConfigDict(frozen=True)

    chunk_id: str
    document_id: str
    start: int
    end: int
    text: Text
    qualifiers: Qualifiers = Qualifiers()

    def id_in(self, entity_id: str) -> str:
        """The mention's id as a mention of ``entity_id`` (every store mints it here)."""
        return stable_id("men", entity_id, self.chunk_id, self.start)


class Concept(BaseModel):
    """A vocabulary concept (E3): id, preferred name, synonyms, type and definition."""

    id: Text = Field(description="CURIE, e.g. DOID:1324 or MEDKG:0000012")
    name: Text
    synonyms: list[Text] = []
    definition: Text | None = None
    semantic_type: Text | None = None
    semantic_group: Text | None = None
    parents: list[Text] = []
    xrefs: list[Text] = []
    source: Text = Field(description="the vocabulary this concept came from, with version")
    obsolete: bool = False
    replaced_by: Text | None = None

    def terms(self) -> list[str]:
        """Every name this concept can be recognised by."""
        return [self.name, *self.synonyms]


class Entity(BaseModel):
    """An entity of the user or literature layer.

    ``context`` is a short description of how the entity is used in its
    documents; in the builtin engine it is the sentence of its first mention.
    """

    id: str
    layer: Layer
    name: Text
    type: str = Field(description="semantic group, e.g. DISO, CHEM")
    context: Text = ""
    concept_ids: list[str] = []
    mentions: list[Mention] = []

    @staticmethod
    def key_for(layer: Layer, name: str, type_: str, concept_id: str | None) -> str:
        """The stable id: one entity per concept (or per name and type) per layer."""
        key = concept_id if concept_id else f"{type_}:{' '.join(name.lower().split())}"
        return stable_id("ent", layer.value, key)

    def content(self) -> str:
        """What the entity is embedded as (MedGraphRAG): ``name; type; context``."""
        return f"{self.name}; {self.type}; {self.context}"


class EntityBrief(BaseModel):
    """What a question reads of an entity it reaches: its name, layer, type and
    concepts, and where it is mentioned (chunk ids and the distinct surface texts),
    without each mention's offsets and qualifiers, so that an entity mentioned
    thousands of times is still cheap to read."""

    model_config = ConfigDict(frozen=True)

    id: str
    layer: Layer
    name: Text
    type: str
    concept_ids: list[str] = []
    chunk_ids: list[str] = []  # the chunks that mention it, sorted
    surface: list[str] = []  # the distinct texts it is mentioned by, sorted


class Evidence(BaseModel):
    """Where a triple is stated: a chunk, document offsets and the exact quote."""

    model_config = ConfigDict(frozen=True)

    chunk_id: str
    document_id: str
    start: int
    end: int
    quote: Text

    @property
    def id(self) -> str:
        return stable_id("ev", self.chunk_id, self.start, self.end)


class Triple(BaseModel):
    """An asserted fact about two entities of one layer, with its provenance."""

    id: str
    layer: Layer
    head: str
    predicate: Predicate
    tail: str
    evidence: list[Evidence] = []
    qualifiers: Qualifiers = Qualifiers()
    confidence: float = Field(ge=0.0, le=1.0)
    level: int = 0
    review: ReviewState = ReviewState.PROPOSED
    method: str = "builtin:pattern"
    revision_of: str | None = None  # a curator's edit: the statement it replaces

    @property
    def in_force(self) -> bool:
        """Whether the graph still asserts it: not rejected by a curator, and not
        replaced by a curator's edit (its ``revision_of`` successor is used instead)."""
        return self.review not in (ReviewState.REJECTED, ReviewState.EDITED)

    @staticmethod
    def key_for(
        layer: Layer, head: str, predicate: Predicate, tail: str, qualifiers: Qualifiers
    ) -> str:
        """Polarity and certainty are part of identity: a negated claim is a different fact."""
        return stable_id(
            "tri",
            layer.value,
            head,
            predicate.value,
            tail,
            qualifiers.negated,
            qualifiers.uncertain,
            qualifiers.hypothetical,
            qualifiers.experiencer,
        )


class LinkKind(StrEnum):
    REFERENCE_OF = "reference_of"  # user entity -> literature entity
    DEFINITION_OF = "definition_of"  # literature (or user) entity -> vocabulary concept
    SAME_AS = "same_as"  # entity resolution: merged entity -> survivor, same layer
    DIFFERENT_FROM = "different_from"  # a curator undid a merge; it is never made again


class Link(BaseModel):
    """A cross-layer link with its score and how it was made."""

    model_config = ConfigDict(frozen=True)

    kind: LinkKind
    source: str
    target: str
    score: float
    method: str

    @property
    def id(self) -> str:
        return stable_id("link", self.kind.value, self.source, self.target)


class ReviewTarget(StrEnum):
    """What a curator's decision is about."""

    STATEMENT = "statement"  # a triple: accept, reject, edit
    ENTITY = "entity"  # rename, retype, renormalise (to another concept)
    MERGE = "merge"  # an entity-resolution merge, named by its merged entity: confirm, split


class ReviewAction(StrEnum):
    ACCEPT = "accept"
    REJECT = "reject"
    EDIT = "edit"
    RENAME = "rename"
    RETYPE = "retype"
    RENORMALISE = "renormalise"
    CONFIRM = "confirm"
    SPLIT = "split"
    UNDO = "undo"


class StatementSnapshot(BaseModel):
    """A statement as the curator saw it: enough to find it again after a rebuild
    gave its entities new ids (same layer, predicate, polarity and evidence)."""

    model_config = ConfigDict(frozen=True)

    layer: Layer
    head: str
    head_name: str
    predicate: Predicate
    tail: str
    tail_name: str
    qualifiers: Qualifiers = Qualifiers()
    evidence: list[Evidence] = []
    review: ReviewState = ReviewState.PROPOSED


class StatementEdit(BaseModel):
    """The curator's version of a statement: entity ids of the same layer (a
    request may name an end instead; it is recorded as the entity's id)."""

    model_config = ConfigDict(frozen=True)

    head: Text = Field(min_length=1, max_length=300)
    predicate: Predicate
    tail: Text = Field(min_length=1, max_length=300)
    qualifiers: Qualifiers = Qualifiers()


class EntitySnapshot(BaseModel):
    """An entity as the curator saw it; its mentions find it again after a rebuild."""

    model_config = ConfigDict(frozen=True)

    layer: Layer
    name: Text
    type: str
    concept_ids: list[str] = []
    mentions: list[tuple[str, int]] = []  # (chunk id, start)


class EntityEdit(BaseModel):
    """New values for an entity: only the fields a decision sets are not None."""

    model_config = ConfigDict(frozen=True)

    name: Text | None = None
    type: str | None = None
    concept_ids: list[str] | None = None


class MergeSnapshot(BaseModel):
    model_config = ConfigDict(frozen=True)

    source: str  # the merged entity
    target: str  # the entity it joined
    score: float
    method: str


def review_payload_types(kind: ReviewTarget) -> tuple[
        type[StatementSnapshot | EntitySnapshot | MergeSnapshot], type[StatementEdit | EntityEdit]]:
    """The types of a decision's ``before`` snapshot and ``after`` edit by what it is
    about: what a store reads a decision's JSON back as."""
    snapshots: dict[ReviewTarget, type[StatementSnapshot | EntitySnapshot | MergeSnapshot]] = {
        ReviewTarget.STATEMENT: StatementSnapshot, ReviewTarget.ENTITY: EntitySnapshot,
        ReviewTarget.MERGE: MergeSnapshot}
    edit: type[StatementEdit | EntityEdit] = (
        StatementEdit if kind is ReviewTarget.STATEMENT else EntityEdit)
    return snapshots[kind], edit


class Decision(BaseModel):
    """One curator action, kept for good (a PROV-O activity in the ``review``
    graph). ``before`` is what the target was; ``after`` the curator's version.
    An ``undo`` names the decision it takes back in ``undoes``."""

    model_config = ConfigDict(frozen=True)

    id: str
    target_kind: ReviewTarget
    target: str
    action: ReviewAction
    reviewer: str
    at: datetime
    reason: str = ""
    before: StatementSnapshot | EntitySnapshot | MergeSnapshot | None = None
    after: StatementEdit | EntityEdit | None = None
    undoes: str | None = None
