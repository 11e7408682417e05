"""The context of a question: what it gathers from the graph before any chunk
is ranked.

- :func:`gather` (modes ``local``, ``hybrid``, ``u-retrieval``): seed entities
  (those normalised to the question's concepts, plus the most similar entities
  by content), followed across layers (``reference_of``) and merged names
  (``same_as``); their triples, and one hop further along an asked-for
  predicate ("first-line treatment for diabetes, and its risks" reaches
  metformin, then metformin's adverse effects).
- :func:`traversal_context` (mode ``traverse``): topic entities, then KGCaRe's
  depth-limited traversal (:mod:`medkg.retrieval.traverse`).

A :class:`Context` says how relevant each gathered triple is to the question.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from spacy.tokens import Doc

from medkg.config import RetrievalConfig
from medkg.linking.embeddings import Embedder, Matrix
from medkg.linking.vectors import VectorIndex
from medkg.model import EntityBrief, Predicate, Triple
from medkg.ontology.index import ConceptIndex
from medkg.retrieval.graphread import GraphReader
from medkg.retrieval.intent import class_word, question_predicates
from medkg.retrieval.traverse import Guide, Traversal, topic_entities, traverse

SUBWORD_MIN = 0.8  # traverse: n-gram similarity a question span needs to a concept's name
SUBWORD_WORDS = 32  # traverse: question words tried for subword matches


@dataclass
class Context:
    """What one question has gathered from the graph.

    ``direct``: triples of an asked-for predicate that touch a question entity
    ("what treats diabetes" -> metformin treats diabetes). ``second``: triples
    of a *different* asked-for predicate that touch an entity found by a direct
    triple ("... and what are its risks" -> metformin causes lactic acidosis).
    """

    entities: dict[str, EntityBrief]
    question_entities: set[str]
    intents: set[Predicate]
    triples: list[Triple]
    paths: dict[str, float] = field(default_factory=dict)  # traverse: triple -> path score
    direct: set[str] = field(default_factory=set)
    second: set[str] = field(default_factory=set)
    focus: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        q = self.question_entities
        direct = [t for t in self.triples if t.predicate in self.intents and {t.head, t.tail} & q]
        self.direct = {t.id for t in direct}
        self.focus = set(q) | {e for t in direct for e in (t.head, t.tail)}
        # A traversal's paths are the focus: the entities they reach answer the question.
        self.focus |= {e for t in self.triples if t.id in self.paths for e in (t.head, t.tail)}
        for t in self.triples:
            if t.id in self.direct or t.predicate not in self.intents:
                continue
            if any(d.predicate != t.predicate and ({t.head, t.tail} & {d.head, d.tail}) - q
                   for d in direct):
                self.second.add(t.id)

    def relevance(self, t: Triple) -> float:
        return self.standing(t) + 0.1 * t.confidence

    def standing(self, t: Triple) -> float:
        """How relevant ``t`` is by what it says (its predicate, its ends, its
        path, its polarity), before its confidence breaks ties."""
        if t.id in self.direct:
            base = 2.0
        elif t.id in self.second:
            base = 1.5
        else:
            ends = (t.head, t.tail)
            base = 0.5 * sum(1 for e in ends if e in self.question_entities) + (
                0.5 if t.predicate in self.intents else 0.0)
        if t.id in self.paths:  # on a traversal path: as relevant as its path
            base = max(base, 1.0 + self.paths[t.id])
        return base - (0.5 if t.qualifiers.negated else 0.0)


def gather(question: str, q_concepts: list[str], qvec: Matrix, graph: GraphReader,
           entity_index: VectorIndex, config: RetrievalConfig) -> Context:
    """The graph around the question's entities (see the module docstring)."""
    by_concept = graph.of_concepts(q_concepts)
    q_entities = {e.id for e in by_concept}
    seeds = set(q_entities)
    seeds.update(eid for eid, _ in entity_index.search(qvec, config.top_entities))
    # Across layers (reference_of) and across merged names (same_as, both ways).
    graph.link_all(sorted(seeds))
    for eid in list(seeds):
        seeds.update(graph.same_thing(eid))
    intents = question_predicates(question)
    # What a curator rejected, or replaced by an edit, is not used (t.in_force).
    triples = {t.id: t for t in graph.store.triples(entity_ids=sorted(seeds)) if t.in_force}
    # Entities one asked-for hop from the question's own bring their triples too.
    hop = {e for t in triples.values() if t.predicate in intents
           and {t.head, t.tail} & q_entities for e in (t.head, t.tail)}
    for t in graph.store.triples(entity_ids=sorted(hop - seeds)):
        if t.in_force:
            triples.setdefault(t.id, t)
    reached = seeds | {e for t in triples.values() for e in (t.head, t.tail)}
    return Context(graph.fetch(sorted(reached)), q_entities, intents, list(triples.values()))


def traversal_context(question: str, doc: Doc, qvec: Matrix, graph: GraphReader,
                      entity_index: VectorIndex, embedder: Embedder, guide: Guide,
                      concepts: ConceptIndex | None, config: RetrievalConfig
                      ) -> tuple[Context, Traversal]:
    """The traverse mode's context: topic entities (the entities of the concepts the
    question's entity spans are normalised to; for a span no entity matched, a
    partial match: by character n-grams against the vocabulary's names, by
    vector against the entities; the whole question only when nothing it names
    matched), then the traversal; the triples it kept, and every triple it read
    of the entities on its paths (their qualifiers and harms are the answer's
    conditions). ``doc``: the question parsed."""
    # "which genes ...": a kind of answer, not a topic to start from
    topical = [e for e in doc.ents if not class_word(e.text)]
    named: list[tuple[str, str]] = []
    unmatched: list[str] = []
    for ent in topical:
        found = graph.of_concepts([ent.kb_id_]) if ent.kb_id_ else []
        named += [(e.id, f"named '{ent.text}' ({ent.kb_id_})") for e in found]
        if not found:
            unmatched.append(ent.text)
    subword = [(e.id, f"'{text}' matches {e.name} by character n-grams ({score:.2f})")
               for text, concept, score in subword_concepts(doc, concepts)
               for e in graph.of_concepts([concept])]
    topic = topic_entities(named, subword, list(dict.fromkeys(unmatched)), qvec,
                           entity_index.search, embedder, config)
    traversal = traverse(question, qvec, [t.id for t in topic], graph, guide, config)
    traversal.why = {t.id: t.because for t in topic}
    on_path = set(traversal.paths)
    triples = dict(traversal.triples)
    for t in traversal.seen.values():
        if t.head in on_path or t.tail in on_path:
            triples.setdefault(t.id, t)
    reached = on_path | {e for t in triples.values() for e in (t.head, t.tail)}
    ctx = Context(graph.fetch(sorted(reached)), set(traversal.topic),
                  question_predicates(question), list(triples.values()),
                  paths=dict(traversal.scores))
    return ctx, traversal


def subword_concepts(doc: Doc, concepts: ConceptIndex | None
                     ) -> list[tuple[str, str, float]]:
    """Concepts whose names match a run of one to three content words of the
    question by character n-grams ("lisinoprill", "beta blockers"), where the
    pipeline found no concept: partial matching, for the first hop only. Each as
    (the words, the concept, the match's score)."""
    if concepts is None:
        return []
    found = {t.i for e in doc.ents if e.kb_id_ for t in e}
    # The first SUBWORD_WORDS content words: a long question costs no more.
    words = [t for t in doc if t.is_alpha and not t.is_stop and len(t.text) > 2]
    words = words[:SUBWORD_WORDS]
    out: list[tuple[str, str, float]] = []
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            run = words[i:i + n]
            if (run[-1].i - run[0].i != n - 1 or any(t.i in found for t in run)
                    or class_word(doc[run[0].i:run[-1].i + 1].text)):
                continue
            text = doc[run[0].i:run[-1].i + 1].text
            best = concepts.search(text, 1)
            if best and best[0].score >= SUBWORD_MIN:
                out.append((text, best[0].concept.id, best[0].score))
                found |= {t.i for t in run}
    return out
