"""The builtin extraction engine, made from what a worker process can be sent.

Extraction is the part of a build that parallelises: each document's chunks
go through the spaCy pipeline on their own. A worker (a local process, or a
Dask worker on another machine) gets an :class:`EngineRecipe` — the saved
concept index, as a directory on a shared disk or as the bytes of its files —
and the extraction settings; it builds the engine once and keeps it for every
batch that names the same recipe. The results go back to the one process that
writes the workspace.
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from medkg.config import ExtractionConfig
from medkg.errors import WorkspaceError
from medkg.model import Chunk

if TYPE_CHECKING:
    from spacy.language import Language

    from medkg.construction.extraction import ChunkExtraction, Relate
    from medkg.ontology.index import ConceptIndex


def builtin_pipeline(index: ConceptIndex, cfg: ExtractionConfig) -> Language:
    """The spaCy pipeline the extraction settings name, over ``index``."""
    from medkg.construction.lexicon import resolve_lexicon
    from medkg.construction.nlp import build_pipeline, resolve_ner_models

    return build_pipeline(index, cfg.min_term_chars, resolve_ner_models(cfg.ner_model),
                          resolve_lexicon(cfg.lexicon))


def builtin_relate(index: ConceptIndex, cfg: ExtractionConfig) -> Relate | None:
    """The learned relation model the settings name, as a ``relate`` hook."""
    from medkg.construction.relation_model import resolve_relation_model

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
    from medkg.construction.extraction import extract

    nlp, relate = _engine(recipe)
    return [(doc_id, list(extract(chunks, nlp, relate=relate))) for doc_id, chunks in batch]
