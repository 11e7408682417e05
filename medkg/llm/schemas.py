"""What each LLM stage must answer: pydantic models whose JSON schema is sent
with the prompt (and compiled to a grammar by the gguf backend).

Every list and string is bounded: a grammar-constrained small model otherwise
repeats items until ``max_tokens`` cuts the JSON off. With the bounds, the
longest answer fits in ``llm.max_tokens`` (default 2048) and always parses.
Extraction answers for a pack of chunks (``llm.pack_tokens``) have bounds that
grow with the pack up to a cap that still fits; tag summaries for a full pack
of 8 passages could, in a degenerate worst case (every tag filled with six
long terms), run past it: that answer is then cut off, repaired once or
recorded as failed, and those chunks keep their builtin summaries.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Literal

from pydantic import BaseModel, Field, create_model

from medkg.model import Predicate, Qualifiers

EntityType = Literal["chemical", "drug", "disease", "symptom", "finding", "gene", "procedure",
                     "lab_test", "anatomy", "organism", "device", "other"]
Assertion = Literal["present", "absent", "possible", "hypothetical", "historical", "family"]

# LLM entity types -> UMLS semantic groups.
TYPE_GROUPS: dict[str, str] = {
    "chemical": "CHEM", "drug": "CHEM", "disease": "DISO", "symptom": "DISO",
    "finding": "DISO", "gene": "GENE", "procedure": "PROC", "lab_test": "PROC",
    "anatomy": "ANAT", "organism": "LIVB", "device": "DEVI", "other": "CONC",
}


NAME = 60  # characters
NOTE = 80
MAX_ENTITIES = 10
MAX_RELATIONS = 6
MAX_TAG_TERMS = 6
MAX_PACK_ENTITIES = 24  # a pack of chunks: 24 * ~55 + 12 * ~45 tokens < 2048
MAX_PACK_RELATIONS = 12


class ExtractedEntity(BaseModel):
    name: str = Field(min_length=1, max_length=NAME,
                      description="the entity exactly as written in the text")
    type: EntityType
    context: str = Field("", max_length=NOTE,
                         description="how the text uses the entity, in a few words")
    assertion: Assertion = "present"

    def qualifiers(self) -> Qualifiers:
        return Qualifiers(
            negated=self.assertion == "absent", uncertain=self.assertion == "possible",
            hypothetical=self.assertion == "hypothetical",
            historical=self.assertion == "historical",
            experiencer="family" if self.assertion == "family" else "patient")


class ExtractedRelation(BaseModel):
    head: str = Field(min_length=1, max_length=NAME)
    predicate: Predicate
    tail: str = Field(min_length=1, max_length=NAME)
    confidence: float = Field(0.7, ge=0, le=1)


class ExtractionAnswer(BaseModel):
    entities: list[ExtractedEntity] = Field(max_length=MAX_ENTITIES)
    relations: list[ExtractedRelation] = Field(default_factory=list, max_length=MAX_RELATIONS)


@cache
def extraction_answer(chunks: int) -> type[ExtractionAnswer]:
    """The answer for a pack of ``chunks`` chunks: the bounds grow with the pack
    (up to ``MAX_PACK_ENTITIES`` / ``MAX_PACK_RELATIONS``, which still fit
    ``llm.max_tokens``); one chunk gets :class:`ExtractionAnswer` itself."""
    if chunks <= 1:
        return ExtractionAnswer
    return create_model(
        f"ExtractionAnswer{chunks}", __base__=ExtractionAnswer,
        entities=(list[ExtractedEntity],
                  Field(max_length=min(MAX_ENTITIES * chunks, MAX_PACK_ENTITIES))),
        relations=(list[ExtractedRelation],
                   Field(default_factory=list,
                         max_length=min(MAX_RELATIONS * chunks, MAX_PACK_RELATIONS))))


# -- the multi-prompt extraction profile (KGCaRe) ------------------------------------------

StructureKind = Literal["temporal", "causal", "procedural", "conditional"]
ConditionKind = Literal["none", "if", "unless", "population", "dose"]


class StructureNote(BaseModel):
    kind: StructureKind
    note: str = Field(min_length=1, max_length=NOTE)


class ContextAnswer(BaseModel):
    entities: list[ExtractedEntity] = Field(max_length=MAX_ENTITIES)
    structure: list[StructureNote] = Field(default_factory=list, max_length=MAX_RELATIONS)


class ConditionalRelation(ExtractedRelation):
    condition: str = Field("", max_length=NOTE, description="when it holds, if only then")
    condition_kind: ConditionKind = "none"


class ConditionalRelations(BaseModel):
    relations: list[ConditionalRelation] = Field(max_length=MAX_RELATIONS)


class InferredRelations(BaseModel):
    inferred: list[ExtractedRelation] = Field(default_factory=list, max_length=MAX_RELATIONS)


class StandardName(BaseModel):
    name: str = Field(min_length=1, max_length=NAME)
    standard: str = Field(min_length=1, max_length=NAME)


class StandardNames(BaseModel):
    names: list[StandardName] = Field(max_length=MAX_PACK_ENTITIES)


@cache
def context_answer(chunks: int) -> type[ContextAnswer]:
    """Step 1's answer for a pack of ``chunks`` (bounds as :func:`extraction_answer`)."""
    if chunks <= 1:
        return ContextAnswer
    return create_model(
        f"ContextAnswer{chunks}", __base__=ContextAnswer,
        entities=(list[ExtractedEntity],
                  Field(max_length=min(MAX_ENTITIES * chunks, MAX_PACK_ENTITIES))))


@cache
def conditional_relations(chunks: int) -> type[ConditionalRelations]:
    if chunks <= 1:
        return ConditionalRelations
    return create_model(
        f"ConditionalRelations{chunks}", __base__=ConditionalRelations,
        relations=(list[ConditionalRelation],
                   Field(max_length=min(MAX_RELATIONS * chunks, MAX_PACK_RELATIONS))))


class GeneratedTriple(BaseModel):
    head: str = Field(min_length=1, max_length=NAME)
    predicate: Predicate
    tail: str = Field(min_length=1, max_length=NAME)
    # Long strings stay unbounded: llama.cpp spells a length bound out as nested
    # optional characters, and a grammar for hundreds of them crashes its sampler.
    evidence: str = Field("", description="the sentence that states it, copied exactly")
    confidence: float = Field(0.7, ge=0, le=1)


class TripleAnswer(BaseModel):
    triples: list[GeneratedTriple] = Field(max_length=MAX_RELATIONS)


Terms = Annotated[list[Annotated[str, Field(max_length=NAME)]], Field(max_length=MAX_TAG_TERMS)]


class TagSummaryAnswer(BaseModel):
    symptoms_and_signs: Terms = []
    diagnoses_and_conditions: Terms = []
    patient_history: Terms = []
    anatomy_and_body_functions: Terms = []
    medications_and_doses: Terms = []
    procedures: Terms = []
    laboratory_results: Terms = []
    adverse_events: Terms = []


class TagSummaries(BaseModel):
    summaries: list[TagSummaryAnswer]


@cache
def tag_summaries(passages: int) -> type[TagSummaries]:
    """The answer for ``passages`` numbered passages: exactly one summary each (a
    grammar-constrained model cannot give another count)."""
    return create_model(
        f"TagSummaries{passages}", __base__=TagSummaries,
        summaries=(list[TagSummaryAnswer], Field(min_length=passages, max_length=passages)))


class CitedAnswer(BaseModel):
    answer: str = Field(min_length=1)
    citations: list[int] = Field(default_factory=list, max_length=20,
                                 description="numbers of the sources the answer uses")


MAX_PICKS = 12  # triples kept or clue entities chosen per call


class Picks(BaseModel):
    """The numbers of the listed items a prompt chose (``prune_triples``: the triples
    to keep; ``clue_entities``: the entities to explore), best first."""

    picks: list[Annotated[int, Field(ge=1)]] = Field(
        max_length=MAX_PICKS, description="numbers of the chosen items, best first")
