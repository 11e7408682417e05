"""Ingest: read, chunk, store and embed documents; load vocabularies."""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from medkg import memory, timing
from medkg.errors import DocumentError, WorkspaceError
from medkg.fingerprints import VOCABULARY, fingerprint
from medkg.model import Chunk, Document, Layer
from medkg.pipeline.marks import STAGE_INGESTED
from medkg.pipeline.progress import Progress, no_progress
from medkg.text import path_text

if TYPE_CHECKING:
    from medkg.components import Components
    from medkg.linking.embeddings import Matrix
    from medkg.linking.vectors import VectorIndex
    from medkg.ontology.loaders import VocabularyLoad

# Documents are marked ingested in groups, after the chunk vectors are saved:
# at least this many, and this many seconds apart (saving rewrites the index:
# every 25 documents made ingest quadratic in the corpus).
COMMIT_DOCUMENTS = 25
COMMIT_SECONDS = 30.0
# documents chunked together (their sentences in one encoder call), in this process
# or as one task sent to a worker
BATCH_DOCUMENTS = 32


@dataclass
class IngestReport:
    documents: int = 0
    chunks: int = 0
    skipped: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    replaced: list[str] = field(default_factory=list)  # earlier versions of edited files
    removed: list[str] = field(default_factory=list)  # documents whose file went (sync)


@dataclass
class SyncPlan:
    """What ``ingest --sync`` would do: sources new, changed, unchanged and gone."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)  # (old source, new): renames
    failed: dict[str, str] = field(default_factory=dict)


def expand(paths: Iterable[Path]) -> list[Path]:
    """Files as given, and what directories hold (sorted, hidden entries skipped);
    absolute, since a file's path is its documents' identity.

    Every entry that is not a directory is listed, a dangling symbolic link, a
    link loop or a pipe included: the reader says why it cannot be read, and an
    unreadable file keeps its documents (a sync never takes it for a removed
    one). A linked directory is followed once; one that leads back to a
    directory already walked is not walked again.
    """
    out: list[Path] = []
    for path in (Path(os.path.abspath(p)) for p in paths):
        if path.is_dir():
            out.extend(_walk(path, set()))
        else:
            out.append(path)
    return out


def _walk(directory: Path, walked: set[str]) -> Iterator[Path]:
    real = os.path.realpath(directory)
    if real in walked:
        return
    walked.add(real)
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        yield directory  # the reader names why it cannot be listed
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir()  # follows a link; False for a dangling one
        except OSError:
            is_dir = False  # a link loop: the reader says so
        if is_dir:
            yield from _walk(path, walked)
        else:
            yield path


def _read(parts: Components, path: Path, layer: Layer, name: str | None) -> list[Document]:
    from medkg.reading.readers import read_documents

    cfg = parts.settings.ingest
    with timing.stage("read"):
        documents = read_documents(path, layer, max_file_mb=cfg.max_file_mb,
                                   max_document_chars=cfg.max_document_chars)
    if name is not None:  # a source of the caller's choosing (an upload's name)
        documents = [d.model_copy(update={"source": name + d.source[len(path_text(path)):]})
                     for d in documents]
    return documents


def _folders(paths: Sequence[Path]) -> list[Path]:
    """The directories among ``paths``, absolute: what a sync mirrors."""
    return [Path(os.path.abspath(p)) for p in paths if Path(p).is_dir()]


def _under(directories: list[Path], source: str) -> bool:
    return any(source.startswith(str(d) + os.sep) for d in directories)


def _of_file(sources: Iterable[str], source: str) -> list[str]:
    """The sources that come from the file recorded as ``source`` (itself, or its
    JSONL records)."""
    return [s for s in sources if s == source or s.startswith(f"{source}#")]


def _documents(parts: Components, files: Sequence[Path], layer: Layer,
               known: Mapping[str, list[str]], failed: dict[str, str], read: set[str],
               gone: set[str], names: Mapping[Path, str] | None = None,
               progress: Progress = no_progress) -> Iterator[Document]:
    """Each file's documents, in order: the one place that decides what a
    source is and when it is gone.

    A file that cannot be read goes into ``failed`` and keeps every document it
    had (``read`` gets them, so a sync keeps them too); a file read whole puts
    its sources in ``read``, and the sources it had before but no longer holds
    (JSONL records taken out of it) in ``gone``. A source that an earlier file of
    the same call gave already fails the later file: one source, one document.
    """
    for i, path in enumerate(files):
        progress("ingest", i, len(files))
        file_source = (names or {}).get(path) or path_text(path)
        try:
            documents = _read(parts, path, layer, (names or {}).get(path))
            twice = [d.source for d in documents if d.source in read]
            if twice:
                raise DocumentError(path, f"{twice[0]} was given by an earlier file of "
                                    "this ingest", hint="ingest each file once")
        except DocumentError as exc:
            failed[path_text(path)] = str(exc)
            read.update(_of_file(known, file_source))
            continue
        sources = {d.source for d in documents}
        gone.update(s for s in _of_file(known, file_source) if s not in sources)
        for doc in documents:
            read.add(doc.source)
            yield doc


def _moved_from(doc: Document, source_of: Mapping[str, str]) -> str | None:
    """The source this document's text was known under, when it is another
    (a file renamed or moved)."""
    before = source_of.get(doc.id)
    return before if before is not None and before != doc.source else None


def plan_sync(parts: Components, paths: Sequence[Path], layer: Layer) -> SyncPlan:
    """What :func:`ingest` with ``sync=True`` would change, without changing it."""
    files = expand(paths)
    known = parts.store.document_sources(layer)
    source_of = {doc_id: source for source, ids in known.items() for doc_id in ids}
    plan = SyncPlan()
    seen: set[str] = set()
    gone: set[str] = set()
    for doc in _documents(parts, files, layer, known, plan.failed, seen, gone):
        ids = known.get(doc.source, [])
        moved_from = _moved_from(doc, source_of)
        if not ids and moved_from is not None:
            plan.moved.append((moved_from, doc.source))  # same text, new name
            seen.add(moved_from)
            continue
        bucket = plan.added if not ids else (
            plan.unchanged if ids == [doc.id] else plan.changed)
        bucket.append(doc.source)
    directories = _folders(paths)
    moved = {old for old, _ in plan.moved}
    plan.removed = sorted(s for s in known if s not in moved and (
        s in gone or (s not in seen and _under(directories, s))))
    return plan


def ingest(parts: Components, paths: Sequence[Path], layer: Layer,
           progress: Progress = no_progress, *, sync: bool = False,
           names: Mapping[Path, str] | None = None) -> IngestReport:
    """Read, chunk, store and index documents. Bad files are reported, not fatal.

    A file is its documents' identity (a JSONL record: its file and ``id``): a
    file whose text changed since it was ingested replaces its earlier version,
    which is deleted with what only it supported (the new version records it as
    ``prov:wasRevisionOf``; the next build extracts the new one, and curators'
    decisions on statements it still supports apply again). ``sync``: the
    documents of files that are gone from the directories in ``paths`` are
    deleted too. ``names``: the source to record for a file instead of its path.
    """
    if layer is Layer.VOCABULARY:
        raise WorkspaceError("use load_vocabulary for the vocabulary layer")
    from medkg.pipeline.curate import delete_document, finish_deletes
    from medkg.reading.chunking import chunk_and_embed

    finish_deletes(parts)  # a document whose delete was cut short goes before it comes back
    store = parts.store
    report = IngestReport()
    files = expand(paths)
    named = {Path(os.path.abspath(p)): n for p, n in (names or {}).items()}
    known = store.document_sources(layer)
    source_of = {doc_id: source for source, ids in known.items() for doc_id in ids}
    pending: list[str] = []
    committed = time.monotonic()
    seen: set[str] = set()  # documents of this call, against a second copy
    sources: set[str] = set()  # sources read in this call (sync keeps them)
    gone: set[str] = set()  # sources a file read in this call no longer holds
    index = parts.index("chunks")

    def planned() -> Iterator[tuple[Document, bool]]:
        """Each document, and whether it is new here (to chunk and store)."""
        for doc in _documents(parts, files, layer, known, report.failed, sources, gone,
                              named, progress):
            with timing.stage("store"):
                new = doc.id not in seen and not (store.has_document(doc.id) and
                                                  STAGE_INGESTED in store.stages(doc.id))
            seen.add(doc.id)
            yield doc, new

    for doc, chunked in _chunked(parts, planned()):
        earlier = [d for d in known.get(doc.source, []) if d != doc.id]
        if chunked is None and not store.has_document(doc.id):
            # planned while it was here, deleted since as an earlier file's old
            # version (workers chunk ahead of this loop): it comes back as new
            with timing.stage("chunk"):
                chunked = chunk_and_embed(doc, parts.embedder, parts.settings.ingest)
        if chunked is None:
            report.skipped += 1  # already here, or a second copy in this batch
            moved_from = _moved_from(doc, source_of)
            if moved_from is not None:
                # The same text under another name (a file renamed or moved): it
                # keeps its id and extraction and takes the new source, so that a
                # sync does not delete it as the old file's document.
                with timing.stage("store"):
                    store.add_document(doc, store.chunks(doc.id))
                known[moved_from] = [d for d in known[moved_from] if d != doc.id]
                source_of[doc.id] = doc.source
        else:
            if earlier:
                chain = [e for d in earlier for e in store.document(d).revision_of]
                doc = doc.model_copy(update={"revision_of": list(dict.fromkeys(
                    [*earlier, *chain]))})
            chunks, vectors = chunked
            with timing.stage("store"):
                store.add_document(doc, chunks)
            with timing.stage("index"):
                index.upsert([c.id for c in chunks], vectors)
                parts.lexical.upsert((c.id, c.text) for c in chunks)
            pending.append(doc.id)
            report.documents += 1
            report.chunks += len(chunks)
            memory.release()  # what its encoding freed, back to the system
        # The new version is stored before the old one goes: a crash in between
        # leaves both, and the next ingest of the file finishes the replacement.
        for old in earlier:
            with timing.stage("store"):
                delete_document(parts, old)
            report.replaced.append(old)
            if old in pending:
                pending.remove(old)
        known[doc.source] = [doc.id]
        source_of[doc.id] = doc.source
        if len(pending) >= COMMIT_DOCUMENTS and (
                time.monotonic() - committed >= COMMIT_SECONDS):
            _commit_ingested(parts, index, pending)
            committed = time.monotonic()
    _commit_ingested(parts, index, pending)
    directories = _folders(paths) if sync else []
    for source in sorted(known):
        if source in gone or (source not in sources and _under(directories, source)):
            for doc_id in known[source]:
                delete_document(parts, doc_id)
                report.removed.append(doc_id)
    progress("ingest", len(files), len(files))
    return report


def _chunked(parts: Components, documents: Iterator[tuple[Document, bool]]
             ) -> Iterator[tuple[Document, tuple[list[Chunk], Matrix] | None]]:
    """Each document with its chunks and their vectors when it is new (else
    None), in order: made in this process, or, when ``extraction.executor`` names
    worker processes or a Dask cluster, by its workers (each loads the encoder
    once), a bounded number of batches ahead, so that the writer's memory does
    not grow with the corpus. ``auto`` chunks here: the encoder already uses
    every core of this machine."""
    from medkg.pipeline.executors import ExecutorSpec, open_executor, parse_executor
    from medkg.reading.chunking import chunk_and_embed_many

    setting = parts.settings.extraction.executor
    spec = ExecutorSpec("local") if setting == "auto" else parse_executor(setting, 0, 0)
    sent: deque[list[tuple[Document, bool]]] = deque()

    def batches() -> Iterator[list[Document]]:
        while group := list(islice(documents, BATCH_DOCUMENTS)):
            sent.append(group)
            yield [doc for doc, new in group if new]

    if spec.kind == "local":
        for todo in batches():
            with timing.stage("chunk"):
                made = iter(chunk_and_embed_many(todo, parts.embedder, parts.settings.ingest))
            for doc, new in sent.popleft():
                yield doc, next(made) if new else None
        return
    from medkg.extraction.workers import ChunkRecipe, chunk_documents

    parts.embedder  # noqa: B018 - the workspace's encoder is checked (one per workspace)
    recipe = ChunkRecipe(parts.settings.ingest, parts.settings.embedding)
    executor = open_executor(spec)
    try:
        for batch in executor.map(chunk_documents, recipe, batches()):
            results = iter(batch)
            for doc, new in sent.popleft():
                yield doc, next(results) if new else None
    finally:
        executor.close()


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
    from medkg.pipeline.reextract import changed_concepts, restamp

    # What the load changes, against the vocabulary as it was (documents that
    # cannot have changed keep their extraction: see pipeline/reextract.py).
    old_version = parts.fingerprints.version(VOCABULARY)
    changed = changed_concepts(parts.concept_index(), load.concepts)
    # The saved concept index goes stale before the graph changes, and is made
    # anew, for a new vocabulary version, once the graph holds the load.
    parts.fingerprints.forget(VOCABULARY)
    parts.store.add_concepts(load.concepts, load.source)
    # The new version follows from the old one and what was loaded: workspaces
    # that loaded the same vocabularies in the same order have the same version
    # (and the same extraction marks); a load cut short starts a chain of its own.
    parts.fingerprints.record(VOCABULARY, fingerprint(
        old_version, load.source, [c.model_dump(mode="json") for c in load.concepts]))
    parts.concept_index(rebuild=True)
    parts.vocabulary_changed()
    restamp(parts, old_version, changed)
    # Concept vectors are made when linking needs them (link.embed_concepts); the
    # old ones of reloaded concepts go, on disk too.
    concept_vectors = parts.index("concepts")
    concept_vectors.delete([c.id for c in load.concepts])
    concept_vectors.save()
