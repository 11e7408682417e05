"""Every concept of a vocabulary as a vector, made once per machine.

Linking an entity that has no concept compares it with every concept of the
vocabulary, so all of them need vectors: 78k for the default vocabulary, about
ten minutes of encoding on two cores. The set depends only on the concepts'
content and the embedding model, so it is made once and kept in the user's
cache directory (:func:`medkg.files.user_cache_dir`), under a key derived from
both, where every workspace on the machine finds it. It is derived data: a
directory is written under a temporary name, its manifest last, then renamed
into place; one whose files do not match its manifest is made again. Two
processes making the same set at once both finish; the second rename loses
and its copy is dropped.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from medkg import files
from medkg.linking.embeddings import Embedder
from medkg.linking.linker import concept_content
from medkg.linking.vectors import VectorIndex
from medkg.model import Concept

VECTORS = "concepts.npz"
ANN = "concepts.usearch"
BATCH = 512


def vocabulary_key(concepts: Iterable[Concept], model: str) -> str:
    """A digest of the embedding model and every concept's id and content."""
    h = hashlib.sha256(model.encode())
    for concept in sorted(concepts, key=lambda c: c.id):
        h.update(f"\x1e{concept.id}\x1f{concept_content(concept)}".encode())
    return h.hexdigest()[:32]


def all_concept_vectors(concepts: list[Concept], embedder: Embedder, root: Path,
                        ann_threshold: int,
                        progress: Callable[[str, int, int], None] | None = None) -> VectorIndex:
    """The vectors of all ``concepts``: from ``root`` when this machine made them
    before, else made now (through ``embedder``, so texts it cached are not
    encoded again) and kept there. The index is for reading only."""
    key = vocabulary_key(concepts, embedder.name)
    directory = root / key
    if files.manifest_matches(directory, key):
        return VectorIndex(embedder.dim, directory / VECTORS, ann_threshold=ann_threshold)
    root.mkdir(parents=True, exist_ok=True)
    work = root / f".{key}.{os.getpid()}.partial"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    index = VectorIndex(embedder.dim, work / VECTORS, ann_threshold=ann_threshold)
    for start in range(0, len(concepts), BATCH):
        if progress is not None:
            progress("concepts", start, len(concepts))
        batch = concepts[start : start + BATCH]
        index.upsert([c.id for c in batch], embedder.embed([concept_content(c) for c in batch]))
    index.save()
    names = [VECTORS, *([ANN] if (work / ANN).exists() else [])]
    files.write_manifest(work, names, key)
    if directory.exists():  # a stale copy, or another process finished first
        if files.manifest_matches(directory, key):
            shutil.rmtree(work, ignore_errors=True)
            return VectorIndex(embedder.dim, directory / VECTORS, ann_threshold=ann_threshold)
        shutil.rmtree(directory, ignore_errors=True)
    try:
        os.replace(work, directory)
    except OSError:  # another process renamed its copy into place in between
        shutil.rmtree(work, ignore_errors=True)
    return VectorIndex(embedder.dim, directory / VECTORS, ann_threshold=ann_threshold)
