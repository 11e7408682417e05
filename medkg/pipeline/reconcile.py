"""Reconcile: bring what is derived from the graph back in line with it before
a stage reads it.

The graph store is the truth; the delete journal, the chunk and entity vector
indexes and the tag tree follow it. A crash, a damaged file or a workspace
opened by an older medkg can leave them behind; this stage, run before every
build and every question, finishes deletes a crash cut short, drops vectors
and tree leaves of chunks or entities the graph no longer has, and embeds the
chunks of ingested documents that have no vector (or no lexical entry) yet. Entity vectors that are
missing are made by the link stage, which embeds every entity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from medkg.pipeline.curate import finish_deletes
from medkg.pipeline.marks import STAGE_INGESTED, documents_done

if TYPE_CHECKING:
    from medkg.components import Components


@dataclass
class Reconciled:
    deletes_finished: list[str] = field(default_factory=list)
    stale_chunk_vectors: int = 0
    missing_chunk_vectors: int = 0
    stale_entity_vectors: int = 0
    stale_tree_leaves: int = 0
    missing_entity_vectors: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.deletes_finished or self.stale_chunk_vectors
                    or self.missing_chunk_vectors or self.stale_entity_vectors
                    or self.missing_entity_vectors or self.stale_tree_leaves)


RECONCILED = "reconciled"  # the stamp of the graph and derived files last reconciled


def stamp(parts: Components) -> str | None:
    """What reconcile's work depends on, cheaply: the tables' revision (every
    write moves it on) and the size and time of each derived file; None where the
    store keeps no revision (the RDF and Neo4j backends: reconcile each process)."""
    from medkg.fingerprints import fingerprint

    revision = getattr(parts.store, "revision", None)
    if revision is None:
        return None
    layout = parts.layout
    files = [layout.vector_index("chunks"), layout.vector_index("entities"),
             layout.lexical_index, layout.tag_tree]
    seen = [(str(f), f.stat().st_mtime_ns, f.stat().st_size) if f.exists() else (str(f),)
            for f in files]
    return fingerprint(revision(), seen)


def reconcile(parts: Components) -> Reconciled:
    """Once per open workspace (later calls return at once: nothing else writes),
    and not at all when neither the graph nor a derived file changed since the
    last reconcile (its stamp, recorded in the stage state) and no delete is
    pending: a question then reads nothing to check.

    A workspace opened read-only (another process is writing it) is brought in
    line in memory only: vectors, lexical entries and tree leaves of chunks and
    entities its graph snapshot lacks are left out of this process's view;
    nothing is written, nothing is embedded."""
    if parts.reconciled:
        return Reconciled()
    parts.embedder  # noqa: B018 - an encoder change sets the old vectors aside first
    now = stamp(parts)
    if now is not None and now == parts.fingerprints.version(RECONCILED) \
            and not parts.fingerprints.pending_deletes():
        parts.reconciled = True
        return Reconciled()
    if parts.read_only:
        return _hide_unknown(parts)
    out = Reconciled(deletes_finished=finish_deletes(parts))
    store = parts.store
    chunk_ids = store.chunk_ids()
    chunks = parts.index("chunks")
    indexed = set(chunks.ids())
    stale = sorted(indexed - chunk_ids)
    chunks.delete(stale)
    out.stale_chunk_vectors = len(stale)
    missing = 0
    if chunk_ids - indexed:  # only chunks of documents whose ingest finished
        from medkg.reading.chunking import chunk_vectors

        for _layer, doc_id in documents_done(store, STAGE_INGESTED):
            lacking = [c for c in store.chunks(doc_id) if c.id not in indexed]
            if lacking:
                text = store.document(doc_id).text
                chunks.upsert([c.id for c in lacking], chunk_vectors(
                    text, lacking, parts.embedder, parts.settings.ingest))
                missing += len(lacking)
    out.missing_chunk_vectors = missing
    if stale or missing:
        chunks.save()
    lexical = parts.lexical
    in_lexical = lexical.ids()
    lexical.delete(sorted(in_lexical - chunk_ids))
    if chunk_ids - in_lexical:  # a workspace made before the lexical index, or damaged
        lexical.upsert((c.id, c.text) for _layer, doc_id in documents_done(store, STAGE_INGESTED)
                       for c in store.chunks(doc_id) if c.id not in in_lexical)
    entity_ids = store.entity_ids()
    entities = parts.index("entities")
    stale = [i for i in entities.ids() if i not in entity_ids]
    unembedded = entity_ids - set(entities.ids())
    if unembedded:  # a damaged file, or a new encoder: as the link stage embeds them
        from medkg.linking.linker import embed_entities
        from medkg.pipeline.marks import DOCUMENT_LAYERS

        heads = getattr(store, "entity_heads", store.entities)
        found = [e for layer in DOCUMENT_LAYERS for e in heads(layer) if e.id in unembedded]
        # Past the cache: a vector depends in its last bits on the batch it was
        # encoded in, and the link stage, which embeds every entity in one batch,
        # must find none of these in the cache (a build cut short and run again
        # ends with the vectors of one uninterrupted build).
        entities.upsert([e.id for e in found], embed_entities(parts.embedder.inner, found))
    if stale or unembedded:
        entities.delete(stale)
        entities.save()
    out.stale_entity_vectors = len(stale)
    out.missing_entity_vectors = len(unembedded)
    tree = parts.tree()
    if tree is not None:
        leaves = [n.id for n in tree.nodes.values() if n.level == 0 and n.id not in chunk_ids]
        if leaves:
            tree.remove_leaves(leaves)
            tree.save(parts.layout.tag_tree)
        out.stale_tree_leaves = len(leaves)
    parts.reconciled = True
    if (after := stamp(parts)) is not None:
        parts.fingerprints.record(RECONCILED, after)
    return out


def _hide_unknown(parts: Components) -> Reconciled:
    """The read-only view: what the writer indexed after this process's graph
    snapshot (or before a delete it has not finished) is hidden, in memory."""
    store = parts.store
    chunk_ids = store.chunk_ids()
    chunks = parts.index("chunks")
    stale = sorted(set(chunks.ids()) - chunk_ids)
    chunks.delete(stale)
    parts.lexical.restrict(chunk_ids)
    entity_ids = store.entity_ids()
    entities = parts.index("entities")
    stale_entities = [i for i in entities.ids() if i not in entity_ids]
    entities.delete(stale_entities)
    out = Reconciled(stale_chunk_vectors=len(stale), stale_entity_vectors=len(stale_entities))
    tree = parts.tree()
    if tree is not None:
        leaves = [n.id for n in tree.nodes.values() if n.level == 0 and n.id not in chunk_ids]
        if leaves:
            tree.remove_leaves(leaves)
        out.stale_tree_leaves = len(leaves)
    parts.reconciled = True
    return out
