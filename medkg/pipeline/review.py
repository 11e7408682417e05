"""Curator review over a workspace: make, undo, import and export decisions,
list the queue; and the build stage that keeps every decision in force.

Every decision is validated against the graph, recorded in the ``review``
graph, and applied at once (:func:`medkg.review.apply.apply`); the ``review``
build stage applies the whole log again after the automatic stages, so what
the build rewrote follows the curators again before anything reads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from medkg.errors import NotFoundError, ReviewError
from medkg.files import atomic_text
from medkg.model import (
    Decision,
    EntityEdit,
    LinkKind,
    ReviewAction,
    ReviewTarget,
    StatementEdit,
    Triple,
)
from medkg.ontology.semantic import GROUPS
from medkg.review import exchange
from medkg.review.apply import Applied, apply
from medkg.review.decisions import (
    entity_snapshot,
    in_force,
    make,
    merge_snapshot,
    statement_snapshot,
    target_of,
    undoable,
)
from medkg.review.queue import QueueFilter, QueueItem, merge_items, ordered, statement_items

if TYPE_CHECKING:
    from medkg.components import Components
    from medkg.pipeline.context import BuildContext

MAX_NAME = 300


@dataclass(frozen=True)
class Request:
    """One decision asked for (by the CLI, the API or a file), before validation."""

    action: ReviewAction
    target: str = ""
    reason: str = ""
    after: StatementEdit | EntityEdit | None = None
    undoes: str | None = None  # for an undo: the decision taken back
    at: datetime | None = None
    id: str | None = None  # a decision imported whole keeps its id
    reviewer: str | None = None  # who, when it is not the one recording (an import)


@dataclass
class Recorded:
    decisions: list[Decision] = field(default_factory=list)
    skipped: int = 0  # already on record (an import run twice)
    applied: Applied = field(default_factory=Applied)


def prepare(parts: Components, request: Request, reviewer: str,
            log: list[Decision] | None = None) -> Decision:
    """The decision ``request`` asks for, checked against the graph; nothing is
    written. Unknown targets, actions that do not fit them and edits that
    change nothing are :class:`ReviewError` s."""
    store = parts.store
    if request.action is ReviewAction.UNDO:
        if not request.undoes:
            raise ReviewError("an undo names the decision it takes back")
        taken_back = undoable(store.decisions() if log is None else log, request.undoes)
        return make(ReviewAction.UNDO, taken_back.target, reviewer, reason=request.reason,
                    undoes=taken_back, at=request.at)
    kind = target_of(request.action)
    if not request.target:
        raise ReviewError(f"{request.action.value} needs a target id")
    if kind is ReviewTarget.STATEMENT:
        triple = _triple(parts, request.target)
        ends = {b.id: b for b in store.entity_briefs([triple.head, triple.tail],
                                                      mentions=False)}
        head, tail = ends[triple.head], ends[triple.tail]
        after = request.after
        if request.action is ReviewAction.EDIT:
            after = _checked_edit(parts, triple, after)
        elif after is not None:
            raise ReviewError(f"{request.action.value} takes no new version: use edit")
        return make(request.action, triple.id, reviewer, reason=request.reason,
                    before=statement_snapshot(triple, head, tail), after=after, at=request.at)
    if kind is ReviewTarget.ENTITY:
        entity = store.entity(request.target)
        edit = _checked_entity_edit(parts, request.action, request.after)
        return make(request.action, entity.id, reviewer, reason=request.reason,
                    before=entity_snapshot(entity), after=edit, at=request.at)
    found = store.links(source=request.target, kind=LinkKind.SAME_AS)
    if not found:
        raise ReviewError(f"{request.target} is not merged into another entity",
                          hint="`medkg merges list` shows the merges")
    link = found[0]
    return make(request.action, link.source, reviewer, reason=request.reason,
                before=merge_snapshot(link.source, link.target, link.score, link.method),
                at=request.at)


def _triple(parts: Components, triple_id: str) -> Triple:
    try:
        return parts.store.triple(triple_id)
    except NotFoundError as exc:
        raise ReviewError(f"no statement with id {triple_id!r} in this workspace",
                          hint="`medkg review queue` lists statements with their ids") from exc


def _checked_edit(parts: Components, triple: Triple,
                  after: StatementEdit | EntityEdit | None) -> StatementEdit:
    if not isinstance(after, StatementEdit):
        raise ReviewError("an edit gives the statement's new predicate, head, tail or "
                          "qualifiers")
    after = after.model_copy(update={"head": _entity_named(parts, after.head, triple),
                                     "tail": _entity_named(parts, after.tail, triple)})
    briefs = {b.id: b for b in parts.store.entity_briefs([after.head, after.tail],
                                                          mentions=False)}
    for end in (after.head, after.tail):
        entity = briefs.get(end)
        if entity is None:
            raise NotFoundError("entity", end)
        if entity.layer is not triple.layer:
            raise ReviewError(f"{end} is in the {entity.layer.value} layer, the statement in "
                              f"the {triple.layer.value} layer")
    if after.head == after.tail:
        raise ReviewError("a statement's head and tail must differ")
    if Triple.key_for(triple.layer, after.head, after.predicate, after.tail,
                      after.qualifiers) == triple.id:
        raise ReviewError("the edit changes nothing", hint="accept the statement instead")
    return after


ENTITY_ID = re.compile(r"ent-[0-9a-f]{16}")


def _entity_named(parts: Components, text: str, triple: Triple) -> str:
    """The entity an edit's end names: an entity id, else an entity of the
    statement's layer with that name (any case), else one defined by the
    vocabulary concept of that name. Several: the error lists them to choose."""
    store, layer = parts.store, triple.layer
    text = " ".join(text.split())
    if ENTITY_ID.fullmatch(text):
        return text  # checked with the other end by the caller
    wanted = text.lower()
    ends = [b for b in store.entity_briefs([triple.head, triple.tail], mentions=False)
            if b.name.lower() == wanted]
    if ends:
        return ends[0].id  # the end as it was, shown by its name
    found = [b for b in store.iter_entities(layer) if b.name.lower() == wanted]
    if not found:
        concepts = [c.id for c in parts.concept_index().lookup(text)]
        found = [b for b in store.entities_of_concepts(concepts) if b.layer is layer] \
            if concepts else []
    if len(found) == 1:
        return found[0].id
    if not found:
        raise ReviewError(f"no entity of the {layer.value} layer is named {text!r}",
                          hint="name an entity of this layer (its name or its id): "
                          "`medkg review queue` and the page show them")
    choices = "; ".join(f"{b.name} ({b.type}, {b.id})" for b in found[:10])
    raise ReviewError(f"{text!r} names {len(found)} entities of the {layer.value} layer: "
                      f"{choices}", hint="give the id of the one you mean")


def _checked_entity_edit(parts: Components, action: ReviewAction,
                         after: StatementEdit | EntityEdit | None) -> EntityEdit:
    if not isinstance(after, EntityEdit):
        raise ReviewError(f"{action.value} gives the entity's new value")
    if action is ReviewAction.RENAME:
        name = " ".join((after.name or "").split())
        if not name or len(name) > MAX_NAME:
            raise ReviewError(f"a new name has 1 to {MAX_NAME} characters")
        return EntityEdit(name=name)
    if action is ReviewAction.RETYPE:
        if after.type not in GROUPS:
            raise ReviewError(f"unknown type {after.type!r}",
                              hint="one of " + ", ".join(sorted(GROUPS)))
        return EntityEdit(type=after.type)
    concepts = sorted(set(after.concept_ids or []))
    if not concepts:
        raise ReviewError("renormalise names at least one concept id")
    for cid in concepts:
        parts.store.concept(cid)  # NotFoundError names the id
    return EntityEdit(concept_ids=concepts)


def record(parts: Components, requests: list[Request], reviewer: str) -> Recorded:
    """Validate every request first (one bad request records nothing), then store
    them in one write and apply the log once."""
    store = parts.store
    log = store.decisions()
    known = {d.id for d in log}
    out = Recorded()
    for request in requests:
        decision = prepare(parts, request, request.reviewer or reviewer, log)
        if request.id is not None and request.id in known:
            out.skipped += 1
            continue
        if request.id is not None:
            decision = decision.model_copy(update={"id": request.id})
        if decision.id in known:
            out.skipped += 1
            continue
        known.add(decision.id)
        log.append(decision)
        out.decisions.append(decision)
    if out.decisions:
        store.add_decisions(out.decisions)
        out.applied = apply(store, log, only={d.target for d in out.decisions})
    return out


def decide(parts: Components, request: Request, reviewer: str) -> Decision:
    recorded = record(parts, [request], reviewer)
    if not recorded.decisions:
        raise ReviewError("that decision is on record already")
    return recorded.decisions[0]


def history(parts: Components, target: str | None = None) -> list[Decision]:
    """The audit log: every decision (or those about one target), oldest first."""
    return parts.store.decisions(target)


def queue(parts: Components, flt: QueueFilter) -> list[QueueItem]:
    """Statements and merges by priority; reads the triples and, of the entities,
    only the briefs of their ends."""
    store = parts.store
    triples = store.triples(flt.layer) if flt.kind in (None, ReviewTarget.STATEMENT) else []
    merges = store.links(kind=LinkKind.SAME_AS) if flt.kind in (None, ReviewTarget.MERGE) \
        else []
    ends = {e for t in triples for e in (t.head, t.tail)}
    ends |= {e for x in merges for e in (x.source, x.target)}
    briefs = {b.id: b for b in store.entity_briefs(sorted(ends))}
    items = statement_items(triples, briefs, flt) if triples else []
    if merges:
        items += merge_items(merges, briefs, in_force(store.decisions()),
                             parts.settings.linking.resolution_min_cosine, flt)
    return ordered(items)


def import_file(parts: Components, path: Path, reviewer: str | None = None) -> Recorded:
    """Apply a decisions file (JSONL or TSV). Every row is checked before any is
    recorded; a row without a reviewer takes ``reviewer``."""
    requests: list[Request] = []
    for row in exchange.read(path):
        who = row.reviewer or reviewer
        if not who:
            raise ReviewError(f"{path}:{row.line}: no reviewer", hint="pass --reviewer NAME")
        try:
            kind = target_of(row.action) if row.action is not ReviewAction.UNDO else None
            after: StatementEdit | EntityEdit | None = None
            if row.after is not None and kind is ReviewTarget.STATEMENT:
                after = StatementEdit.model_validate(row.after)
            elif row.after is not None and kind is ReviewTarget.ENTITY:
                after = EntityEdit.model_validate(row.after)
        except (ValidationError, ReviewError) as exc:
            raise ReviewError(f"{path}:{row.line}: {exc}") from exc
        requests.append(Request(row.action, row.target, row.reason, after, row.undoes, row.at,
                                row.id, who))
    try:
        return record(parts, requests, reviewer or "")
    except ReviewError as exc:
        raise ReviewError(f"{path}: {exc.message}", hint=exc.hint) from exc


def export_file(parts: Components, path: Path, *, overwrite: bool = False) -> int:
    decisions = parts.store.decisions()
    if path.exists() and not overwrite:
        raise ReviewError(f"{path} exists", hint="pass --force to replace it")
    text = exchange.dumps(decisions, exchange.format_of(path))
    with atomic_text(path) as fh:
        fh.write(text)
    return len(decisions)


def run(ctx: BuildContext) -> None:
    """The build stage: the whole log applied to what the earlier stages wrote."""
    applied = apply(ctx.parts.store)
    ctx.report.review_unresolved = len(applied.unresolved)


__all__ = ["Recorded", "Request", "decide", "history", "import_file", "prepare",
           "queue", "record", "run"]
