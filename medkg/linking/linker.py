"""Cross-layer triple linking (MedGraphRAG).

- user entity ``reference_of`` literature entity: same concept, or content
  similarity at or above ``reference_threshold``, with compatible types;
- user or literature entity ``definition_of`` vocabulary concept: the concept
  it was normalised to, or the most similar concept at or above
  ``definition_threshold`` with a compatible type.

Scores are cosine similarities of the embedded contents (``name; type;
context`` for entities, ``name; group; definition`` for concepts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from medkg.config import LinkingConfig
from medkg.errors import StoreError
from medkg.linking.embeddings import Embedder, Matrix
from medkg.linking.vectors import VectorIndex
from medkg.model import Concept, Entity, Link, LinkKind

if TYPE_CHECKING:
    from medkg.ontology.index import ConceptIndex

CANDIDATES = 10
UNTYPED = {"CONC", ""}


def concept_content(concept: Concept) -> str:
    return f"{concept.name}; {concept.semantic_group or ''}; {concept.definition or ''}"


def compatible(a: str | None, b: str | None) -> bool:
    """Types are compatible when equal or when either is unknown."""
    return (a or "") in UNTYPED or (b or "") in UNTYPED or a == b


def _unit(v: Matrix) -> Matrix:
    return v.reshape(-1)


def link_references(
    user: Sequence[Entity],
    user_vectors: Matrix,
    literature: Sequence[Entity],
    literature_index: VectorIndex,
    config: LinkingConfig,
) -> list[Link]:
    """reference_of links from each user entity to its literature counterparts."""
    by_id = {e.id: e for e in literature}
    by_concept: dict[str, list[Entity]] = {}
    for e in literature:
        for cid in e.concept_ids:
            by_concept.setdefault(cid, []).append(e)
    links: list[Link] = []
    allowed = set(by_id)
    for entity, vector in zip(user, user_vectors, strict=True):
        found: dict[str, Link] = {}
        hits = dict(literature_index.search(_unit(vector), CANDIDATES, allowed))
        for cid in entity.concept_ids:
            for other in by_concept.get(cid, []):
                score = hits.get(other.id)
                if score is None:
                    score = float(_vector_of(literature_index, other.id) @ vector)
                found[other.id] = Link(kind=LinkKind.REFERENCE_OF, source=entity.id,
                                       target=other.id, score=round(score, 4),
                                       method="concept+embedding")
        for other_id, score in hits.items():
            other = by_id[other_id]
            if other_id in found or score < config.reference_threshold:
                continue
            if compatible(entity.type, other.type):
                found[other_id] = Link(kind=LinkKind.REFERENCE_OF, source=entity.id,
                                       target=other_id, score=round(score, 4),
                                       method="embedding")
        links.extend(found.values())
    return links


def _vector_of(index: VectorIndex, key: str) -> Matrix:
    vector = index.vector(key)
    if vector is None:
        raise StoreError(
            f"{key} has no vector in the index", hint="run `medkg build` to rebuild the index"
        )
    return vector


def link_definitions(
    entities: Sequence[Entity],
    vectors: Matrix,
    concepts: dict[str, Concept],
    concept_index: VectorIndex,
    config: LinkingConfig,
    candidates: Mapping[str, Sequence[str]] | None = None,
) -> list[Link]:
    """definition_of links from entities to vocabulary concepts. An entity without
    a concept is compared with its ``candidates`` when given (see
    :func:`lexical_candidates`), else with every concept of ``concept_index``."""
    links: list[Link] = []
    for entity, vector in zip(entities, vectors, strict=True):
        linked = False
        for cid in entity.concept_ids:
            if cid not in concepts:
                continue
            score = float(_vector_of(concept_index, cid) @ vector)
            links.append(Link(kind=LinkKind.DEFINITION_OF, source=entity.id, target=cid,
                              score=round(score, 4), method="normalisation+embedding"))
            linked = True
        if linked:
            continue
        allowed = None if candidates is None else set(candidates.get(entity.id, ()))
        if allowed is not None and not allowed:
            continue
        for cid, score in concept_index.search(_unit(vector), CANDIDATES, allowed):
            concept = concepts.get(cid)
            if concept is None or score < config.definition_threshold:
                continue
            if compatible(entity.type, concept.semantic_group):
                links.append(Link(kind=LinkKind.DEFINITION_OF, source=entity.id, target=cid,
                                  score=round(score, 4), method="embedding"))
                break
    return links


def lexical_candidates(entities: Sequence[Entity], concepts: ConceptIndex,
                       k: int) -> dict[str, list[str]]:
    """The concepts each entity without one may be defined by: the ``k`` best
    lexical matches of its name (exact, abbreviation, character 3-grams), which
    then need vectors; the rest of the vocabulary does not."""
    return {e.id: [c.concept.id for c in concepts.search(e.name, k)]
            for e in entities if not e.concept_ids}


def embed_entities(embedder: Embedder, entities: Sequence[Entity]) -> Matrix:
    if not entities:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    return embedder.embed([e.content() for e in entities])
