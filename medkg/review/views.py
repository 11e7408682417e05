"""What a curator sees of a statement or an entity: both ends with their
concepts and definitions, the evidence quotes with the mentions marked, the
reasons it is in the queue, merges, and its audit history. Built from the
store alone; the CLI prints them, the HTTP API returns them as JSON."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from medkg.errors import NotFoundError, ReviewError
from medkg.model import (
    Decision,
    Entity,
    EntityBrief,
    Layer,
    LinkKind,
    Predicate,
    ReviewAction,
    ReviewState,
    StatementEdit,
    Triple,
)
from medkg.review.queue import Reason, statement_reasons
from medkg.store.base import GraphStore

MAX_MENTIONS = 200


class ConceptCard(BaseModel):
    id: str
    name: str
    definition: str | None = None
    source: str = ""


class EntityCard(BaseModel):
    id: str
    name: str
    type: str
    layer: Layer
    concepts: list[ConceptCard] = []
    chunks: int = 0  # how many chunks mention it


class Mark(BaseModel):
    """A span of a quote (offsets into the quote) that names one end."""

    model_config = ConfigDict(frozen=True)

    start: int
    end: int
    role: str  # head or tail


class EvidenceView(BaseModel):
    document_id: str
    document_title: str
    start: int  # document offsets
    end: int
    quote: str
    marks: list[Mark] = []


class TripleLine(BaseModel):
    id: str
    label: str
    state: ReviewState
    predicate: Predicate


class StatementView(BaseModel):
    kind: str = "statement"
    triple: Triple
    head: EntityCard
    tail: EntityCard
    evidence: list[EvidenceView]
    reasons: list[Reason]
    priority: float
    history: list[Decision]
    revised_as: list[str] = []  # curators' versions that replace it
    # statements that state the same (an extracted one and a curator's version of
    # another statement): each keeps its own review state
    same_content: list[str] = []

    def render(self) -> str:
        t = self.triple
        q = t.qualifiers
        flags = [n for n in ("negated", "uncertain", "hypothetical", "historical")
                 if getattr(q, n)]
        lines = [f"{self.head.name} —{t.predicate.value}→ {self.tail.name}   [{t.id}]",
                 f"  layer {t.layer.value}, state {t.review.value}, confidence "
                 f"{t.confidence:.2f}, method {t.method}"
                 + (f", {', '.join(flags)}" if flags else "")
                 + (f", experiencer {q.experiencer}" if q.experiencer != "patient" else "")]
        if t.revision_of:
            lines.append(f"  a curator's version of {t.revision_of}")
        if self.revised_as:
            lines.append(f"  replaced by {', '.join(self.revised_as)}")
        if self.same_content:
            lines.append(f"  states the same as {', '.join(self.same_content)}")
        for end, card in (("head", self.head), ("tail", self.tail)):
            lines.append(f"  {end}: {card.name} ({card.type}) [{card.id}]")
            lines += [f"    {c.id} {c.name}: {c.definition or '(no definition)'}"
                      for c in card.concepts]
        lines.append(f"  priority {self.priority:.2f}")
        lines += [f"    {r.code}: {r.text}" for r in self.reasons]
        lines.append("  evidence:")
        lines += [f"    {e.document_title} [{e.document_id} {e.start}-{e.end}]: {e.quote}"
                  for e in self.evidence]
        lines += _history(self.history)
        return "\n".join(lines)


class MentionLine(BaseModel):
    document_id: str
    start: int
    end: int
    text: str


class MergeLine(BaseModel):
    kind: LinkKind
    other: str
    other_name: str
    score: float
    method: str
    direction: str  # "into" (this entity was merged into other) or "from"


class EntityView(BaseModel):
    kind: str = "entity"
    entity: EntityCard
    mentions: list[MentionLine]
    merges: list[MergeLine]
    triples: list[TripleLine]
    history: list[Decision]

    def render(self) -> str:
        e = self.entity
        lines = [f"{e.name} ({e.type}, {e.layer.value}) [{e.id}]"]
        lines += [f"  {c.id} {c.name}: {c.definition or '(no definition)'}" for c in e.concepts]
        lines.append(f"  mentioned in {e.chunks} chunk(s)")
        lines += [f"    {m.document_id} {m.start}-{m.end}: {m.text}" for m in self.mentions[:20]]
        lines += [f"  {m.kind.value} {m.direction} {m.other_name} [{m.other}] "
                  f"({m.method}, {m.score:.3f})" for m in self.merges]
        lines += [f"  {t.state.value:<9} {t.label} [{t.id}]" for t in self.triples]
        lines += _history(self.history)
        return "\n".join(lines)


def _history(decisions: list[Decision]) -> list[str]:
    if not decisions:
        return ["  history: no decisions"]
    return ["  history:"] + [
        f"    {d.at:%Y-%m-%d %H:%M:%S} {d.reviewer}: "
        + (f"undo {d.undoes}" if d.undoes else d.action.value)
        + (f" — {d.reason}" if d.reason else "") + f" [{d.id}]" for d in decisions]


def card(store: GraphStore, entity: Entity | EntityBrief) -> EntityCard:
    concepts = []
    for cid in entity.concept_ids:
        try:
            c = store.concept(cid)
        except NotFoundError:
            concepts.append(ConceptCard(id=cid, name=cid))
            continue
        concepts.append(ConceptCard(id=c.id, name=c.name, definition=c.definition,
                                    source=c.source))
    chunks = entity.chunk_ids if isinstance(entity, EntityBrief) \
        else sorted({m.chunk_id for m in entity.mentions})
    return EntityCard(id=entity.id, name=entity.name, type=entity.type, layer=entity.layer,
                      concepts=concepts, chunks=len(chunks))


def marks(quote: str, ends: list[tuple[str, list[str]]]) -> list[Mark]:
    """Where each end's surface texts (longest first) occur in the quote,
    case-insensitively and without overlaps: the highlighting of the page."""
    lowered = quote.lower()
    taken: list[Mark] = []
    for role, texts in ends:
        for text in sorted({t.lower() for t in texts if t.strip()}, key=len, reverse=True):
            at = lowered.find(text)
            while at >= 0:
                end = at + len(text)
                if all(end <= m.start or at >= m.end for m in taken):
                    taken.append(Mark(start=at, end=end, role=role))
                at = lowered.find(text, end)
    return sorted(taken, key=lambda m: (m.start, m.end))


def _evidence(store: GraphStore, triple: Triple, head: EntityBrief, tail: EntityBrief
              ) -> list[EvidenceView]:
    titles: dict[str, str] = {}
    ends = [("head", [head.name, *head.surface]), ("tail", [tail.name, *tail.surface])]
    out = []
    for ev in triple.evidence:
        if ev.document_id not in titles:
            try:
                titles[ev.document_id] = store.document(ev.document_id).title
            except NotFoundError:
                titles[ev.document_id] = ev.document_id
        out.append(EvidenceView(document_id=ev.document_id, document_title=titles[ev.document_id],
                                start=ev.start, end=ev.end, quote=ev.quote,
                                marks=marks(ev.quote, ends)))
    return out


def statement_view(store: GraphStore, triple_id: str) -> StatementView:
    """The statement, its ends (read as briefs, not mention by mention), its
    evidence, and its reasons; its conflicts are looked for among the statements
    about the same two entities (the queue looks across the whole graph)."""
    triple = store.triple(triple_id)
    briefs = {b.id: b for b in store.entity_briefs([triple.head, triple.tail])}
    head, tail = briefs[triple.head], briefs[triple.tail]
    neighbours = store.triples(entity_ids=[triple.head, triple.tail])
    pair = {triple.head, triple.tail}
    others = [t for t in neighbours if t.id != triple.id and {t.head, t.tail} == pair]
    reasons = statement_reasons([triple, *others], briefs)[triple.id]
    revised = sorted(store.revisions_of(triple.id))
    key = _content_key(triple.layer, triple)
    same = sorted(t.id for t in others if _content_key(t.layer, t) == key)
    # An edit of another statement that states this one is part of its history too.
    landed = [d for t in others for d in store.decisions(t.id)
              if d.action is ReviewAction.EDIT and isinstance(d.after, StatementEdit)
              and _content_key(triple.layer, d.after) == key]
    history = sorted([*store.decisions(triple.id), *landed], key=lambda d: (d.at, d.id))
    return StatementView(triple=triple, head=card(store, head), tail=card(store, tail),
                         evidence=_evidence(store, triple, head, tail), reasons=reasons,
                         priority=round(sum(r.weight for r in reasons), 3),
                         history=history, revised_as=revised, same_content=same)


def _content_key(layer: Layer, t: Triple | StatementEdit) -> str:
    return Triple.key_for(layer, t.head, t.predicate, t.tail, t.qualifiers)


def entity_view(store: GraphStore, entity_id: str) -> EntityView:
    entity = store.entity(entity_id)
    merges = []
    for kind in (LinkKind.SAME_AS, LinkKind.DIFFERENT_FROM):
        for link in store.links(source=entity.id, kind=kind):
            merges.append((kind, link, link.target, "into"))
        for link in store.links(target=entity.id, kind=kind):
            merges.append((kind, link, link.source, "from"))
    names = {b.id: b.name for b in store.entity_briefs(
        [other for _k, _l, other, _d in merges])}
    triples = store.triples(entity_ids=[entity.id])
    ends = {b.id: b.name for b in store.entity_briefs(
        {e for t in triples for e in (t.head, t.tail)})}
    return EntityView(
        entity=card(store, entity),
        mentions=[MentionLine(document_id=m.document_id, start=m.start, end=m.end, text=m.text)
                  for m in sorted(entity.mentions, key=lambda m: (m.document_id, m.start))
                  [:MAX_MENTIONS]],
        merges=[MergeLine(kind=k, other=other, other_name=names.get(other, other),
                          score=link.score, method=link.method, direction=d)
                for k, link, other, d in merges],
        triples=[TripleLine(id=t.id, label=f"{ends.get(t.head, t.head)} —{t.predicate.value}→ "
                            f"{ends.get(t.tail, t.tail)}", state=t.review, predicate=t.predicate)
                 for t in triples],
        history=store.decisions(entity.id))


def view_of(store: GraphStore, target: str) -> StatementView | EntityView:
    """The view of a statement (``tri-...``) or an entity (``ent-...``) id."""
    if target.startswith("tri-"):
        return statement_view(store, target)
    if target.startswith("ent-"):
        return entity_view(store, target)
    raise ReviewError(f"{target!r} is neither a statement (tri-...) nor an entity (ent-...) id")
