"""Curation: deleting a document and what only it supported; listing and
undoing entity-resolution merges."""

from __future__ import annotations

from typing import TYPE_CHECKING

from medkg.errors import WorkspaceError
from medkg.layout import IndexKind
from medkg.model import Entity, Link, LinkKind

if TYPE_CHECKING:
    from medkg.components import Components
    from medkg.store.base import Deletion


def delete_document(parts: Components, document_id: str) -> Deletion:
    """Remove a document and what only it supported, from the graph and the
    vector indexes; what other documents also support stays."""
    gone = parts.store.delete_document(document_id)
    parts.corpus.delete_document(document_id)  # a new corpus version: links are redone
    derived: tuple[tuple[IndexKind, list[str]], ...] = (("chunks", gone.chunks),
                                                         ("entities", gone.entities))
    for kind, ids in derived:
        index = parts.index(kind)
        index.delete(ids)
        index.save()
    return gone


def merges(parts: Components) -> list[tuple[Link, Entity, Entity]]:
    """Every entity-resolution merge with the two entities (their mentions say
    which documents they come from)."""
    store = parts.store
    return [(link, store.entity(link.source), store.entity(link.target))
            for link in store.links(kind=LinkKind.SAME_AS)]


def undo_merge(parts: Components, entity_id: str) -> Link:
    """Split ``entity_id`` from the entity it was merged into, for good: the
    ``same_as`` link goes, a ``different_from`` link keeps later builds from
    merging them again."""
    found = parts.store.links(source=entity_id, kind=LinkKind.SAME_AS)
    if not found:
        raise WorkspaceError(f"{entity_id} is not merged into another entity",
                             hint="`medkg merges list` shows the merges")
    link = found[0]
    parts.store.remove_links([link])
    refusal = Link(kind=LinkKind.DIFFERENT_FROM, source=link.source, target=link.target,
                   score=link.score, method="curator")
    parts.store.add_links([refusal])
    return refusal
