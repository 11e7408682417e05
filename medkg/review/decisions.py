"""Making decisions, and which of them are in force.

A decision is never changed or deleted: an ``undo`` is a decision of its own
that names the one it takes back. What is in force is therefore a function of
the whole log (:func:`in_force`), the same after a rebuild as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from medkg.errors import ReviewError
from medkg.model import (
    Decision,
    Entity,
    EntityBrief,
    EntityEdit,
    EntitySnapshot,
    MergeSnapshot,
    ReviewAction,
    ReviewTarget,
    StatementEdit,
    StatementSnapshot,
    Triple,
    stable_id,
)

ACTIONS: dict[ReviewTarget, frozenset[ReviewAction]] = {
    ReviewTarget.STATEMENT: frozenset({ReviewAction.ACCEPT, ReviewAction.REJECT,
                                       ReviewAction.EDIT}),
    ReviewTarget.ENTITY: frozenset({ReviewAction.RENAME, ReviewAction.RETYPE,
                                    ReviewAction.RENORMALISE}),
    ReviewTarget.MERGE: frozenset({ReviewAction.CONFIRM, ReviewAction.SPLIT}),
}
MAX_REASON = 2000
MAX_REVIEWER = 120


def target_of(action: ReviewAction) -> ReviewTarget:
    for kind, actions in ACTIONS.items():
        if action in actions:
            return kind
    raise ReviewError(f"{action.value} is not an action on a statement, entity or merge")


def statement_snapshot(triple: Triple, head: Entity | EntityBrief, tail: Entity | EntityBrief
                       ) -> StatementSnapshot:
    return StatementSnapshot(layer=triple.layer, head=triple.head, head_name=head.name,
                             predicate=triple.predicate, tail=triple.tail, tail_name=tail.name,
                             qualifiers=triple.qualifiers, evidence=triple.evidence,
                             review=triple.review)


def entity_snapshot(entity: Entity) -> EntitySnapshot:
    return EntitySnapshot(layer=entity.layer, name=entity.name, type=entity.type,
                          concept_ids=entity.concept_ids,
                          mentions=sorted({(m.chunk_id, m.start) for m in entity.mentions}))


def merge_snapshot(source: str, target: str, score: float, method: str) -> MergeSnapshot:
    return MergeSnapshot(source=source, target=target, score=score, method=method)


def _clean(text: str, limit: int, what: str) -> str:
    text = text.strip()
    if len(text) > limit:
        raise ReviewError(f"the {what} is {len(text)} characters long; at most {limit}")
    if any(ord(c) < 32 and c not in "\t\n" for c in text):
        raise ReviewError(f"the {what} holds control characters")
    return text


def make(
    action: ReviewAction, target: str, reviewer: str, *, reason: str = "",
    before: StatementSnapshot | EntitySnapshot | MergeSnapshot | None = None,
    after: StatementEdit | EntityEdit | None = None, undoes: Decision | None = None,
    at: datetime | None = None,
) -> Decision:
    """A validated decision; its id comes from its content (the same decision
    imported twice is stored once). An undo is about what ``undoes`` was about."""
    reviewer = _clean(reviewer, MAX_REVIEWER, "reviewer name")
    if not reviewer:
        raise ReviewError("a decision needs a reviewer", hint="pass --reviewer NAME")
    reason = _clean(reason, MAX_REASON, "reason")
    if action is ReviewAction.UNDO:
        if undoes is None:
            raise ReviewError("an undo names the decision it takes back")
        kind, target = undoes.target_kind, undoes.target
    else:
        kind = target_of(action)
    if action is ReviewAction.EDIT and not isinstance(after, StatementEdit):
        raise ReviewError("an edit gives the curator's version of the statement")
    if action in ACTIONS[ReviewTarget.ENTITY] and not isinstance(after, EntityEdit):
        raise ReviewError(f"{action.value} gives the entity's new value")
    at = at or datetime.now(UTC)
    payload = after.model_dump_json() if after is not None else ""
    undone = undoes.id if undoes is not None else None
    return Decision(id=stable_id("rev", target, action.value, reviewer, at.isoformat(), reason,
                                 payload, undone or ""),
                    target_kind=kind, target=target, action=action, reviewer=reviewer, at=at,
                    reason=reason, before=before, after=after, undoes=undone)


@dataclass
class InForce:
    """The decisions in force: per statement the latest accept / reject / edit,
    per entity the latest of each of rename, retype and renormalise, per merge
    the latest confirm / split. Undone decisions are left out."""

    statements: dict[str, Decision] = field(default_factory=dict)
    entities: dict[str, dict[ReviewAction, Decision]] = field(default_factory=dict)
    merges: dict[str, Decision] = field(default_factory=dict)
    undone: set[str] = field(default_factory=set)


def in_force(decisions: Iterable[Decision]) -> InForce:
    ordered = sorted(decisions, key=lambda d: (d.at, d.id))
    out = InForce(undone={d.undoes for d in ordered if d.undoes})
    for d in ordered:
        if d.action is ReviewAction.UNDO or d.id in out.undone:
            continue
        if d.target_kind is ReviewTarget.STATEMENT:
            out.statements[d.target] = d
        elif d.target_kind is ReviewTarget.ENTITY:
            out.entities.setdefault(d.target, {})[d.action] = d
        else:
            out.merges[d.target] = d
    return out


def undoable(decisions: Iterable[Decision], decision_id: str) -> Decision:
    """The decision ``decision_id`` names, if it can still be undone."""
    log = list(decisions)
    found = next((d for d in log if d.id == decision_id), None)
    if found is None:
        raise ReviewError(f"no decision with id {decision_id!r}",
                          hint="`medkg review log` lists the decisions")
    if found.action is ReviewAction.UNDO:
        raise ReviewError(f"{decision_id} is an undo itself", hint="make the decision again")
    if any(d.undoes == decision_id for d in log):
        raise ReviewError(f"{decision_id} was undone already")
    return found
