"""Depth-limited traversal from a question's topic entities (KGCaRe).

1. Topic entities, only from what the question names: the entities of the
   concepts its entity spans are normalised to; for a span with no such
   entity, a partial match (character n-grams against the vocabulary's names,
   then the entity nearest to the span, above ``retrieval.traverse_partial_min``);
   the entity nearest to the whole question only when nothing it names
   matched. Each says why it was taken (``TopicEntity.because``; ``--explain``).
   Deeper hops follow exact ids.
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
go to the trace (``medkg ask --explain``). Its evidence is ranked by how
likely it holds what the question asks for (``Guide.evidence``).

The guide is a Protocol. The builtin one (:mod:`medkg.retrieval.guide`)
scores each candidate triple by two logistic models over ``guide.FEATURES``
(how similar its sentence is to the question, whether its predicate is one
asked for at that hop, whether it reaches the kind of entity asked for, its
depth, how many documents state it, its confidence, how often its far end is
mentioned, whether it joins two topic entities, its polarity): ``keep`` (the
triple lies on a chain to an answer: pruning) and ``evidence`` (its evidence
names an answer: ranking). Both are fitted on the training splits' two-hop
questions of both question sets by ``training/train_traverse.py``. The LLM
guide asks the chat model (``prune_triples``, ``clue_entities`` prompts) and
ranks evidence as the builtin one does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from medkg.config import RetrievalConfig
from medkg.linking.embeddings import Embedder, Matrix
from medkg.model import EntityBrief, Predicate, Triple

PREDICATE_WORDS: dict[Predicate, str] = {
    Predicate.TREATS: "treats", Predicate.CAUSES: "causes",
    Predicate.HAS_ADVERSE_EFFECT: "has the adverse effect",
    Predicate.PREVENTS: "prevents", Predicate.CONTRAINDICATED_IN: "is contraindicated in",
    Predicate.HAS_SYMPTOM: "has the symptom", Predicate.DIAGNOSES: "diagnoses",
    Predicate.LOCATION_OF: "is the location of", Predicate.IS_A: "is a",
    Predicate.ASSOCIATED_WITH: "is associated with", Predicate.INTERACTS_WITH: "interacts with",
}
MAX_CANDIDATES = 400  # triples scored per hop (most confident first): a hub cannot stall a hop


def triple_text(t: Triple, entities: dict[str, EntityBrief]) -> str:
    """A triple as a short sentence: what its relevance to a question is judged on."""
    head = entities[t.head].name if t.head in entities else t.head
    tail = entities[t.tail].name if t.tail in entities else t.tail
    text = f"{head} {PREDICATE_WORDS[t.predicate]} {tail}"
    return f"not: {text}" if t.qualifiers.negated else text


@dataclass(frozen=True)
class Candidate:
    """A triple one hop from the frontier: the entity it leaves from and reaches, the
    predicate of the hop that reached the frontier entity (``None`` at depth 1),
    the hop's depth and whether it reaches another topic entity."""

    triple: Triple
    source: str
    target: str
    came_by: Predicate | None
    depth: int = 1
    to_topic: bool = False


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
              entities: dict[str, EntityBrief]) -> list[float]:
        """How relevant each candidate is (pruning: the beam keeps the best)."""
        ...

    def evidence(self, question: str, qvec: Matrix, candidates: Sequence[Candidate],
                 entities: dict[str, EntityBrief]) -> list[float]:
        """How likely each kept candidate's evidence names what the question asks
        for (ranking its chunks)."""
        ...

    def clues(self, question: str, qvec: Matrix, candidates: Sequence[EntityBrief],
              graph: TraversalGraph, n: int) -> list[str]: ...


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
    # kept triple -> how likely its evidence names what is asked for (Guide.evidence)
    ranks: dict[str, float] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    why: dict[str, str] = field(default_factory=dict)  # topic entity -> why it was taken

    def ranked_paths(self) -> list[Path]:
        """The best path through each kept triple, best first."""
        return sorted(self.triple_paths.values(),
                      key=lambda p: (-p.score, len(p.hops), p.end, p.hops[-1].triple))


@dataclass(frozen=True)
class TopicEntity:
    """An entity a traversal starts from, and why: ``named`` (an entity of a concept
    the question's span is normalised to), ``subword`` (the span's words match a
    concept's name by character n-grams), ``similar`` (the entity nearest to a span
    nothing else matched), ``question`` (nearest to the whole question: nothing it
    names matched)."""

    id: str
    how: str
    because: str


def topic_entities(named: Sequence[tuple[str, str]], subword: Sequence[tuple[str, str]],
                   unmatched: Sequence[str], qvec: Matrix, search: _Search,
                   embedder: Embedder, config: RetrievalConfig) -> list[TopicEntity]:
    """The question's topic entities (see the module docstring). ``named`` and
    ``subword``: (entity id, why); ``unmatched``: the entity spans of the question
    no entity of the graph matched by concept."""
    out: dict[str, TopicEntity] = {}
    for eid, why in named:
        out.setdefault(eid, TopicEntity(eid, "named", why))
    for eid, why in subword:
        out.setdefault(eid, TopicEntity(eid, "subword", why))
    if unmatched:
        for span, vec in zip(unmatched, embedder.embed(list(unmatched)), strict=True):
            for eid, score in search(vec, 1):
                if score >= config.traverse_partial_min:
                    out.setdefault(eid, TopicEntity(
                        eid, "similar", f"nearest to '{span}' (cosine {score:.2f})"))
    if not out:
        for eid, score in search(qvec, 1):
            if score >= config.traverse_partial_min:
                out[eid] = TopicEntity(eid, "question", f"nearest to the question (cosine "
                                       f"{score:.2f}): nothing it names matched")
    return list(out.values())


class _Search(Protocol):
    def __call__(self, query: Matrix, k: int) -> list[tuple[str, float]]: ...


def traverse(question: str, qvec: Matrix, topic: Sequence[str], graph: TraversalGraph,
             guide: Guide, config: RetrievalConfig) -> Traversal:
    """The traversal from ``topic`` (see the module's docstring)."""
    out = Traversal(list(topic))
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
        candidates = [_candidate(t, in_frontier, out, depth, start)
                      for t in triples[:MAX_CANDIDATES]]
        if not candidates:
            out.steps.append(Step(depth, len(frontier), 0, 0, stop="nothing new to follow"))
            break
        entities = graph.briefs({e for c in candidates for e in (c.source, c.target)})
        scores = guide.score(question, qvec, candidates, entities)
        ranked = sorted(zip(scores, candidates, strict=True),
                        key=lambda x: (-x[0], x[1].triple.id))
        kept = [(s, c) for s, c in ranked[: config.traverse_beam]
                if s >= config.traverse_min_keep]
        new: list[str] = []
        chosen = [c for _, c in kept]
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
                chosen.append(c)
                new.append(eid)
        for c, p in zip(chosen, guide.evidence(question, qvec, chosen, entities), strict=True):
            out.ranks[c.triple.id] = max(out.ranks.get(c.triple.id, 0.0), p)
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


def _candidate(t: Triple, frontier: set[str], out: Traversal, depth: int,
               topic: set[str]) -> Candidate:
    source = t.head if t.head in frontier else t.tail
    target = t.tail if source == t.head else t.head
    base = out.paths.get(source)
    came_by = (out.triples[base.hops[-1].triple].predicate if base is not None and base.hops
               and base.hops[-1].triple in out.triples else None)
    return Candidate(t, source, target, came_by, depth, target in topic)


def _extend(out: Traversal, c: Candidate, depth: int, score: float) -> None:
    t = c.triple
    out.triples[t.id] = t
    base = out.paths.get(c.source, Path(()))
    path = Path((*base.hops, Hop(t.id, c.source, c.target, depth, round(score, 4))))
    out.scores[t.id] = max(out.scores.get(t.id, float("-inf")), path.score)
    if t.id not in out.triple_paths or path.score > out.triple_paths[t.id].score:
        out.triple_paths[t.id] = path
    known = out.paths.get(c.target)
    if known is None or (known.hops and path.score > known.score):
        out.paths[c.target] = path


def ranked_chunks(traversal: Traversal, mentions: Mapping[str, Sequence[str]]) -> list[str]:
    """The chunks a traversal puts forward: the evidence of its kept triples, the
    most likely to name what the question asks for first (``Traversal.ranks``),
    ties by the better path; then the chunks that mention a topic entity."""
    best: dict[str, tuple[float, float]] = {}
    for tid, t in traversal.triples.items():
        key = (traversal.ranks.get(tid, 0.0), traversal.scores.get(tid, 0.0))
        for ev in t.evidence:
            if ev.chunk_id not in best or key > best[ev.chunk_id]:
                best[ev.chunk_id] = key
    order = sorted(best, key=lambda c: (-best[c][0], -best[c][1], c))
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
