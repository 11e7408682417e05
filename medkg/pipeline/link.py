"""Link: ``reference_of`` (user -> literature), ``definition_of`` (both -> the
vocabulary) and entity resolution (``same_as``), redone when the entities (the
corpus version), the vocabulary or the linking settings changed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from medkg import timing
from medkg.fingerprints import LINK
from medkg.model import Entity, Layer, Link, LinkKind
from medkg.pipeline.context import BuildContext
from medkg.pipeline.marks import fingerprint
from medkg.pipeline.progress import Progress

if TYPE_CHECKING:
    from medkg.components import Components
    from medkg.linking.embeddings import Matrix
    from medkg.linking.vectors import VectorIndex
    from medkg.ontology.index import ConceptIndex

STAGE = LINK
EMBED_BATCH = 512


def inputs(parts: Components) -> str:
    """The fingerprint of what links depend on: the entities (new with every
    extraction or deletion, which change the corpus version) and the linking
    settings (a vocabulary load forgets the stage)."""
    return fingerprint(parts.corpus.fingerprint(), parts.settings.linking.model_dump(mode="json"))


def forget(parts: Components) -> None:
    """The links go with the entities they join: whatever removes entities (a
    delete, a re-extraction) calls this first, so the next build links again
    even when the corpus ends as it was (same text, same fingerprint)."""
    parts.fingerprints.forget(STAGE)


def is_current(parts: Components) -> bool:
    """Whether the links were made from what the workspace has now."""
    return parts.fingerprints.current(STAGE, inputs(parts))


def run(ctx: BuildContext) -> None:
    parts = ctx.parts
    fp = inputs(parts)
    if not parts.fingerprints.current(STAGE, fp):
        link(parts, ctx.concepts, ctx.progress)
        parts.fingerprints.record(STAGE, fp)


def link(parts: Components, concepts: ConceptIndex, progress: Progress) -> int:
    from medkg.files import user_cache_dir
    from medkg.linking.concept_vectors import all_concept_vectors
    from medkg.linking.linker import (
        embed_entities,
        lexical_candidates,
        link_definitions,
        link_references,
    )

    progress("link", 0, 1)
    store, embedder, cfg = parts.store, parts.embedder, parts.settings.linking
    with timing.stage("store"):
        # without their mentions where the store can (the tables): linking compares
        # names, types, contexts and concepts; resolution counts mentions apart
        heads = getattr(store, "entity_heads", store.entities)
        user = heads(Layer.USER)
        literature = heads(Layer.LITERATURE)
    user_vectors = embed_entities(embedder, user)
    lit_vectors = embed_entities(embedder, literature)
    index = parts.index("entities")
    index.upsert([e.id for e in user], user_vectors)
    index.upsert([e.id for e in literature], lit_vectors)
    index.save()
    by_id = {c.id: c for c in concepts.concepts()}
    entities = [*user, *literature]
    # Normalised entities need only their own concepts' vectors. Entities without
    # a concept are compared with their name's lexical candidates (which then need
    # vectors in the workspace), or with every concept (all of which then need
    # vectors, made once per machine).
    candidates: dict[str, list[str]] | None = None
    with timing.stage("concept vectors"):
        if cfg.concept_candidates == "all" and any(not e.concept_ids for e in entities):
            concept_vectors = all_concept_vectors(
                list(by_id.values()), embedder, user_cache_dir() / "concept-vectors",
                cfg.ann_threshold, progress)
        else:
            candidates = lexical_candidates(entities, concepts, cfg.lexical_candidates)
            wanted = [cid for e in entities for cid in e.concept_ids]
            wanted += [cid for ids in candidates.values() for cid in ids]
            concept_vectors = embed_concepts(parts, wanted, concepts, progress)
    links = link_references(user, user_vectors, literature, index, cfg)
    links += link_definitions(user, user_vectors, by_id, concept_vectors, cfg, candidates)
    links += link_definitions(literature, lit_vectors, by_id, concept_vectors, cfg,
                              candidates)
    if cfg.resolution:
        with timing.stage("resolve"):
            links += _resolve(parts, Layer.USER, user, user_vectors, index)
            links += _resolve(parts, Layer.LITERATURE, literature, lit_vectors, index)
    with timing.stage("store"):
        store.add_links(links)
    progress("link", 1, 1)
    return len(links)


def embed_concepts(parts: Components, concept_ids: Iterable[str], concepts: ConceptIndex,
                   progress: Progress) -> VectorIndex:
    """Make sure these concepts have vectors (content: name; group; definition)."""
    from medkg.linking.linker import concept_content

    index = parts.index("concepts")
    todo = [c for cid in dict.fromkeys(concept_ids)
            if cid not in index and (c := concepts.get(cid)) is not None]
    for start in range(0, len(todo), EMBED_BATCH):
        progress("concepts", start, len(todo))
        batch = todo[start : start + EMBED_BATCH]
        index.upsert([c.id for c in batch],
                     parts.embedder.embed([concept_content(c) for c in batch]))
    if todo:
        progress("concepts", len(todo), len(todo))
        index.save()
    return index


def _resolve(parts: Components, layer: Layer, entities: list[Entity], vectors: Matrix,
             index: VectorIndex) -> list[Link]:
    """``same_as`` links for one layer; merges that no longer hold are removed,
    merges a curator undid (``different_from``) are never made again."""
    from medkg.abbreviations import find_abbreviations
    from medkg.linking.resolution import ResolutionSettings, resolve

    cfg, store = parts.settings.linking, parts.store
    abbreviations: dict[str, str] = {}
    for doc_id in store.document_ids(layer):
        abbreviations.update(find_abbreviations(store.document(doc_id).text))
    refused = [(x.source, x.target) for x in store.links(kind=LinkKind.DIFFERENT_FROM)]
    settings = ResolutionSettings(candidates=cfg.resolution_candidates,
                                  min_cosine=cfg.resolution_min_cosine,
                                  min_name_similarity=cfg.resolution_min_name_similarity)
    counts = getattr(store, "mention_counts", None)
    merges = resolve(entities, vectors, index, abbreviations, refused, settings,
                     counts([e.id for e in entities]) if counts is not None else None)
    ids = {e.id for e in entities}
    stale = [x for x in store.links(kind=LinkKind.SAME_AS) if x.source in ids and x not in merges]
    store.remove_links(stale)
    return merges
