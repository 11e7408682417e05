"""What each stage finished and whether it is still current: the one place that
answers "what needs redoing".

Two kinds of stage:

- **Per document** (``ingested``, ``extracted``): a mark on the document in the
  graph store (``mkg:completed``), written after the stage's output is stored.
  It lives in the same store as the data it vouches for, so deleting the
  document deletes its marks with it. An extracted document also carries
  ``extracted@SETTINGS/VOCABULARY``: a fingerprint of what its extraction used
  (engine, settings, models, prompts) and the vocabulary version. A document
  whose mark differs from the workspace's now is stale: the build removes what
  its extraction wrote and extracts it again. A vocabulary load moves the
  marks of the documents it cannot have changed to the new version
  (:func:`medkg.pipeline.reextract.restamp`), so only those it touches are redone.
- **Whole workspace** (grow, link, summarise): a fingerprint of the stage's
  inputs and settings in ``state.sqlite``. A stage whose recorded fingerprint
  differs from the one the workspace has now is redone. Link and summarise
  record it as their last step, so a crash before it means the stage runs
  again; grow records it when it starts over, since its head-by-head progress
  (``construction/growth.sqlite``) then belongs to those inputs and resumes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from medkg.fingerprints import StageFingerprints, fingerprint
from medkg.model import Layer
from medkg.store.base import GraphStore

if TYPE_CHECKING:
    from medkg.config import Settings

__all__ = ["STAGE_EXTRACTED", "STAGE_INGESTED", "ExtractionMark", "StageFingerprints",
           "documents_done", "documents_to_extract", "fingerprint", "settings_identity"]

STAGE_INGESTED = "ingested"
STAGE_EXTRACTED = "extracted"
DOCUMENT_LAYERS = (Layer.LITERATURE, Layer.USER)

def documents_done(store: GraphStore, stage: str) -> Iterator[tuple[Layer, str]]:
    """(layer, document id) of every document that finished ``stage``."""
    for layer in DOCUMENT_LAYERS:
        for doc_id in store.document_ids(layer):
            if stage in store.stages(doc_id):
                yield layer, doc_id


@dataclass(frozen=True)
class ExtractionMark:
    """What a document's extraction used: ``settings`` (engine, its settings, the
    models' and prompts' identity) and ``vocabulary`` (the version)."""

    settings: str
    vocabulary: str

    PREFIX = STAGE_EXTRACTED + "@"

    def __str__(self) -> str:
        return f"{self.PREFIX}{self.settings}/{self.vocabulary}"

    @classmethod
    def parse(cls, stage: str) -> ExtractionMark | None:
        if not stage.startswith(cls.PREFIX) or "/" not in stage:
            return None
        settings, vocabulary = stage[len(cls.PREFIX):].split("/", 1)
        return cls(settings, vocabulary)

    @classmethod
    def of(cls, stages: set[str]) -> list[ExtractionMark]:
        return [m for s in stages if (m := cls.parse(s)) is not None]

    @classmethod
    def current(cls, settings: Settings, vocabulary: str | None) -> ExtractionMark:
        """The mark an extraction made now, with these settings, would get."""
        return cls(settings_identity(settings), (vocabulary or "none")[:12])


def extraction_marks(stages: set[str]) -> list[str]:
    """The marks an extraction wrote on a document (the plain one and its fingerprint)."""
    return [s for s in stages if s == STAGE_EXTRACTED or ExtractionMark.parse(s) is not None]


def documents_to_extract(store: GraphStore, mark: ExtractionMark | None = None
                         ) -> list[tuple[Layer, str]]:
    """Ingested documents not yet extracted, or (given the current ``mark``)
    extracted with other inputs; literature first."""
    out = []
    for layer, doc_id in documents_done(store, STAGE_INGESTED):
        stages = store.stages(doc_id)
        if STAGE_EXTRACTED not in stages or (mark is not None and str(mark) not in stages):
            out.append((layer, doc_id))
    return out


SMALL_FILE = 1 << 20  # files up to this size are identified by content, larger by size


@lru_cache(maxsize=64)
def _tree_identity(path: str, mtime_ns: int) -> str:
    """A digest of a model file or directory: content of small files, size of
    large ones (a model's weights), relative names."""
    root = Path(path)
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    digest = hashlib.sha256()
    for file in files:
        size = file.stat().st_size
        digest.update(f"{file.relative_to(root) if file != root else file.name}\0{size}\0"
                      .encode())
        if size <= SMALL_FILE:
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def _identity(path: Path) -> str:
    return _tree_identity(str(path), os.stat(path).st_mtime_ns)


def settings_identity(settings: Settings) -> str:
    """The ``SETTINGS`` part of the extraction mark (see the module docstring)."""
    from medkg.extraction.lexicon import BUNDLED_LEXICON
    from medkg.extraction.nlp import resolve_ner_models
    from medkg.extraction.relation_model import BUNDLED_RELATIONS
    from medkg.extraction.relations import CALIBRATION
    from medkg.modelref import ModelRef

    cfg = settings.extraction
    parts: list[object] = [
        # llm_profile joins the identity only where it matters (the LLM engine), so
        # marks made before it existed stay current for the builtin engine.
        cfg.model_dump(mode="json", exclude={"executor", "parallel_min_documents",
                                             "llm_profile"}),
        settings.construction.levels > 0,  # the SAC-KG loop decides which triples enter
    ]
    if cfg.engine == "builtin":
        models = [*resolve_ner_models(cfg.ner_model),
                  ModelRef(cfg.lexicon, "extraction.lexicon").path(BUNDLED_LEXICON),
                  ModelRef(cfg.relation_model, "extraction.relation_model")
                  .path(BUNDLED_RELATIONS),
                  CALIBRATION if CALIBRATION.exists() else None]  # the patterns' confidence
        parts.append([_identity(p) for p in models if p is not None])
        from medkg.extraction.nlp import BUILTIN_RULES_VERSION

        parts.append(["builtin-rules", BUILTIN_RULES_VERSION])
    elif cfg.engine == "langchain":
        # the chat model is an object passed in Python, not a setting: a different
        # model is not seen here (delete the documents' marks or re-ingest to redo)
        from medkg.extraction.langchain import TRANSFORMER_VERSION

        parts.append(["langchain", TRANSFORMER_VERSION])
    else:
        from medkg.llm.prompts import load_prompt

        parts.append(settings.llm.model_dump(mode="json", include={
            "backend", "model", "base_url", "temperature", "seed", "max_tokens", "pack_tokens"}))
        from medkg.extraction.llm import PROFILES

        if cfg.llm_profile == "single":
            parts.append(load_prompt("extract_entities").version)
        else:
            parts.append([cfg.llm_profile, *(load_prompt(n).version
                                             for n in PROFILES[cfg.llm_profile])])
    return fingerprint(*parts)[:12]
