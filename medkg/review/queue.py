"""What a curator should look at first, and why.

Each statement or merge gets a priority: the sum of the weights of its reasons
(RuleHub flags, conflicts, low confidence, an LLM as its only source, a single
piece of evidence, growth by the SAC-KG loop; for a merge, how close its score
came to the threshold). The reasons travel with the item, so the page can say
why something is at the top.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from medkg.model import (
    Entity,
    EntityBrief,
    Layer,
    Link,
    Predicate,
    ReviewAction,
    ReviewState,
    ReviewTarget,
    Triple,
)
from medkg.review.decisions import InForce
from medkg.rulehub.verify import Verifier

LOW_CONFIDENCE = 0.7
MERGE_MARGIN = 0.1  # a merge whose score is within this of the threshold is "near" it


class Reason(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: str  # a RuleHub id (S006, C001, ...) or low_confidence, llm, single_evidence, ...
    text: str
    weight: float


class QueueItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: ReviewTarget
    id: str  # the triple id, or the merged entity's id
    priority: float
    reasons: list[Reason]
    state: ReviewState
    layer: Layer
    label: str  # "head —predicate→ tail", or "merged → into"
    predicate: Predicate | None = None
    head: str | None = None
    tail: str | None = None
    documents: list[str] = []


class QueueFilter(BaseModel):
    """Which items to list; None means any."""

    layer: Layer | None = None
    predicate: Predicate | None = None
    entity: str | None = None  # an entity id, or part of an entity's name
    document: str | None = None
    state: ReviewState | None = ReviewState.PROPOSED
    kind: ReviewTarget | None = None


def _weight(rule_id: str, severity: str) -> float:
    if rule_id.startswith("C"):
        return 3.0
    return 3.0 if severity == "hard" else 2.0


def as_entities(briefs: Mapping[str, EntityBrief]) -> dict[str, Entity]:
    """Entities as the RuleHub reads them, from briefs (their mentions' texts go
    to the verifier as ``surface``: an entity mentioned thousands of times is not
    read mention by mention)."""
    return {b.id: Entity(id=b.id, layer=b.layer, name=b.name, type=b.type, context="",
                         concept_ids=b.concept_ids) for b in briefs.values()}


def statement_reasons(triples: Sequence[Triple], briefs: Mapping[str, EntityBrief]
                      ) -> dict[str, list[Reason]]:
    """Every reason to look at each triple (conflicts are found among ``triples``)."""
    out: dict[str, list[Reason]] = {t.id: [] for t in triples}
    verifier = Verifier(surface={b.id: b.surface for b in briefs.values()})
    for v in verifier.check(triples, as_entities(briefs)):
        if v.triple_id in out:
            text = v.message + (f" ({v.detail})" if v.detail else "")
            out[v.triple_id].append(Reason(code=v.rule, text=text,
                                           weight=_weight(v.rule, v.severity)))
    for t in triples:
        reasons = out[t.id]
        if t.confidence < LOW_CONFIDENCE:
            reasons.append(Reason(code="low_confidence", text=f"confidence {t.confidence:.2f}",
                                  weight=round(2 * (LOW_CONFIDENCE - t.confidence)
                                               / LOW_CONFIDENCE + 1, 3)))
        if t.method.startswith("llm"):
            reasons.append(Reason(code="llm", text=f"extracted by a language model "
                                  f"({t.method})", weight=1.0))
        if len({(e.chunk_id, e.start) for e in t.evidence}) <= 1:
            reasons.append(Reason(code="single_evidence", text="one piece of evidence",
                                  weight=1.0))
        if t.level > 0:
            reasons.append(Reason(code="grown", text=f"added by the SAC-KG loop at level "
                                  f"{t.level}", weight=0.5))
    return out


def statement_items(triples: Sequence[Triple], entities: Mapping[str, EntityBrief],
                    flt: QueueFilter) -> list[QueueItem]:
    reasons = statement_reasons(triples, entities)
    items = []
    needle = (flt.entity or "").lower()
    for t in triples:
        head, tail = entities.get(t.head), entities.get(t.tail)
        names = (head.name if head else t.head, tail.name if tail else t.tail)
        docs = sorted({e.document_id for e in t.evidence})
        if (flt.state is not None and t.review is not flt.state) \
                or (flt.layer is not None and t.layer is not flt.layer) \
                or (flt.predicate is not None and t.predicate is not flt.predicate) \
                or (flt.document is not None and flt.document not in docs) \
                or (needle and needle not in (t.head.lower(), t.tail.lower())
                    and not any(needle in n.lower() for n in names)):
            continue
        why = reasons[t.id]
        items.append(QueueItem(
            kind=ReviewTarget.STATEMENT, id=t.id, priority=round(sum(r.weight for r in why), 3),
            reasons=why, state=t.review, layer=t.layer,
            label=f"{names[0]} —{t.predicate.value}→ {names[1]}", predicate=t.predicate,
            head=t.head, tail=t.tail, documents=docs))
    return items


def merge_items(links: Sequence[Link], entities: Mapping[str, EntityBrief], force: InForce,
                min_cosine: float, flt: QueueFilter) -> list[QueueItem]:
    """Merges to review. They are not filtered by document (a merge is about two
    entities, each mentioned in many): a document filter lists statements only."""
    items = []
    needle = (flt.entity or "").lower()
    for link in links:
        source, target = entities.get(link.source), entities.get(link.target)
        if source is None or target is None:
            continue
        decided = force.merges.get(link.source)
        state = (ReviewState.ACCEPTED if decided is not None
                 and decided.action is ReviewAction.CONFIRM else ReviewState.PROPOSED)
        if (flt.state is not None and state is not flt.state) \
                or (flt.layer is not None and source.layer is not flt.layer) \
                or flt.predicate is not None or flt.document is not None \
                or (needle and needle not in (link.source.lower(), link.target.lower())
                    and needle not in source.name.lower() and needle not in target.name.lower()):
            continue
        margin = link.score - min_cosine
        why = [Reason(code="merge", text=f"merged by {link.method} at score {link.score:.3f}",
                      weight=1.0)]
        if margin < MERGE_MARGIN:
            why.append(Reason(code="near_threshold",
                              text=f"{margin:+.3f} from the merge threshold {min_cosine:.2f}",
                              weight=round(3 * (1 - max(margin, 0.0) / MERGE_MARGIN), 3)))
        items.append(QueueItem(
            kind=ReviewTarget.MERGE, id=link.source, priority=round(sum(r.weight for r in why), 3),
            reasons=why, state=state, layer=source.layer,
            label=f"{source.name} → merged into {target.name}", head=link.source,
            tail=link.target))
    return items


def ordered(items: Sequence[QueueItem]) -> list[QueueItem]:
    """Highest priority first; ties by kind and id, so pages are stable."""
    return sorted(items, key=lambda i: (-i.priority, i.kind.value, i.id))
