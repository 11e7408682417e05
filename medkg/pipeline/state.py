"""What each stage finished and whether it is still current: the one place that
answers "what needs redoing".

Two kinds of stage:

- **Per document** (``ingested``, ``extracted``): a mark on the document in the
  graph store (``mkg:completed``), written after the stage's output is stored.
  It lives in the same store as the data it vouches for, so deleting the
  document deletes its marks with it.
- **Whole workspace** (grow, link, summarise): a fingerprint of the stage's
  inputs and settings in ``state.sqlite``. A stage whose recorded fingerprint
  differs from the one the workspace has now is redone. Link and summarise
  record it as their last step, so a crash before it means the stage runs
  again; grow records it when it starts over, since its head-by-head progress
  (``construction/growth.sqlite``) then belongs to those inputs and resumes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from medkg.model import Layer
from medkg.stagestate import StageState, fingerprint
from medkg.store.base import GraphStore

__all__ = ["STAGE_EXTRACTED", "STAGE_INGESTED", "Progress", "StageState", "documents_done",
           "documents_to_extract", "fingerprint", "no_progress"]

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


def documents_to_extract(store: GraphStore) -> list[tuple[Layer, str]]:
    """Ingested documents not yet extracted, literature first."""
    return [(layer, doc_id) for layer, doc_id in documents_done(store, STAGE_INGESTED)
            if STAGE_EXTRACTED not in store.stages(doc_id)]
