"""How an answer was found, typed: what local search used, the path U-Retrieval
took down the tag tree, its bottom-up refinement, and notes from generation.

Fields a mode does not fill stay ``None`` and are left out of the JSON, so
``medkg ask --json`` shows only what the mode did.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class TreeNodeStep(BaseModel):
    """One node the descent chose at a level."""

    id: str
    level: int
    chunks: int  # chunks under the node
    similarity: float  # of the node's own vector to the question
    score: float  # max(similarity, best member's score)
    summary: str


class TreeLevel(BaseModel):
    level: int
    nodes: list[TreeNodeStep]


class RefinementStep(BaseModel):
    """One ancestor of the best chunk, looked at bottom-up."""

    node: str
    level: int
    summary: str
    shared_terms: list[str]
    added_chunks: int = 0


class TraversalStep(BaseModel):
    """One hop of the traverse mode."""

    depth: int
    frontier: int  # entities the hop left from
    candidates: int  # triples scored
    kept: int  # triples kept after pruning
    clues: list[str] = Field(default_factory=list)  # clue entities' names
    stop: str = ""  # why the search stopped after this hop


class SourceRank(BaseModel):
    """Where one candidate source put a chunk: its rank (1 = best) and the source's
    own score where it has one (BM25 for ``lexical``, cosine for ``dense``; the
    graph, traversal and tree sources rank without a score)."""

    rank: int
    score: float | None = None


class Candidate(BaseModel):
    """One chunk of the candidate ranking: its score in the ranking (the fused
    reciprocal-rank score, or the one source's own score in a single-source
    mode; none for a chunk the answer drew on that no source ranked) and each
    source's rank of it."""

    chunk_id: str
    score: float | None = None
    sources: dict[str, SourceRank] = Field(default_factory=dict)


class Trace(BaseModel):
    # local search (every mode)
    question_concepts: list[str] = Field(default_factory=list)
    intents: list[str] = Field(default_factory=list)
    focus_entities: list[str] = Field(default_factory=list)
    triples: list[str] = Field(default_factory=list)
    retrieved_chunks: list[str] = Field(default_factory=list)  # the answer's, best first
    ranking: list[str] = Field(default_factory=list)  # every candidate, best first
    # the same candidates with their scores and each source's rank (medkg retrieve)
    candidates: list[Candidate] | None = None
    # the cosine of the answer's closest sentence to the question (retrieval.min_evidence)
    closest: float | None = None
    # U-Retrieval
    query_tags: dict[str, list[str]] | None = None
    tree_path: list[TreeLevel] | None = None
    scope_chunks: int | None = None  # chunks under the chosen groups (a prior, not a filter)
    refinement: list[RefinementStep] | None = None
    draft_ranking: list[str] | None = None  # the fused ranking's head with the first scope
    # traverse: each hop, and the best paths from the question's entities
    traversal: list[TraversalStep] | None = None
    topic: list[str] | None = None  # the entities it started from, and why each
    paths: list[str] | None = None
    # traverse found no path: what the answer's evidence is instead (the answer says so)
    fallback: str | None = None
    # the auto mode: the question's dual-level keywords (low: entities; high: themes)
    keywords: dict[str, list[str]] | None = None
    # the answer engine, and anything else worth saying
    generation: list[str] | None = None
    note: str | None = None
