"""Curation: deleting a document and what only it supported; listing
entity-resolution merges (a curator confirms or splits one in
:mod:`medkg.pipeline.review`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

from medkg.errors import NotFoundError
from medkg.layout import IndexKind
from medkg.model import Entity, Link, LinkKind
from medkg.store.base import Deletion

if TYPE_CHECKING:
    from medkg.components import Components


def delete_document(parts: Components, document_id: str) -> Deletion:
    """Remove a document and what only it supported, from the graph, the SAC-KG
    corpus, the vector indexes and the tag tree; what other documents also
    support stays.

    The delete is journaled in ``state.sqlite``: what will go is recorded before
    anything is removed, the graph's part is one transaction, and the journal
    entry goes once everything else is done. A delete cut short by a crash is
    finished by running it again, or by the next command that opens the
    workspace (:func:`finish_deletes`)."""
    from medkg.pipeline import link

    state, store = parts.fingerprints, parts.store
    pending = state.pending_deletes().get(document_id)
    link.forget(parts)  # its links go with its entities
    if store.has_document(document_id):
        gone = store.delete_document(
            document_id, journal=lambda plan: state.begin_delete(document_id, asdict(plan)))
    elif pending is not None:
        gone = Deletion(**pending)  # type: ignore[arg-type]
    else:
        raise NotFoundError("document", document_id)
    parts.corpus.delete_document(document_id)  # a new corpus version: links are redone
    derived: tuple[tuple[IndexKind, list[str]], ...] = (("chunks", gone.chunks),
                                                         ("entities", gone.entities))
    for kind, ids in derived:
        index = parts.index(kind)
        index.delete(ids)
        index.save()
    parts.lexical.delete(gone.chunks)
    tree = parts.tree()
    if tree is not None and gone.chunks:
        tree.remove_leaves([c for c in gone.chunks if c in tree.nodes])
        tree.save(parts.layout.tag_tree)
    state.end_delete(document_id)
    return gone


def finish_deletes(parts: Components) -> list[str]:
    """Finish every delete a crash cut short; returns their document ids."""
    pending = list(parts.fingerprints.pending_deletes())
    for document_id in pending:
        delete_document(parts, document_id)
    return pending


def merges(parts: Components) -> list[tuple[Link, Entity, Entity]]:
    """Every entity-resolution merge with the two entities (their mentions say
    which documents they come from)."""
    store = parts.store
    return [(link, store.entity(link.source), store.entity(link.target))
            for link in store.links(kind=LinkKind.SAME_AS)]
