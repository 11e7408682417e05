"""The work of ingest and build that a worker process can do: chunking and
encoding documents, and the builtin extraction engine.

Both parallelise by document: a document is chunked and its sentences and
chunks encoded on their own, and its chunks go through the spaCy pipeline on
their own. A worker (a local process, or a Dask worker on another machine)
gets a recipe — for chunking, the ingest and embedding settings
(:class:`ChunkRecipe`); for extraction, the saved concept index, as a
directory on a shared disk or as the bytes of its files, and the extraction
settings (:class:`EngineRecipe`) — and makes the encoder or engine once,
keeping it for every batch that names the same recipe. The results go back to
the one process that writes the workspace.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from medkg.config import EmbeddingConfig, ExtractionConfig, IngestConfig
from medkg.errors import WorkspaceError
from medkg.model import Chunk, Document

if TYPE_CHECKING:
    from spacy.language import Language

    from medkg.extraction.extract import ChunkExtraction, Relate
    from medkg.linking.embeddings import Embedder, Matrix
    from medkg.ontology.index import ConceptIndex


def builtin_pipeline(index: ConceptIndex, cfg: ExtractionConfig) -> Language:
    """The spaCy pipeline the extraction settings name, over ``index``."""
    from medkg.extraction.lexicon import resolve_lexicon
    from medkg.extraction.nlp import build_pipeline, resolve_ner_models

    return build_pipeline(index, cfg.min_term_chars, resolve_ner_models(cfg.ner_model),
                          resolve_lexicon(cfg.lexicon))


def builtin_relate(index: ConceptIndex, cfg: ExtractionConfig) -> Relate | None:
    """The learned relation model the settings name, as a ``relate`` hook."""
    from medkg.extraction.relation_model import resolve_relation_model

    if cfg.relation_model == "none":
        return None
    model = resolve_relation_model(cfg.relation_model, index.ancestors)
    return model.relations if model is not None else None


@dataclass(frozen=True)
class EngineRecipe:
    """What a worker needs to make the builtin engine: the saved concept index
    (``directory`` on a disk the worker shares, or ``payload``, its files'
    bytes) of vocabulary version ``version``, and the extraction settings."""

    directory: str
    version: str
    extraction: ExtractionConfig
    payload: tuple[tuple[str, bytes], ...] = ()

    @property
    def key(self) -> str:
        h = hashlib.sha256(f"{self.directory}\x1f{self.version}\x1f"
                           f"{self.extraction.model_dump_json()}".encode())
        return h.hexdigest()[:24]

    def shipped(self) -> EngineRecipe:
        """The same recipe carrying its files, for workers without the disk."""
        folder = Path(self.directory)
        names = sorted(p.name for p in folder.iterdir() if p.is_file())
        return EngineRecipe(self.directory, self.version, self.extraction,
                            tuple((name, (folder / name).read_bytes()) for name in names))


_ENGINES: dict[str, tuple[Language, Relate | None]] = {}  # per worker process


def _engine(recipe: EngineRecipe) -> tuple[Language, Relate | None]:
    from medkg.ontology.index import ConceptIndex

    if recipe.key not in _ENGINES:
        directory = Path(recipe.directory)
        if recipe.payload:
            directory = Path(tempfile.mkdtemp(prefix=f"medkg-concepts-{recipe.key}-"))
            for name, data in recipe.payload:
                (directory / Path(name).name).write_bytes(data)
        index = ConceptIndex.load(directory, recipe.version)
        if index is None:
            raise WorkspaceError(f"the concept index at {recipe.directory} is missing or is "
                                 f"not vocabulary version {recipe.version}",
                                 hint="a worker reads the workspace's saved concept index: "
                                 "run the build again")
        index.load_approximate(directory)
        _ENGINES.clear()  # one engine per worker: a new recipe replaces the old one
        _ENGINES[recipe.key] = (builtin_pipeline(index, recipe.extraction),
                                builtin_relate(index, recipe.extraction))
    return _ENGINES[recipe.key]


def extract_documents(recipe: EngineRecipe, batch: list[tuple[str, list[Chunk]]]
                      ) -> list[tuple[str, list[ChunkExtraction]]]:
    """Each document's chunks through the builtin engine: (document id, extraction)."""
    from medkg.extraction.extract import extract

    nlp, relate = _engine(recipe)
    return [(doc_id, list(extract(chunks, nlp, relate=relate))) for doc_id, chunks in batch]


@dataclass(frozen=True)
class ChunkRecipe:
    """What a worker needs to chunk and encode documents as the workspace would."""

    ingest: IngestConfig
    embedding: EmbeddingConfig


_ENCODERS: dict[str, Embedder] = {}  # per worker process


def _encoder(config: EmbeddingConfig) -> Embedder:
    from medkg.linking.embeddings import make_embedder

    key = config.model_dump_json()
    if key not in _ENCODERS:
        _ENCODERS.clear()  # one encoder per worker: a new recipe replaces the old one
        _ENCODERS[key] = make_embedder(config)
    return _ENCODERS[key]


class _OncePerText:
    """An encoder that encodes each distinct text of a call once, as the
    workspace's embedding cache does in the writing process (a chunk that is a
    single sentence is not encoded twice), so that a worker's vectors are the
    ones a build in one process makes."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.name, self.dim = inner.name, inner.dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        distinct = list(dict.fromkeys(texts))
        if not distinct:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = dict(zip(distinct, self._inner.embed(distinct), strict=True))
        return np.stack([rows[t] for t in texts])

    def embed_query(self, texts: Sequence[str]) -> Matrix:
        return self._inner.embed_query(texts)


def chunk_documents(recipe: ChunkRecipe, documents: list[Document]
                    ) -> list[tuple[list[Chunk], Matrix]]:
    """Each document's chunks and their vectors (:func:`chunk_and_embed_many`)."""
    from medkg.reading.chunking import chunk_and_embed_many

    return chunk_and_embed_many(documents, _OncePerText(_encoder(recipe.embedding)),
                                recipe.ingest)
