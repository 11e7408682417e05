"""What retrieval reads of the graph, each thing once per retriever: entities'
briefs, the links that say two entities stand for the same thing, the concepts
that define them, chunks and documents. A question reads the entities it
reaches, never every entity of the workspace, and of each only its name,
concepts and where it is mentioned. It is also the traversal's
:class:`~medkg.retrieval.traverse.TraversalGraph`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from medkg.linking.embeddings import Matrix
from medkg.linking.vectors import VectorIndex
from medkg.model import Chunk, Document, EntityBrief, LinkKind, Triple
from medkg.store.base import GraphStore


class GraphReader:
    def __init__(self, store: GraphStore, entity_index: VectorIndex) -> None:
        self.store = store
        self._entity_index = entity_index
        self._chunks: dict[str, Chunk] = {}
        self._documents: dict[str, Document] = {}  # the last few cited documents
        self._entity_cache: dict[str, EntityBrief] = {}
        self._link_cache: dict[str, set[str]] = {}
        self._definition_cache: dict[str, list[str]] = {}
        self._same_concept_cache: dict[str, set[str]] = {}

    # -- text ---------------------------------------------------------------------

    def chunk(self, chunk_id: str) -> Chunk:
        if chunk_id not in self._chunks:
            self._chunks[chunk_id] = self.store.chunk(chunk_id)
        return self._chunks[chunk_id]

    def document(self, document_id: str) -> Document:
        if document_id not in self._documents:
            if len(self._documents) >= 64:  # texts can be long: keep the last few
                self._documents.pop(next(iter(self._documents)))
            self._documents[document_id] = self.store.document(document_id)
        return self._documents[document_id]

    # -- entities and links ---------------------------------------------------------

    def fetch(self, ids: Iterable[str]) -> dict[str, EntityBrief]:
        """These entities' briefs, each read once per retriever."""
        wanted = list(dict.fromkeys(ids))
        missing = [e for e in wanted if e not in self._entity_cache]
        if missing:
            self._entity_cache.update((b.id, b) for b in self.store.entity_briefs(missing))
        return {e: self._entity_cache[e] for e in wanted if e in self._entity_cache}

    def of_concepts(self, concept_ids: Sequence[str]) -> list[EntityBrief]:
        """The entities normalised to these concepts (kept for :meth:`fetch`)."""
        found = self.store.entities_of_concepts(list(concept_ids)) if concept_ids else []
        self._entity_cache.update((e.id, e) for e in found)
        return found

    def link_all(self, entity_ids: Sequence[str]) -> None:
        """:meth:`same_thing` of these entities, read in one batched query where the
        store has one (the tables' ``links_of``), not two a seed."""
        missing = [e for e in dict.fromkeys(entity_ids) if e not in self._link_cache]
        batch = getattr(self.store, "links_of", None)
        if not missing or batch is None:
            return
        found: dict[str, set[str]] = {e: set() for e in missing}
        for link in batch(missing, (LinkKind.REFERENCE_OF, LinkKind.SAME_AS)):
            if link.source in found:
                found[link.source].add(link.target)
            if link.target in found and link.kind is LinkKind.SAME_AS:
                found[link.target].add(link.source)
        self._link_cache.update(found)

    def same_thing(self, entity_id: str) -> set[str]:
        """Entities one link away that stand for the same thing: the literature
        entity a user entity refers to, and entities merged with it (either way)."""
        if entity_id not in self._link_cache:
            out = {link.target for link in self.store.links(source=entity_id)
                   if link.kind in (LinkKind.REFERENCE_OF, LinkKind.SAME_AS)}
            out |= {link.source for link in self.store.links(target=entity_id,
                                                              kind=LinkKind.SAME_AS)}
            self._link_cache[entity_id] = out
        return self._link_cache[entity_id]

    def define_all(self, entity_ids: Sequence[str]) -> None:
        """:meth:`defined_by` (and :meth:`same_thing`) of these entities in a few
        batched reads where the store has them (the tables' ``links_of``)."""
        batch = getattr(self.store, "links_of", None)
        missing = [e for e in dict.fromkeys(entity_ids) if e not in self._definition_cache]
        if not missing or batch is None:
            return
        self.link_all(missing)
        others = sorted({o for e in missing for o in self._link_cache.get(e, set())})
        own: dict[str, list[str]] = {}
        for link in batch([*missing, *others], (LinkKind.DEFINITION_OF,)):
            own.setdefault(link.source, []).append(link.target)
        for e in missing:
            mine = own.get(e) or [c for o in sorted(self._link_cache.get(e, set()))
                                  for c in own.get(o, [])]
            self._definition_cache[e] = list(dict.fromkeys(mine))

    def defined_by(self, entity_id: str) -> list[str]:
        """The concepts defining an entity: its own ``definition_of`` links, else
        those of the entities it is linked to (a user entity's literature one)."""
        if entity_id not in self._definition_cache:
            own = [x.target for x in self.store.links(source=entity_id,
                                                      kind=LinkKind.DEFINITION_OF)]
            if not own:
                own = [x.target for other in sorted(self.same_thing(entity_id))
                       for x in self.store.links(source=other, kind=LinkKind.DEFINITION_OF)]
            self._definition_cache[entity_id] = list(dict.fromkeys(own))
        return self._definition_cache[entity_id]

    # -- the traversal's port (TraversalGraph) --------------------------------------

    def triples_of(self, entity_ids: Sequence[str]) -> list[Triple]:
        return self.store.triples(entity_ids=list(entity_ids)) if entity_ids else []

    def briefs(self, entity_ids: Iterable[str]) -> dict[str, EntityBrief]:
        return self.fetch(sorted(entity_ids))

    def linked(self, entity_id: str) -> set[str]:
        """For a traversal: the entities that stand for the same thing (``same_as``,
        ``reference_of``), and those defined by the same vocabulary concept
        (``definition_of``)."""
        if entity_id not in self._same_concept_cache:
            out = set(self.same_thing(entity_id))
            for concept in self.defined_by(entity_id):
                out |= {x.source for x in self.store.links(target=concept,
                                                          kind=LinkKind.DEFINITION_OF)}
            out.discard(entity_id)
            self._same_concept_cache[entity_id] = out
        return self._same_concept_cache[entity_id]

    def entity_vector(self, entity_id: str) -> Matrix | None:
        return self._entity_index.vector(entity_id)
