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

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from medkg.model import Layer
from medkg.stagestate import StageState, fingerprint
from medkg.store.base import GraphStore

if TYPE_CHECKING:
    from medkg.config import Settings

__all__ = ["STAGE_EXTRACTED", "STAGE_INGESTED", "ExtractionMark", "Progress", "StageState",
           "documents_done", "documents_to_extract", "fingerprint", "no_progress"]

STAGE_INGESTED = "ingested"
STAGE_EXTRACTED = "extracted"
DOCUMENT_LAYERS = (Layer.LITERATURE, Layer.USER)

Progress = Callable[[str, int, int], None]


def no_progress(stage: str, done: int, total: int) -> None:
    return None


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
        from medkg.pipeline.reextract import settings_identity

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
