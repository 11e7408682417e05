"""The graph brought in line with the decisions in force.

The build writes statements as ``proposed``; the curators' decisions live in
the ``review`` graph, which nothing automatic writes. :func:`apply` runs after
every decision and as a build stage, and sets what follows from the whole log:

- a statement's review state (``accepted``, ``rejected``, ``edited`` when a
  curator's version replaces it, ``proposed`` when no decision holds);
- a curator's version of an edited statement: a statement of its own
  (``method = curator``, ``prov:wasRevisionOf`` the original, the original's
  evidence), so it lives exactly as long as evidence for it remains;
- an entity's name, type and concepts (and its ``definition_of`` links);
- a merge kept (``same_as``) or split (``different_from``).

A decision whose target id is gone (a re-extraction after a vocabulary or model
change gave the entities new ids) is carried to the statement with the same
layer, predicate, polarity and evidence, or to the entity with the same
mentions; one that finds nothing is reported, and kept for when it does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from medkg.errors import NotFoundError
from medkg.model import (
    Decision,
    EntityEdit,
    EntitySnapshot,
    Link,
    LinkKind,
    MergeSnapshot,
    Qualifiers,
    ReviewAction,
    ReviewState,
    StatementEdit,
    StatementSnapshot,
    Triple,
    stable_id,
)
from medkg.review.decisions import in_force
from medkg.store.base import GraphStore

CURATOR = "curator"
_STATE = {ReviewAction.ACCEPT: ReviewState.ACCEPTED, ReviewAction.REJECT: ReviewState.REJECTED,
          ReviewAction.EDIT: ReviewState.EDITED}
_FIELD = {ReviewAction.RENAME: "name", ReviewAction.RETYPE: "type",
          ReviewAction.RENORMALISE: "concept_ids"}


@dataclass
class Applied:
    """What :func:`apply` changed, and the decisions whose target it did not find."""

    states: int = 0  # statements whose review state changed
    versions: int = 0  # curators' versions written
    removed: int = 0  # curators' versions no decision holds any more
    entities: int = 0
    merges: int = 0
    unresolved: list[str] = field(default_factory=list)


def _polarity(q: Qualifiers) -> tuple[bool, bool, bool, str]:
    return q.negated, q.uncertain, q.hypothetical, q.experiencer


def _spans(evidence: Iterable[object]) -> set[tuple[str, int, int]]:
    return {(e.chunk_id, e.start, e.end) for e in evidence}  # type: ignore[attr-defined]


def resolve_statement(store: GraphStore, target: str, before: StatementSnapshot | None,
                      triples: dict[str, Triple]) -> str | None:
    """The statement a decision is about: its own id, else the one statement of
    the same layer, predicate and polarity that shares its evidence (ties broken
    by the names of both ends)."""
    if target in triples:
        return target
    if before is None or not before.evidence:
        return None
    spans, polarity = _spans(before.evidence), _polarity(before.qualifiers)
    found = [t for t in triples.values()
             if t.layer is before.layer and t.predicate is before.predicate
             and t.method != CURATOR and _polarity(t.qualifiers) == polarity
             and spans & _spans(t.evidence)]
    if len(found) > 1:
        names = {b.id: b.name.lower() for b in store.entity_briefs(
            {e for t in found for e in (t.head, t.tail)})}
        found = [t for t in found if names.get(t.head) == before.head_name.lower()
                 and names.get(t.tail) == before.tail_name.lower()]
    return found[0].id if len(found) == 1 else None


def resolve_entity(store: GraphStore, target: str, before: EntitySnapshot | None,
                   known: set[str]) -> str | None:
    """An entity a decision is about: its own id, else the one entity of the same
    layer mentioned at any of the same places."""
    if target in known:
        return target
    if before is None or not before.mentions:
        return None
    where = set(before.mentions)
    at = getattr(store, "entities_mentioned_at", None)
    if at is not None:  # the tables: read by the places' documents
        found = at(before.layer, where)
    else:
        found = [e.id for e in store.entities(before.layer)
                 if where & {(m.chunk_id, m.start) for m in e.mentions}]
    return found[0] if len(found) == 1 else None


def curated_id(content_key: str) -> str:
    """A curator's version is a statement of its own, never one the extractor
    made with the same content: an edit that lands on an existing statement
    changes only its target (the existing one keeps its own review state)."""
    return stable_id("tri", CURATOR, content_key)


def curated_version(original: Triple, edit: StatementEdit, before: StatementSnapshot | None,
                    known: set[str]) -> Triple | None:
    """The curator's version of ``original`` (None when an end it names is gone).
    An end the curator left as it was follows the original to its new id."""
    head = original.head if before is not None and edit.head == before.head else edit.head
    tail = original.tail if before is not None and edit.tail == before.tail else edit.tail
    if head not in known or tail not in known:
        return None
    return Triple(
        id=curated_id(Triple.key_for(original.layer, head, edit.predicate, tail,
                                     edit.qualifiers)),
        layer=original.layer, head=head, predicate=edit.predicate, tail=tail,
        evidence=original.evidence, qualifiers=edit.qualifiers, confidence=1.0,
        level=original.level, review=ReviewState.ACCEPTED, method=CURATOR,
        revision_of=original.id)


def apply(store: GraphStore, decisions: list[Decision] | None = None, *,
          only: set[str] | None = None) -> Applied:
    """Bring the graph in line with the whole log (``decisions``, else the
    store's). ``only``: just these targets (and their curators' versions), as
    after a decision about them; the build applies everything."""
    log = store.decisions() if decisions is None else decisions
    out = Applied()
    if not log:  # nothing decided: the build's own states stand
        return out
    force = in_force(log)
    if only is None:
        known = store.entity_ids()
    else:
        log = [d for d in log if d.target in only]
        force.statements = {k: d for k, d in force.statements.items() if k in only}
        force.entities = {k: d for k, d in force.entities.items() if k in only}
        force.merges = {k: d for k, d in force.merges.items() if k in only}
        known = _entities_named(store, log)
    _statements(store, force.statements, known, out, only)
    _entities(store, log, force.entities, known, out)
    _merges(store, log, force.merges, known, out)
    return out


def _entities_named(store: GraphStore, log: list[Decision]) -> set[str]:
    """Which of the entities these decisions name (as targets, the ends of an
    edit or of a merge) are in the graph."""
    named: set[str] = set()
    for d in log:
        named.add(d.target)
        if isinstance(d.after, StatementEdit):
            named |= {d.after.head, d.after.tail}
        if isinstance(d.before, StatementSnapshot):
            named |= {d.before.head, d.before.tail}
        if isinstance(d.before, MergeSnapshot):
            named |= {d.before.source, d.before.target}
    wanted = sorted(n for n in named if n.startswith("ent-"))
    return {b.id for b in store.entity_briefs(wanted, mentions=False)}


def _read(store: GraphStore, only: set[str] | None) -> dict[str, Triple]:
    """Every statement, or those named and the curators' versions of them."""
    if only is None:
        return {t.id: t for t in store.triples()}
    ids = set(only) | {v for t in only for v in store.revisions_of(t)}
    found = {}
    for tid in sorted(ids):
        try:
            found[tid] = store.triple(tid)
        except NotFoundError:
            continue
    return found


def _statements(store: GraphStore, decided: dict[str, Decision], known: set[str],
                out: Applied, only: set[str] | None = None) -> None:
    triples = _read(store, only)
    wanted: dict[str, ReviewState] = {}
    versions: dict[str, Triple] = {}
    for d in sorted(decided.values(), key=lambda d: (d.at, d.id)):
        before = d.before if isinstance(d.before, StatementSnapshot) else None
        tid = resolve_statement(store, d.target, before, triples)
        if tid is None:
            out.unresolved.append(d.id)
            continue
        wanted[tid] = _STATE[d.action]
        if d.action is ReviewAction.EDIT and isinstance(d.after, StatementEdit):
            version = curated_version(triples[tid], d.after, before, known)
            if version is None:
                out.unresolved.append(d.id)
                wanted.pop(tid)
                continue
            if version.id not in triples:
                store.add_triples([version])
                out.versions += 1
                triples[version.id] = version.model_copy(update={"review": ReviewState.PROPOSED})
            versions[version.id] = version
            wanted.setdefault(version.id, ReviewState.ACCEPTED)
    stale = [t.id for t in triples.values() if t.method == CURATOR and t.id not in versions]
    out.removed += len(store.remove_triples(stale))
    for tid, t in triples.items():
        if tid in stale:
            continue
        state = wanted.get(tid, ReviewState.PROPOSED)
        if t.review is not state and store.set_review_state(tid, state):
            out.states += 1


def _entities(store: GraphStore, log: list[Decision],
              decided: dict[str, dict[ReviewAction, Decision]], known: set[str],
              out: Applied) -> None:
    """Each field a curator ever set: the latest decision in force, else (every
    one undone) the value before the first of them."""
    first: dict[str, dict[str, Decision]] = {}
    for d in sorted(log, key=lambda d: (d.at, d.id)):
        if d.action in _FIELD and isinstance(d.before, EntitySnapshot):
            first.setdefault(d.target, {}).setdefault(_FIELD[d.action], d)
    briefs = {b.id: b for b in store.entity_briefs(sorted(k for k in first if k in known),
                                                   mentions=False)}
    for target, fields in first.items():
        snapshot = next(iter(fields.values())).before
        assert isinstance(snapshot, EntitySnapshot)
        eid = resolve_entity(store, target, snapshot, known)
        if eid is None:
            out.unresolved += [d.id for d in decided.get(target, {}).values()]
            continue
        values: dict[str, object] = {}
        for name, earliest in fields.items():
            now = next((d for a, d in decided.get(target, {}).items() if _FIELD[a] == name), None)
            source = now.after if now is not None else earliest.before
            values[name] = getattr(source, name)
        brief = briefs.get(eid) or next(iter(store.entity_briefs([eid], mentions=False)), None)
        if brief is None:
            continue
        current = {"name": brief.name, "type": brief.type, "concept_ids": brief.concept_ids}
        changed = {k: v for k, v in values.items() if current[k] != v}
        if changed:
            store.update_entity(eid, EntityEdit(**changed))
            out.entities += 1
        if "concept_ids" in values:
            _definitions(store, eid, list(values["concept_ids"]))  # type: ignore[call-overload]


def _definitions(store: GraphStore, entity_id: str, concept_ids: list[str]) -> None:
    """An entity a curator normalised is defined by exactly those concepts."""
    have = store.links(source=entity_id, kind=LinkKind.DEFINITION_OF)
    store.remove_links([x for x in have if x.target not in concept_ids])
    linked = {x.target for x in have}
    store.add_links([Link(kind=LinkKind.DEFINITION_OF, source=entity_id, target=c, score=1.0,
                          method=CURATOR) for c in concept_ids if c not in linked])


def _merges(store: GraphStore, log: list[Decision], decided: dict[str, Decision],
            known: set[str], out: Applied) -> None:
    """A confirmed merge stays (re-made if an automatic run dropped it); a split
    one stays apart; a merge whose decisions were all undone is as it was first."""
    ever: dict[str, Decision] = {}
    for d in sorted(log, key=lambda d: (d.at, d.id)):
        if d.action in (ReviewAction.CONFIRM, ReviewAction.SPLIT):
            ever.setdefault(d.target, d)
    for source, first in ever.items():
        snap = first.before
        if not isinstance(snap, MergeSnapshot) or snap.source not in known \
                or snap.target not in known:
            if source in decided:
                out.unresolved.append(decided[source].id)
            continue
        now = decided.get(source)
        keep = now is None or now.action is ReviewAction.CONFIRM
        same = store.links(source=source, kind=LinkKind.SAME_AS)
        apart = [x for x in store.links(source=source, kind=LinkKind.DIFFERENT_FROM)
                 if x.target == snap.target]
        if keep:
            changed = store.remove_links(apart)
            if not same:
                store.add_links([Link(kind=LinkKind.SAME_AS, source=source, target=snap.target,
                                      score=snap.score, method=snap.method if now is None
                                      else CURATOR)])
                changed += 1
        else:
            changed = store.remove_links(same)
            if not apart:
                store.add_links([Link(kind=LinkKind.DIFFERENT_FROM, source=source,
                                      target=snap.target, score=snap.score, method=CURATOR)])
                changed += 1
        out.merges += bool(changed)
