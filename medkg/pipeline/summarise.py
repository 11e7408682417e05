"""Summarise: a tag summary for every new chunk of an extracted document (by the
summary engine) and the tag tree over all of them, brought up to date: leaves
for new chunks, removed ones taken out; other tree settings rebuild it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from medkg import memory
from medkg.engines import ChunkGraph, summariser
from medkg.fingerprints import SUMMARISE
from medkg.model import Chunk, Entity, Triple
from medkg.pipeline.context import BuildContext
from medkg.pipeline.marks import STAGE_EXTRACTED, documents_done, fingerprint
from medkg.pipeline.progress import Progress, no_progress

if TYPE_CHECKING:
    from medkg.components import Components
    from medkg.tagtree.tree import TagTree

STAGE = SUMMARISE
# chunks whose entities and statements are read and summarised together: a 10k
# document corpus's 21k chunks at once held 1.7 GB of entity copies
SUMMARY_BATCH = 1000


def run(ctx: BuildContext) -> None:
    update_tag_tree(ctx.parts, ctx.progress)


def update_tag_tree(parts: Components, progress: Progress = no_progress) -> TagTree:
    from medkg.tagtree.tree import TagTree, TreeSettings

    cfg = parts.settings.retrieval
    settings = TreeSettings(levels=cfg.tree_levels, top_fraction=cfg.tree_top_fraction,
                            floor=cfg.tree_floor)
    directory = parts.layout.tag_tree
    fp = fingerprint(settings.__dict__)
    # A tree made with other settings is not updated but made anew.
    tree = TagTree.load(directory) if parts.fingerprints.current(STAGE, fp) else None
    if tree is None:
        tree = TagTree(settings)
    store = parts.store
    chunks = {c.id: c for _layer, doc_id in documents_done(store, STAGE_EXTRACTED)
              for c in store.chunks(doc_id)}
    leaves = {n.id for n in tree.nodes.values() if n.level == 0}
    new = [c for cid, c in chunks.items() if cid not in leaves]
    gone = sorted(leaves - set(chunks))
    if not new and not gone:
        parts.fingerprints.record(STAGE, fp)
        return tree
    progress("tag tree", 0, 1)
    tree.remove_leaves(gone)
    engine, summaries = summariser(parts), []
    for start in range(0, len(new), SUMMARY_BATCH):
        part = new[start:start + SUMMARY_BATCH]
        summaries += engine.summarise(part, chunk_graph(parts, part))
        memory.release()
    index = parts.index("chunks")
    text_vectors = parts.embedder.embed([s.text() or c.text[:200]
                                         for c, s in zip(new, summaries, strict=True)])
    own = [index.vector(c.id) for c in new]
    vectors = [tv if v is None else tv + v for tv, v in zip(text_vectors, own, strict=True)]
    tree.add_leaves([(c.id, s, v) for c, s, v in zip(new, summaries, vectors, strict=True)])
    tree.save(directory)
    parts.fingerprints.record(STAGE, fp)
    progress("tag tree", 1, 1)
    return tree


def chunk_graph(parts: Components, chunks: Sequence[Chunk]) -> ChunkGraph:
    """The entities (with only their mentions there) and triples of these chunks."""
    from medkg.pipeline.marks import DOCUMENT_LAYERS

    read = getattr(parts.store, "chunk_graph", None)
    if read is not None:  # the tables: read by the chunks' documents
        entities, triples_of = read(chunks)
        return ChunkGraph(entities=entities, triples=triples_of)
    wanted = {c.id for c in chunks}
    by_chunk: dict[str, list[Entity]] = {}
    for layer in DOCUMENT_LAYERS:
        for e in parts.store.entities(layer):
            for cid in {m.chunk_id for m in e.mentions} & wanted:
                mine = [m for m in e.mentions if m.chunk_id == cid]
                by_chunk.setdefault(cid, []).append(e.model_copy(update={"mentions": mine}))
    triples: dict[str, list[Triple]] = {}
    for t in parts.store.triples():
        if not t.in_force:
            continue
        for ev in t.evidence:
            if ev.chunk_id in wanted:
                triples.setdefault(ev.chunk_id, []).append(t)
    return ChunkGraph(entities=by_chunk, triples=triples)
