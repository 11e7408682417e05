"""Re-extraction when its inputs change: which documents an extraction made now
would give something else, and moving the others to a new vocabulary version.

A document's extraction is stamped ``extracted@SETTINGS/VOCABULARY``
(:class:`medkg.pipeline.marks.ExtractionMark`). ``SETTINGS`` changes with the
engine, the extraction settings, the models' files (NER pipelines, lexicon,
relation model) and, for the LLM engine, the model, its generation settings and
the prompt's version: every document is redone then. ``VOCABULARY`` changes with
every vocabulary load; :func:`restamp` then works out which documents the load
can have changed and moves every other document's mark to the new version:

- a document whose text names a term (name or synonym, old or new) of a concept
  the load added, changed (terms, group, obsolete, ``replaced_by``) or dropped;
- a document with an entity normalised to such a concept.

What it does not see: an entity matched only approximately (character n-grams)
that a new concept would now match better. ``medkg build --reextract`` redoes
everything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from medkg.fingerprints import VOCABULARY
from medkg.pipeline.marks import (
    STAGE_EXTRACTED,
    STAGE_INGESTED,
    ExtractionMark,
    documents_done,
    extraction_marks,
)

if TYPE_CHECKING:
    from medkg.components import Components
    from medkg.model import Concept
    from medkg.ontology.index import ConceptIndex

def current_mark(parts: Components) -> ExtractionMark:
    return ExtractionMark.current(parts.settings, parts.fingerprints.version(VOCABULARY))


@dataclass
class ExtractionStatus:
    """Where each ingested document stands against the workspace's inputs now."""

    current: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)  # never extracted (or unfinished)
    stale_settings: list[str] = field(default_factory=list)  # engine/settings/models changed
    stale_vocabulary: list[str] = field(default_factory=list)  # a vocabulary load touched it


def extraction_status(parts: Components) -> ExtractionStatus:
    mark = current_mark(parts)
    out = ExtractionStatus()
    store = parts.store
    for _layer, doc_id in documents_done(store, STAGE_INGESTED):
        stages = store.stages(doc_id)
        marks = ExtractionMark.of(stages)
        if STAGE_EXTRACTED not in stages:
            out.new.append(doc_id)
        elif mark in marks:
            out.current.append(doc_id)
        elif any(m.settings == mark.settings for m in marks):
            out.stale_vocabulary.append(doc_id)
        else:
            out.stale_settings.append(doc_id)
    return out


def clear_extraction(parts: Components, document_id: str) -> int:
    """Remove what a document's earlier extraction wrote (its text and chunks
    stay) with its extraction marks, in one store transaction; its entity
    vectors follow. How many entities went."""
    from medkg.pipeline import link

    marks = extraction_marks(parts.store.stages(document_id))
    link.forget(parts)  # the links of its entities go with them
    gone = parts.store.delete_extraction(document_id, marks)
    if gone.entities:
        index = parts.index("entities")
        index.delete(gone.entities)
        index.save()
    return len(gone.entities)


def _signature(concept: Concept) -> tuple[object, ...]:
    return (sorted(concept.terms()), concept.semantic_group, concept.obsolete,
            concept.replaced_by)


def changed_concepts(old: ConceptIndex, new: Iterable[Concept]) -> list[Concept]:
    """The concepts of a load that are new, or differ from the live concept of
    the same id in ``old`` (terms, group, obsolete, replaced_by); for a changed
    one, its old version too (its old terms may be in a document)."""
    out: list[Concept] = []
    for concept in new:
        before = old.get(concept.id)
        if before is None:
            if not concept.obsolete:
                out.append(concept)
            elif concept.replaced_by is not None:
                out.append(concept)  # a mention of its id now resolves to the replacement
        elif _signature(before) != _signature(concept):
            out += [before, concept]
    return out


def affected_documents(parts: Components, changed: list[Concept]) -> set[str]:
    """Ingested documents a vocabulary change can alter (see the module docstring)."""
    from medkg.ontology.index import ConceptIndex

    if not changed:
        return set()
    store = parts.store
    affected: set[str] = set()
    ids = sorted({c.id for c in changed})
    for brief in store.entities_of_concepts(ids):
        for chunk_id in brief.chunk_ids:
            affected.add(store.chunk(chunk_id).document_id)
    probe = ConceptIndex([c.model_copy(update={"obsolete": False}) for c in changed])
    min_chars = parts.settings.extraction.min_term_chars
    for _layer, doc_id in documents_done(store, STAGE_INGESTED):
        if doc_id not in affected and probe.find_in(store.document(doc_id).text, min_chars):
            affected.add(doc_id)
    return affected


def restamp(parts: Components, old_version: str | None, changed: list[Concept]) -> int:
    """After a vocabulary load: documents whose extraction was current with the
    old vocabulary and that the load cannot have changed get the new version in
    their mark; the others stay stale and are extracted again by the next build.
    How many were moved."""
    if old_version is None:
        return 0
    before = ExtractionMark.current(parts.settings, old_version)
    after = current_mark(parts)
    if before == after:
        return 0
    affected = affected_documents(parts, changed)
    store, moved = parts.store, 0
    for _layer, doc_id in documents_done(store, STAGE_INGESTED):
        if doc_id in affected or str(before) not in store.stages(doc_id):
            continue
        store.mark_stage(doc_id, str(after))  # the new mark first: a crash leaves both
        store.unmark_stage(doc_id, str(before))
        moved += 1
    return moved
