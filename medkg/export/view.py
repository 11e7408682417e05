"""What an export reads: the graph through one filter, a batch at a time.

Every format reads the store through :class:`GraphView`, so the filters
(layers, review state, minimum confidence, negated and uncertain statements)
mean the same in each, and no format holds the whole graph: statements,
entities, concepts and links stream from the store in batches. What a view
keeps in memory is one small record per concept and per exported entity (their
category and KGX id), so that an edge can name its ends.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from medkg.errors import StoreError
from medkg.export.biolink import BiolinkMap, biolink_map
from medkg.model import Concept, EntityBrief, Layer, Link, LinkKind, ReviewState, Triple
from medkg.store.base import GraphStore
from medkg.store.vocab import IRIs

Reviewed = Literal["accepted", "not-rejected", "all"]
REVIEWED: tuple[str, ...] = ("accepted", "not-rejected", "all")
ALL_LAYERS = frozenset(Layer)
_PMID = re.compile(r"\bPMID[: ]\s*(\d{1,9})\b", re.IGNORECASE)


@dataclass(frozen=True)
class ExportFilter:
    """Which statements an export keeps. Negated statements are left out unless
    asked for, and even then never become a plain edge (their ``negated`` flag
    travels with them); uncertain, hypothetical and family-history statements are
    kept with their qualifiers unless ``include_uncertain`` is off."""

    layers: frozenset[Layer] = ALL_LAYERS
    reviewed: Reviewed = "not-rejected"
    min_confidence: float = 0.0
    include_negated: bool = False
    include_uncertain: bool = True

    def __post_init__(self) -> None:
        if self.reviewed not in REVIEWED:
            raise StoreError(f"unknown review filter {self.reviewed!r}",
                             hint=f"use one of {', '.join(REVIEWED)}")
        if not 0.0 <= self.min_confidence <= 1.0:
            raise StoreError(f"minimum confidence {self.min_confidence} is not in [0, 1]")

    def keeps(self, t: Triple) -> bool:
        if t.layer not in self.layers or t.confidence < self.min_confidence:
            return False
        if t.qualifiers.negated and not self.include_negated:
            return False
        q = t.qualifiers
        if not self.include_uncertain and (q.uncertain or q.hypothetical
                                           or q.experiencer != "patient"):
            return False
        if self.reviewed == "accepted":
            return t.review is ReviewState.ACCEPTED
        if self.reviewed == "not-rejected":
            return t.in_force
        return True

    def keeps_layer(self, layer: Layer) -> bool:
        return layer in self.layers


@dataclass
class ExportReport:
    """What one export wrote and left out."""

    path: str
    format: str
    nodes: int = 0
    edges: int = 0
    mappings: int = 0
    statements_left_out: int = 0
    left_out: dict[str, int] = field(default_factory=dict)  # reason -> count

    def leave_out(self, reason: str, n: int = 1) -> None:
        self.left_out[reason] = self.left_out.get(reason, 0) + n


@dataclass(frozen=True)
class ConceptInfo:
    name: str
    category: str
    group: str | None


class GraphView:
    """The store as an export sees it: filtered, streamed, with Biolink terms."""

    def __init__(self, store: GraphStore, iris: IRIs, flt: ExportFilter | None = None) -> None:
        self.store = store
        self.iris = iris
        self.filter = flt or ExportFilter()
        self.biolink: BiolinkMap = biolink_map()
        self._concepts: dict[str, ConceptInfo] | None = None
        self._publications: dict[str, str | None] = {}

    # -- layers ---------------------------------------------------------------

    @property
    def data_layers(self) -> list[Layer]:
        return [la for la in (Layer.USER, Layer.LITERATURE) if la in self.filter.layers]

    @property
    def with_vocabulary(self) -> bool:
        return Layer.VOCABULARY in self.filter.layers

    # -- reads ----------------------------------------------------------------

    def concepts(self) -> Iterator[Concept]:
        """The vocabulary layer's concepts (none when it is filtered out)."""
        if self.with_vocabulary:
            yield from self.store.iter_concepts()

    def concept_info(self) -> dict[str, ConceptInfo]:
        """Name, category and group of every concept (one pass, then kept)."""
        if self._concepts is None:
            self._concepts = {
                c.id: ConceptInfo(c.name, self.biolink.category(
                    c.semantic_group, c.semantic_type, c.id), c.semantic_group)
                for c in self.store.iter_concepts()}
        return self._concepts

    def concept_category(self, concept: Concept) -> str:
        return self.biolink.category(concept.semantic_group, concept.semantic_type, concept.id)

    def entities(self) -> Iterator[EntityBrief]:
        for layer in self.data_layers:
            yield from self.store.iter_entities(layer)

    def entity_category(self, entity: EntityBrief) -> str:
        info = self.concept_info()
        for cid in entity.concept_ids:
            if cid in info:
                return info[cid].category
        return self.biolink.category(entity.type)

    def triples(self, report: ExportReport | None = None) -> Iterator[Triple]:
        """The statements the filter keeps; ``report`` counts the others."""
        for layer in self.data_layers:
            for t in self.store.iter_triples(layer):
                if self.filter.keeps(t):
                    yield t
                elif report is not None:
                    report.statements_left_out += 1

    def links(self, kind: LinkKind | None = None) -> Iterator[Link]:
        yield from self.store.iter_links(kind)

    def publications(self, triple: Triple) -> list[str]:
        """PubMed ids of the documents a statement's evidence comes from, where a
        document's title or source names one (``PMID 123``, ``pubmed/123``)."""
        out: list[str] = []
        for ev in triple.evidence:
            if ev.document_id not in self._publications:
                doc = self.store.document(ev.document_id)
                found = _PMID.search(doc.title) or _PMID.search(doc.source) or re.search(
                    r"pubmed(?:\.ncbi\.nlm\.nih\.gov)?/(\d{1,9})", doc.source)
                self._publications[ev.document_id] = f"PMID:{found.group(1)}" if found else None
            pub = self._publications[ev.document_id]
            if pub and pub not in out:
                out.append(pub)
        return out
