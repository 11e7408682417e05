"""Ingest: read, chunk, store and embed documents; load vocabularies."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from medkg import timing
from medkg.errors import DocumentError, WorkspaceError
from medkg.model import Layer
from medkg.pipeline.state import STAGE_INGESTED, Progress, no_progress
from medkg.stagestate import VOCABULARY

if TYPE_CHECKING:
    from medkg.components import Components
    from medkg.linking.vectors import VectorIndex
    from medkg.ontology.loaders import VocabularyLoad

# Documents are marked ingested in groups, after the chunk vectors are saved:
# at least this many, and this many seconds apart (saving rewrites the index:
# every 25 documents made ingest quadratic in the corpus).
COMMIT_DOCUMENTS = 25
COMMIT_SECONDS = 30.0


@dataclass
class IngestReport:
    documents: int = 0
    chunks: int = 0
    skipped: int = 0
    failed: dict[str, str] = field(default_factory=dict)


def expand(paths: Iterable[Path]) -> list[Path]:
    """Files as given, and the files inside directories (sorted, hidden ones skipped)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob("*")
                              if p.is_file() and not p.name.startswith(".")))
        else:
            out.append(path)
    return out


def ingest(parts: Components, paths: Sequence[Path], layer: Layer,
           progress: Progress = no_progress) -> IngestReport:
    """Read, chunk, store and index documents. Bad files are reported, not fatal."""
    from medkg.construction.chunking import chunk_and_embed
    from medkg.construction.readers import read_documents

    if layer is Layer.VOCABULARY:
        raise WorkspaceError("use load_vocabulary for the vocabulary layer")
    from medkg.pipeline.curate import finish_deletes

    finish_deletes(parts)  # a document whose delete was cut short goes before it comes back
    store, embedder = parts.store, parts.embedder
    report = IngestReport()
    files = expand(paths)
    pending: list[str] = []
    committed = time.monotonic()
    seen: set[str] = set()  # documents of this call, against a second copy
    index = parts.index("chunks")
    for i, path in enumerate(files):
        progress("ingest", i, len(files))
        try:
            cfg = parts.settings.ingest
            with timing.stage("read"):
                documents = read_documents(path, layer, max_file_mb=cfg.max_file_mb,
                                           max_document_chars=cfg.max_document_chars)
        except DocumentError as exc:
            report.failed[str(path)] = str(exc)
            continue
        for doc in documents:
            with timing.stage("store"):
                known = doc.id in seen or (store.has_document(doc.id)
                                           and STAGE_INGESTED in store.stages(doc.id))
            if known:
                report.skipped += 1  # already here, or a second copy in this batch
                continue
            with timing.stage("chunk"):
                chunks, vectors = chunk_and_embed(doc, embedder, parts.settings.ingest)
            with timing.stage("store"):
                store.add_document(doc, chunks)
            with timing.stage("index"):
                index.upsert([c.id for c in chunks], vectors)
                parts.lexical.upsert((c.id, c.text) for c in chunks)
            pending.append(doc.id)
            seen.add(doc.id)
            report.documents += 1
            report.chunks += len(chunks)
            if len(pending) >= COMMIT_DOCUMENTS and (
                    time.monotonic() - committed >= COMMIT_SECONDS):
                _commit_ingested(parts, index, pending)
                committed = time.monotonic()
    _commit_ingested(parts, index, pending)
    progress("ingest", len(files), len(files))
    return report


def _commit_ingested(parts: Components, index: VectorIndex, pending: list[str]) -> None:
    # The "ingested" mark comes after the vectors are on disk: a crash in
    # between only means the document is chunked and embedded again.
    index.save()
    for doc_id in pending:
        parts.store.mark_stage(doc_id, STAGE_INGESTED)
    pending.clear()


def load_vocabulary(parts: Components, path: Path | None,
                    progress: Progress = no_progress) -> VocabularyLoad:
    """Load a vocabulary: an OBO file, a UMLS META directory, a MeSH list or a
    TSV/CSV table; ``None`` loads the default vocabulary that installed
    packages ship (HPO with its genes, MeSH, MeSH diseases, drug names, HGNC genes).

    The input is parsed completely before anything is stored, so a malformed
    file leaves the workspace as it was.
    """
    from medkg.ontology.loaders import load_default, load_file

    progress("parse", 0, 1)
    load = load_default() if path is None else load_file(path)
    progress("parse", 1, 1)
    store_vocabulary(parts, load)
    return load


def store_vocabulary(parts: Components, load: VocabularyLoad) -> None:
    """Store parsed concepts as the vocabulary layer and bring what follows from
    it (the concept index, linking, concept vectors) up to date."""
    # The saved concept index goes stale before the graph changes, and is made
    # anew, for a new vocabulary version, once the graph holds the load.
    parts.state.forget(VOCABULARY)
    parts.store.add_concepts(load.concepts, load.source)
    parts.state.new_version(VOCABULARY)
    parts.concept_index(rebuild=True)
    parts.vocabulary_changed()
    # Concept vectors are made when linking needs them (link.embed_concepts); the
    # old ones of reloaded concepts go, on disk too.
    concept_vectors = parts.index("concepts")
    concept_vectors.delete([c.id for c in load.concepts])
    concept_vectors.save()
