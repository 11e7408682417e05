"""Depth-limited traversal from a question's topic entities (KGCaRe).

1. Topic entities: those normalised to the question's concepts, plus, at
   depth 1 only, partial matches: the entities nearest to each entity span of
   the question and to the whole question (the entity vector index), above
   ``retrieval.traverse_partial_min``. Deeper hops follow exact ids.
2. Breadth-limited hops, up to ``retrieval.max_depth``: the in-force triples
   of the frontier are scored for relevance to the question by a guide and
   pruned to the ``retrieval.traverse_beam`` best; their far ends, and the
   entities linked to them by ``same_as`` / ``reference_of`` (across layers
   and merged names), are the next frontier. ``definition_of`` links join
   entities through the vocabulary: entities defined by the same concept.
3. Clue entities: when a hop keeps fewer than ``retrieval.traverse_min_kept``
   triples relevant enough, the guide picks up to ``retrieval.traverse_clues``
   entities among the frontier's unexplored neighbours, and the search goes
   on from them.
4. Termination: the depth limit, a frontier with nothing new, or
   ``retrieval.traverse_max_triples`` kept triples (the context suffices).

Every kept triple lies on a path from a topic entity; the paths, best first,
go to the trace (``medkg ask --explain``). The guide is a Protocol: the
builtin one scores by embedding similarity and the asked-for predicates; the
LLM one asks the chat model (``prune_triples``, ``clue_entities`` prompts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from medkg.config import RetrievalConfig
from medkg.linking.embeddings import Embedder, Matrix
from medkg.model import EntityBrief, Predicate, Triple
from medkg.retrieval.intent import answer_groups, question_predicates

PREDICATE_WORDS: dict[Predicate, str] = {
    Predicate.TREATS: "treats", Predicate.CAUSES: "causes",
    Predicate.HAS_ADVERSE_EFFECT: "has the adverse effect",
    Predicate.PREVENTS: "prevents", Predicate.CONTRAINDICATED_IN: "is contraindicated in",
    Predicate.HAS_SYMPTOM: "has the symptom", Predicate.DIAGNOSES: "diagnoses",
    Predicate.LOCATION_OF: "is the location of", Predicate.IS_A: "is a",
    Predicate.ASSOCIATED_WITH: "is associated with", Predicate.INTERACTS_WITH: "interacts with",
}
INTENT_BONUS = 0.25  # a triple of a predicate the question asks about
TYPE_BONUS = 0.15  # a triple reaching an entity of the type the question asks for
MAX_CANDIDATES = 400  # triples scored per hop (most confident first): a hub cannot stall a hop


def triple_text(t: Triple, entities: dict[str, EntityBrief]) -> str:
    """A triple as a short sentence: what its relevance to a question is judged on."""
    head = entities[t.head].name if t.head in entities else t.head
    tail = entities[t.tail].name if t.tail in entities else t.tail
    text = f"{head} {PREDICATE_WORDS[t.predicate]} {tail}"
    return f"not: {text}" if t.qualifiers.negated else text


# Predicates one question word can ask for at once ("cause": an adverse effect or a
# cause) count as one relation of the chain.
_GROUP: dict[Predicate, Predicate] = {Predicate.HAS_ADVERSE_EFFECT: Predicate.CAUSES,
                                      Predicate.CONTRAINDICATED_IN: Predicate.CAUSES}


def hops_needed(intents: Iterable[Predicate]) -> int:
    """How many relations a question chains: the distinct kinds it asks for ("the
    drugs that treat the conditions X can cause": causes, then treats: 2)."""
    return max(1, len({_GROUP.get(p, p) for p in intents}))


@dataclass(frozen=True)
class Candidate:
    """A triple one hop from the frontier: the entity it leaves from and reaches, and
    the predicate of the hop that reached the frontier entity (``None`` at depth 1)."""

    triple: Triple
    source: str
    target: str
    came_by: Predicate | None


class TraversalGraph(Protocol):
    """What a traversal reads of the graph (the retriever provides it, with caches)."""

    def triples_of(self, entity_ids: Sequence[str]) -> list[Triple]: ...
    def briefs(self, entity_ids: Iterable[str]) -> dict[str, EntityBrief]: ...
    def linked(self, entity_id: str) -> set[str]: ...
    def entity_vector(self, entity_id: str) -> Matrix | None: ...


class Guide(Protocol):
    """Judges triples and picks clue entities for one question."""

    name: str

    def score(self, question: str, qvec: Matrix, candidates: Sequence[Candidate],
              entities: dict[str, EntityBrief]) -> list[float]: ...

    def clues(self, question: str, qvec: Matrix, candidates: Sequence[EntityBrief],
              graph: TraversalGraph, n: int) -> list[str]: ...


class BuiltinGuide:
    """Relevance = cosine of the triple's sentence to the question, plus
    ``INTENT_BONUS`` when its predicate is one the question asks about (past depth
    1, only a predicate *other* than the one the path arrived by, when the question
    asks for more than one: "drugs that treat the conditions X causes" is causes,
    then treats), plus ``TYPE_BONUS`` when it reaches an entity of the type the
    question asks for ("which drugs"); clue entities = the candidates whose
    vectors are nearest to the question."""

    name = "builtin"

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    def score(self, question: str, qvec: Matrix, candidates: Sequence[Candidate],
              entities: dict[str, EntityBrief]) -> list[float]:
        if not candidates:
            return []
        intents = question_predicates(question)
        wanted = answer_groups(question)
        vectors = self._embedder.embed([triple_text(c.triple, entities) for c in candidates])
        sims = vectors @ qvec
        out = []
        for sim, c in zip(sims, candidates, strict=True):
            p = c.triple.predicate
            asked = p in intents and (c.came_by is None or p != c.came_by or len(intents) < 2)
            typed = c.target in entities and entities[c.target].type in wanted
            out.append(float(sim) + (INTENT_BONUS if asked else 0.0)
                       + (TYPE_BONUS if typed else 0.0))
        return out

    def clues(self, question: str, qvec: Matrix, candidates: Sequence[EntityBrief],
              graph: TraversalGraph, n: int) -> list[str]:
        scored = []
        for e in candidates:
            vec = graph.entity_vector(e.id)
            if vec is not None:
                scored.append((float(vec @ qvec), e.id))
        return [eid for _, eid in sorted(scored, key=lambda x: (-x[0], x[1]))[:n]]


@dataclass(frozen=True)
class Hop:
    triple: str
    source: str  # the entity the hop left from
    target: str
    depth: int
    score: float


@dataclass(frozen=True)
class Path:
    hops: tuple[Hop, ...]

    @property
    def score(self) -> float:
        return sum(h.score for h in self.hops) / len(self.hops) if self.hops else 0.0

    @property
    def end(self) -> str:
        return self.hops[-1].target


@dataclass(frozen=True)
class Step:
    """One hop of the search, for the trace."""

    depth: int
    frontier: int
    candidates: int
    kept: int
    clues: tuple[str, ...] = ()
    stop: str = ""


@dataclass
class Traversal:
    topic: list[str]
    triples: dict[str, Triple] = field(default_factory=dict)  # kept, on some path
    seen: dict[str, Triple] = field(default_factory=dict)  # every triple read
    paths: dict[str, Path] = field(default_factory=dict)  # entity -> its best path
    triple_paths: dict[str, Path] = field(default_factory=dict)  # kept triple -> best path
    scores: dict[str, float] = field(default_factory=dict)  # kept triple -> its path's score
    # kept triple -> (asked-for predicates its best path covers, minus its depth, score)
    ranks: dict[str, tuple[int, int, float]] = field(default_factory=dict)
    intents: frozenset[Predicate] = frozenset()
    hops_needed: int = 1  # the relations the question chains (see ``hops_needed``)
    steps: list[Step] = field(default_factory=list)

    def ranked_paths(self) -> list[Path]:
        """The best path through each kept triple, best first."""
        return sorted(self.triple_paths.values(),
                      key=lambda p: (-p.score, len(p.hops), p.end, p.hops[-1].triple))


def topic_entities(concept_entities: Iterable[str], spans: Sequence[str], qvec: Matrix,
                   search: _Search, embedder: Embedder, config: RetrievalConfig) -> list[str]:
    """The question's own entities and its partial matches (depth 1 only)."""
    topic = list(dict.fromkeys(concept_entities))
    queries = [qvec]
    if spans:
        queries += list(embedder.embed(list(spans)))
    for q in queries:
        for eid, score in search(q, 3):
            if score >= config.traverse_partial_min and eid not in topic:
                topic.append(eid)
    return topic


class _Search(Protocol):
    def __call__(self, query: Matrix, k: int) -> list[tuple[str, float]]: ...


def traverse(question: str, qvec: Matrix, topic: Sequence[str], graph: TraversalGraph,
             guide: Guide, config: RetrievalConfig) -> Traversal:
    """The traversal from ``topic`` (see the module's docstring)."""
    intents = frozenset(question_predicates(question))
    out = Traversal(list(topic), intents=intents,
                    hops_needed=min(config.max_depth, hops_needed(intents)))
    start = set(topic)
    for eid in list(topic):
        start |= graph.linked(eid)
    for eid in start:
        out.paths.setdefault(eid, Path(()))
    frontier = sorted(start)
    visited = set(start)
    for depth in range(1, config.max_depth + 1):
        triples = [t for t in graph.triples_of(frontier)
                   if t.in_force and t.id not in out.triples]
        for t in triples:
            out.seen.setdefault(t.id, t)
        triples.sort(key=lambda t: (-t.confidence, t.id))
        in_frontier = set(frontier)
        candidates = [_candidate(t, in_frontier, out) for t in triples[:MAX_CANDIDATES]]
        if not candidates:
            out.steps.append(Step(depth, len(frontier), 0, 0, stop="nothing new to follow"))
            break
        entities = graph.briefs({e for c in candidates for e in (c.source, c.target)})
        scores = guide.score(question, qvec, candidates, entities)
        ranked = sorted(zip(scores, candidates, strict=True),
                        key=lambda x: (-x[0], x[1].triple.id))
        kept = [(s, c) for s, c in ranked[: config.traverse_beam]
                if s >= config.traverse_min_score]
        new: list[str] = []
        for s, c in kept:
            _extend(out, c, depth, s)
            # A negated triple is kept (it is a condition) but not followed: it says
            # the two are *not* related.
            if c.target not in visited and not c.triple.qualifiers.negated:
                new.append(c.target)
        clues: list[str] = []
        if len(kept) < config.traverse_min_kept and config.traverse_clues:
            kept_ids = {c.triple.id for _, c in kept}
            neighbours = {c.target: (s, c) for s, c in ranked
                          if c.triple.id not in kept_ids and c.target not in visited
                          and not c.triple.qualifiers.negated}
            pool = [entities[e] for e in neighbours if e in entities]
            clues = guide.clues(question, qvec, pool, graph, config.traverse_clues)
            for eid in clues:
                s, c = neighbours[eid]
                _extend(out, c, depth, s)
                new.append(eid)
        for eid in list(new):
            for other in graph.linked(eid):
                if other not in visited and other not in new:
                    new.append(other)
                    out.paths.setdefault(other, out.paths[eid])
        step = Step(depth, len(frontier), len(candidates), len(kept), tuple(clues))
        visited |= set(new)
        frontier = sorted(set(new))
        if len(out.triples) >= config.traverse_max_triples:
            out.steps.append(Step(**{**step.__dict__, "stop": "the context suffices"}))
            break
        if not frontier:
            out.steps.append(Step(**{**step.__dict__, "stop": "nothing new to follow"}))
            break
        if depth == config.max_depth:
            step = Step(**{**step.__dict__, "stop": "depth limit"})
        out.steps.append(step)
    return out


def _candidate(t: Triple, frontier: set[str], out: Traversal) -> Candidate:
    source = t.head if t.head in frontier else t.tail
    target = t.tail if source == t.head else t.head
    base = out.paths.get(source)
    came_by = (out.triples[base.hops[-1].triple].predicate if base is not None and base.hops
               and base.hops[-1].triple in out.triples else None)
    return Candidate(t, source, target, came_by)


def _extend(out: Traversal, c: Candidate, depth: int, score: float) -> None:
    t = c.triple
    out.triples[t.id] = t
    base = out.paths.get(c.source, Path(()))
    path = Path((*base.hops, Hop(t.id, c.source, c.target, depth, round(score, 4))))
    out.scores[t.id] = max(out.scores.get(t.id, float("-inf")), path.score)
    if t.id not in out.triple_paths or path.score > out.triple_paths[t.id].score:
        out.triple_paths[t.id] = path
    covered = {_GROUP.get(out.triples[h.triple].predicate, out.triples[h.triple].predicate)
               for h in path.hops if out.triples[h.triple].predicate in out.intents}
    rank = (len(covered), -abs(len(path.hops) - out.hops_needed), path.score)
    out.ranks[t.id] = max(out.ranks.get(t.id, rank), rank)
    known = out.paths.get(c.target)
    if known is None or (known.hops and path.score > known.score):
        out.paths[c.target] = path


def ranked_chunks(traversal: Traversal, mentions: Mapping[str, Sequence[str]]) -> list[str]:
    """The chunks a traversal puts forward: the evidence of its kept triples, those
    on the most complete path first (the path that covers the most of the
    predicates the question asks for: "drugs that treat what X causes" is complete
    with causes, then treats; the complete path's last hop holds what the question
    could not name), the shorter path among equally complete ones, then the better
    scored; then the chunks that mention a topic entity."""
    best: dict[str, tuple[int, int, float]] = {}
    for tid, t in traversal.triples.items():
        key = traversal.ranks.get(tid, (0, -1, 0.0))
        for ev in t.evidence:
            if ev.chunk_id not in best or key > best[ev.chunk_id]:
                best[ev.chunk_id] = key
    order = sorted(best, key=lambda c: (tuple(-x for x in best[c]), c))
    for eid in traversal.topic:
        order += [c for c in mentions.get(eid, ()) if c not in best]
    return list(dict.fromkeys(order))


def path_lines(traversal: Traversal, triples: dict[str, Triple],
               entities: dict[str, EntityBrief], limit: int = 10) -> list[str]:
    """The best paths as text: ``a —treats→ b —causes→ c (score 0.61)``."""
    lines: list[str] = []
    for path in traversal.ranked_paths():
        parts = [_name(entities, path.hops[0].source)]
        for h in path.hops:
            t = triples[h.triple]
            arrow = (f"—{t.predicate.value}→" if h.source == t.head
                     else f"←{t.predicate.value}—")
            neg = " (negated)" if t.qualifiers.negated else ""
            parts.append(f"{arrow} {_name(entities, h.target)}{neg}")
        line = " ".join(parts) + f"  (score {path.score:.2f}, depth {len(path.hops)})"
        if line not in lines:  # the same statement in both layers reads the same
            lines.append(line)
        if len(lines) == limit:
            break
    return lines


def _name(entities: dict[str, EntityBrief], eid: str) -> str:
    return entities[eid].name if eid in entities else eid
