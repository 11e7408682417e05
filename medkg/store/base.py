"""The graph store contract every backend implements.

A backend stores the model objects of :mod:`medkg.model` and gives them back
unchanged. Writes are idempotent (ids are content-derived, so writing the
same object twice changes nothing) and a document is written atomically with
its chunks. The contract test suite in ``tests/store`` runs against every
backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from medkg.model import (
    Chunk,
    Concept,
    Decision,
    Document,
    Entity,
    EntityBrief,
    EntityEdit,
    Layer,
    Link,
    LinkKind,
    ReviewState,
    Triple,
)


@dataclass
class Deletion:
    """What deleting a document removed: everything only it supported."""

    chunks: list[str] = field(default_factory=list)
    mentions: int = 0
    evidence: int = 0
    entities: list[str] = field(default_factory=list)  # left without any mention
    triples: list[str] = field(default_factory=list)  # left without any evidence
    links: int = 0


@dataclass(frozen=True)
class LayerCounts:
    documents: int = 0
    chunks: int = 0
    entities: int = 0
    triples: int = 0


@dataclass(frozen=True)
class StoreCounts:
    """What a store holds: quads, per-layer counts, vocabulary concepts, links."""

    quads: int = 0
    user: LayerCounts = LayerCounts()
    literature: LayerCounts = LayerCounts()
    concepts: int = 0
    links: int = 0
    decisions: int = 0  # curators' review decisions

    @property
    def entities(self) -> int:
        return self.user.entities + self.literature.entities

    @property
    def triples(self) -> int:
        return self.user.triples + self.literature.triples

    def rows(self) -> list[tuple[str, int]]:
        """(label, count) in display order: ``quads``, ``user.documents``, ...,
        ``vocabulary.concepts``, ``links``."""
        out = [("quads", self.quads)]
        for name, layer in (("user", self.user), ("literature", self.literature)):
            out += [(f"{name}.{k}", getattr(layer, k))
                    for k in ("documents", "chunks", "entities", "triples")]
        return [*out, ("vocabulary.concepts", self.concepts), ("links", self.links),
                ("review.decisions", self.decisions)]


if TYPE_CHECKING:
    from rdflib import URIRef
    from rdflib.term import Node

    Quad = tuple[Node, Node, Node, URIRef]


@runtime_checkable
class GraphStore(Protocol):
    # documents and chunks
    def add_document(self, document: Document, chunks: list[Chunk]) -> None: ...
    def mark_stage(self, document_id: str, stage: str) -> None: ...
    def stages(self, document_id: str) -> set[str]: ...
    def has_document(self, document_id: str) -> bool: ...
    def document(self, document_id: str) -> Document: ...
    def document_ids(self, layer: Layer | None = None) -> list[str]: ...
    def document_sources(self, layer: Layer) -> dict[str, list[str]]:
        """Source -> ids of the layer's documents from it (edits replace a version)."""
        ...
    def unmark_stage(self, document_id: str, stage: str) -> None: ...
    def delete_extraction(self, document_id: str, marks: Iterable[str]) -> Deletion:
        """Remove what extraction wrote from the document (mentions, evidence, what
        only they supported, their links) and these stage marks, in one
        transaction; its text and chunks stay."""
        ...
    def delete_document(self, document_id: str,
                        journal: Callable[[Deletion], None] | None = None) -> Deletion:
        """Remove the document and what only it supported in one transaction;
        ``journal`` hears what will go before anything does."""
        ...
    def chunk(self, chunk_id: str) -> Chunk: ...
    def chunk_ids(self) -> set[str]: ...
    def chunks(self, document_id: str) -> list[Chunk]: ...

    # vocabulary
    def add_concepts(self, concepts: Iterable[Concept], source: str,
                     loaded_at: datetime | None = None) -> int:
        """``loaded_at``: when the vocabulary was loaded (default now; a copy keeps
        the source's)."""
        ...
    def concept(self, concept_id: str) -> Concept: ...
    def concepts(self) -> list[Concept]: ...

    # user / literature layers
    def add_entities(self, entities: Iterable[Entity]) -> None: ...
    def entity(self, entity_id: str) -> Entity: ...
    def entity_ids(self) -> set[str]: ...
    def entities(self, layer: Layer) -> list[Entity]: ...
    def entities_of_concepts(self, concept_ids: Iterable[str]) -> list[EntityBrief]: ...
    def entity_briefs(self, entity_ids: Iterable[str], *, mentions: bool = True
                      ) -> list[EntityBrief]:
        """``mentions=False``: without where they are mentioned (no mention is read)."""
        ...
    def add_triples(self, triples: Iterable[Triple]) -> None: ...
    def triple(self, triple_id: str) -> Triple: ...
    def revisions_of(self, triple_id: str) -> list[str]:
        """The ids of the statements that are curators' versions of this one."""
        ...
    def triples(
        self, layer: Layer | None = None, entity_ids: Iterable[str] | None = None
    ) -> list[Triple]: ...

    # review: curators' decisions (kept apart from what the build writes) and their
    # effects on the statements and entities the build wrote
    def add_decisions(self, decisions: Iterable[Decision]) -> None: ...
    def decisions(self, target: str | None = None) -> list[Decision]:
        """Every decision (or those about one target id), oldest first."""
        ...
    def set_review_state(self, triple_id: str, state: ReviewState) -> bool:
        """False when the store has no such statement."""
        ...
    def update_entity(self, entity_id: str, edit: EntityEdit) -> bool:
        """Set the fields ``edit`` names; False when there is no such entity."""
        ...
    def remove_triples(self, triple_ids: Iterable[str]) -> list[str]: ...

    # cross-layer links
    def add_links(self, links: Iterable[Link]) -> None: ...
    def links(
        self, *, source: str | None = None, target: str | None = None,
        kind: LinkKind | None = None
    ) -> list[Link]: ...
    def remove_links(self, links: Iterable[Link]) -> int: ...

    # streaming reads (exports): a batch at a time, never the whole graph in memory
    def iter_triples(self, layer: Layer) -> Iterator[Triple]: ...
    def iter_entities(self, layer: Layer) -> Iterator[EntityBrief]: ...
    def iter_concepts(self) -> Iterator[Concept]: ...
    def iter_links(self, kind: LinkKind | None = None) -> Iterator[Link]: ...

    # whole store
    def migrate_concept_iris(self) -> int:
        """Move concepts minted under an older IRI scheme to today's IRIs (every
        graph, subject and object); how many moved."""
        ...
    def counts(self) -> StoreCounts: ...
    def quads(self) -> Iterator[Quad]: ...
    def close(self) -> None: ...
