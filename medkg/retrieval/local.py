"""Local graph retrieval with an extractive answer (the builtin engine).

1. Find the question's concepts (vocabulary matcher), the predicates its
   wording asks about, and embed it.
2. Seed entities: those normalised to the question's concepts, plus the most
   similar entities by content; follow ``reference_of`` links across layers.
   The focus widens by one hop along triples of the asked-for predicates
   ("first-line treatment for diabetes, and its risks" reaches metformin,
   then metformin's adverse effects).
3. Candidate sentences: the evidence of those triples and the sentences of
   the most similar chunks, ranked by similarity to the question plus the
   relevance of the triples they support.
4. Answer with the best sentences, each a numbered citation whose quote is
   the source text at its offsets; list the facts and the definitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc

from medkg.config import FactsConfig, RetrievalConfig, RetrievalMode
from medkg.errors import NotFoundError, RetrievalError
from medkg.linking.embeddings import Embedder, Matrix
from medkg.linking.vectors import VectorIndex
from medkg.model import (
    Chunk,
    Document,
    EntityBrief,
    Layer,
    LinkKind,
    Predicate,
    Qualifiers,
    Triple,
)
from medkg.ontology.index import ConceptIndex
from medkg.retrieval.answer import (
    Answer,
    AnswerSentence,
    Citation,
    Condition,
    Definition,
    Fact,
    is_heading,
    presents_as_fact,
)
from medkg.retrieval.conditions import conditions
from medkg.retrieval.fusion import candidates, rrf
from medkg.retrieval.intent import (
    about_patients,
    check_question,
    class_word,
    question_predicates,
)
from medkg.retrieval.lexical import LexicalIndex
from medkg.retrieval.trace import Trace, TraversalStep
from medkg.retrieval.traverse import (
    BuiltinGuide,
    Guide,
    Traversal,
    path_lines,
    ranked_chunks,
    topic_entities,
    traverse,
)
from medkg.retrieval.verdict import Named, Passage, Verdict, asks_for_verdict, decide
from medkg.store.base import GraphStore
from medkg.text import sentence_spans

TRIPLE_BONUS = 0.12  # per unit of triple relevance, for a sentence that is its evidence
FACT_FIRST = 1.5  # evidence of a triple this relevant is cited before look-alike sentences
NEAR_DUPLICATE = 0.92  # cosine above which two answer sentences say the same thing
SUBWORD_MIN = 0.8  # traverse: n-gram similarity a question span needs to a concept's name
SUBWORD_WORDS = 32  # traverse: question words tried for subword matches


@dataclass(frozen=True)
class _Sentence:
    chunk: Chunk
    start: int
    end: int
    text: str


@dataclass
class _Candidate:
    sentence: _Sentence
    bonus: float = 0.0  # relevance of the most relevant triple it is evidence for
    triples: set[str] = field(default_factory=set)


@dataclass
class Indexes:
    chunks: VectorIndex
    entities: VectorIndex
    lexical: LexicalIndex | None = None


@dataclass(frozen=True)
class Prepared:
    """A question made ready to answer (``LocalRetriever.prepare``)."""

    question: str
    mode: str
    qvec: Matrix
    concepts: list[str]
    ctx: _Context
    sources: dict[str, list[str]]  # each candidate source's ranking (fused modes)
    single: list[tuple[str, float]] | None  # the one source's hits (single-source modes)
    traversal: Traversal | None = None  # the traverse mode's paths
    # the sources' own scores where they have one (BM25, cosine), by chunk
    scores: dict[str, dict[str, float]] = field(default_factory=dict)

    def rankings(self, tree: Sequence[str] | None = None
                 ) -> tuple[dict[str, list[str]], dict[str, dict[str, float]]]:
        """Each source's ranking and scores as the fusion saw them (a single-source
        mode's one source named after its kind; ``tree``: the tree's vote)."""
        if self.single is not None:
            name = "lexical" if self.mode == "bm25" else "dense"
            return {name: [c for c, _ in self.single]}, {name: dict(self.single)}
        sources = dict(self.sources)
        if tree and "tree" in MODE_SOURCES[self.mode]:
            sources["tree"] = list(tree)
        return sources, self.scores


GRAPH_MODES = frozenset({"local", "hybrid", "u-retrieval"})
# The candidate sources each mode fuses (local keeps its own answer, see ``ask``).
MODE_SOURCES: dict[str, tuple[str, ...]] = {
    "vector": ("dense",), "bm25": ("lexical",), "local": ("dense",),
    "hybrid": ("lexical", "dense", "graph"),
    "u-retrieval": ("lexical", "dense", "graph", "tree"),
    "traverse": ("lexical", "dense", "traverse"),
}


@dataclass
class _Context:
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


class LocalRetriever:
    """Answers questions from the graph and its chunks, citing every sentence."""

    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        indexes: Indexes,
        nlp: Language,
        config: RetrievalConfig,
        guide: Guide | None = None,
        concepts: ConceptIndex | None = None,
        facts: FactsConfig | None = None,
    ) -> None:
        self._store = store
        self._facts_config = facts or FactsConfig()
        self._guide = guide or BuiltinGuide(embedder)
        self._concepts = concepts  # the traverse mode's subword matches of question spans
        self._embedder = embedder
        self._idx = indexes
        self._nlp = nlp
        # each chunk's mentions with their qualifiers, as its citations need them
        self._contexts: dict[str, list[tuple[int, int, str, str, Qualifiers]]] = {}
        self._config = config
        self._chunks: dict[str, Chunk] = {}
        self._entity_cache: dict[str, EntityBrief] = {}
        self._parsed: dict[str, Doc] = {}  # the last few questions, parsed
        self._link_cache: dict[str, set[str]] = {}
        self._documents: dict[str, Document] = {}  # the last few cited documents
        self._definition_cache: dict[str, list[str]] = {}
        self._same_concept_cache: dict[str, set[str]] = {}

    def ask(self, question: str, *, mode: RetrievalMode = "local", qvec: Matrix | None = None,
            tree: Sequence[str] | None = None) -> Answer:
        """Answer the question by ``mode``:

        - ``vector``: chunk vectors alone (plain vector RAG, a baseline);
        - ``bm25``: the lexical index alone (a baseline);
        - ``local``: the entity neighbourhood's triples and the nearest chunks;
        - ``hybrid``: lexical, dense and graph candidates fused (RRF);
        - ``u-retrieval``: as hybrid, with ``tree`` (the chunks the tag tree's
          descent chose, best first) as one more vote: a prior, never a filter;
        - ``traverse``: paths from the question's entities, hop by hop to
          ``retrieval.max_depth`` (:mod:`medkg.retrieval.traverse`), their
          evidence fused with lexical and dense candidates.

        The trace holds the full candidate ranking (``retrieval.candidates``
        chunks) and the chunks the answer drew on."""
        return self.answer(self.prepare(question, mode=mode, qvec=qvec), tree)

    def prepare(self, question: str, *, mode: RetrievalMode = "local",
                qvec: Matrix | None = None) -> Prepared:
        """Everything about a question that does not depend on the tree's prior:
        its concepts, the graph context and each candidate source's ranking. One
        question prepared once can be answered with several priors."""
        question = check_question(question, self._config.max_question_chars)
        if mode not in MODE_SOURCES:
            raise RetrievalError(f"the local retriever does not answer in mode {mode!r}",
                                 hint=f"modes: {', '.join(MODE_SOURCES)}")
        if len(self._idx.chunks) == 0:
            raise RetrievalError(
                "this workspace has no indexed documents",
                hint="run `medkg ingest FILES` and `medkg build` first",
            )
        qvec = self._embedder.embed([question])[0] if qvec is None else qvec
        q_concepts = self.concepts_of(question)
        traversal = None
        if mode == "traverse":
            ctx, traversal = self._traverse(question, q_concepts, qvec)
        elif mode in GRAPH_MODES:
            ctx = self._gather(question, q_concepts, qvec)
        else:
            ctx = _Context({}, set(), set(), [])
        n = self._config.candidates
        if mode in ("vector", "local"):
            single: list[tuple[str, float]] | None = self._idx.chunks.search(qvec, n)
            sources: dict[str, list[str]] = {}
        elif mode == "bm25":
            single, sources = self._lexical().search(question, n), {}
        else:
            single = None
            sources, scores = self._sources(question, qvec, ctx, mode, traversal)
            return Prepared(question, mode, qvec, q_concepts, ctx, sources, single, traversal,
                            scores)
        return Prepared(question, mode, qvec, q_concepts, ctx, sources, single, traversal)

    def fuse(self, prepared: Prepared, tree: Sequence[str] | None = None
             ) -> list[tuple[str, float]]:
        """The candidate ranking of a prepared question: a mode of one source keeps
        that source's order and scores; the others are fused (weighted RRF), the
        tree's chunks (best first) being one more vote where given."""
        if prepared.single is not None:
            return prepared.single
        sources = dict(prepared.sources)
        if tree and "tree" in MODE_SOURCES[prepared.mode]:
            sources["tree"] = list(tree)[: self._config.candidates]
        return rrf(sources, self._config.fusion_weights.by_source(), k=self._config.rrf_k,
                   limit=self._config.candidates)

    def answer(self, prepared: Prepared, tree: Sequence[str] | None = None) -> Answer:
        """The extractive answer of a prepared question, with ``tree`` as the prior."""
        question, mode, qvec, ctx = prepared.question, prepared.mode, prepared.qvec, prepared.ctx
        ranking = self.fuse(prepared, tree)
        draw = [c for c, _ in ranking[: self._config.top_chunks]]
        items = self._candidates(ctx, draw)
        chosen, scores = self._rank(items, qvec, ctx)
        asked = set(prepared.concepts)
        if about_patients(question):
            # Affirmed findings in the patient first; a family history, a negated or
            # a hypothetical mention of what is asked about comes after, flagged.
            apart = [any(q.about_someone_else_or_absent()
                         for _, q in self._qualified(s.chunk, s.start, s.end, asked))
                     for s in chosen]
            chosen = [s for s, a in zip(chosen, apart, strict=True) if not a] + \
                [s for s, a in zip(chosen, apart, strict=True) if a]
        citations: dict[tuple[str, int, int], Citation] = {}
        sentences = []
        for s in chosen:
            cited = self._cite(citations, s.chunk, s.start, s.end)
            sentences.append(AnswerSentence(text=s.text, citation=cited.n, layer=cited.layer))
        verdict = (self._verdict(question, ctx, items, citations)
                   if asks_for_verdict(question) else None)
        facts = self._facts(ctx, citations)
        proposed = self._facts(ctx, citations, proposed=True)
        stated = self._conditions(ctx, facts, citations)
        for c in citations.values():
            c.flags = self.flags(c.chunk_id, c.start, c.end, asked)
        flagged = {c.n: f" ({'; '.join(c.flags)})" for c in citations.values() if c.flags}
        used = _chunk_ranking(items, scores, chosen)
        ranked = [c for c, _ in ranking]
        if mode == "local":  # its own candidates first, then the rest by similarity
            ranked = list(dict.fromkeys([*used, *ranked]))[: self._config.candidates]
        named, missing = self._not_found(question)
        # how close the closest sentence of the answer comes to the question
        closest = (float(np.max(self._embedder.embed([x.text for x in chosen]) @ qvec))
                   if chosen else 0.0)
        answer = Answer(
            question=question,
            mode=mode,
            text=" ".join(f"{x.text} [{x.citation}]{flagged.get(x.citation, '')}"
                          for x in sentences),
            citations=sorted(citations.values(), key=lambda c: c.n),
            facts=facts,
            definitions=self._definitions(prepared.concepts, facts),
            conditions=stated,
            sentences=sentences,
            proposed=proposed,
            verdict=verdict,
            trace=Trace(
                question_concepts=prepared.concepts,
                intents=sorted(p.value for p in ctx.intents),
                focus_entities=sorted(f"{ctx.entities[e].name} ({ctx.entities[e].layer.value})"
                                      for e in ctx.focus if e in ctx.entities),
                triples=[t.id for t in ctx.triples],
                retrieved_chunks=used,
                ranking=ranked,
                candidates=candidates(ranked, dict(ranking), *prepared.rankings(tree)),
                **self._traversal_trace(prepared),
            ),
        )
        answer.trace.closest = round(closest, 4)
        return abstain(answer, named, missing, closest, self._config.min_evidence)

    def parse(self, question: str) -> Doc:
        """The question through the pipeline, once (U-Retrieval needs it twice)."""
        if question not in self._parsed:
            if len(self._parsed) >= 64:
                self._parsed.pop(next(iter(self._parsed)))
            self._parsed[question] = self._nlp(question)
        return self._parsed[question]

    def concepts_of(self, question: str) -> list[str]:
        """The vocabulary concepts the pipeline finds in a question."""
        return list(dict.fromkeys(e.kb_id_ for e in self.parse(question).ents if e.kb_id_))

    def fact_names(self, prepared: Prepared) -> set[str]:
        """The lower-cased names of the entities in the facts an answer would list."""
        ctx = prepared.ctx
        return {ctx.entities[e].name.lower() for t in self._fact_triples(ctx)
                for e in (t.head, t.tail)}

    def _sources(self, question: str, qvec: Matrix, ctx: _Context, mode: str,
                 traversal: Traversal | None = None
                 ) -> tuple[dict[str, list[str]], dict[str, dict[str, float]]]:
        n = self._config.candidates
        wanted = MODE_SOURCES[mode]
        hits = self._idx.chunks.search(qvec, n)
        dense = [c for c, _ in hits]
        sources: dict[str, list[str]] = {}
        scores: dict[str, dict[str, float]] = {}
        if "lexical" in wanted:
            lexical = self._lexical().search(question, n)
            sources["lexical"] = [c for c, _ in lexical]
            scores["lexical"] = dict(lexical)
        if "dense" in wanted:
            sources["dense"], scores["dense"] = dense, dict(hits)
        if "graph" in wanted:
            sources["graph"] = self._graph_chunks(ctx, dense)[:n]
        if "traverse" in wanted and traversal is not None:
            mentions = {e: ctx.entities[e].chunk_ids for e in traversal.topic
                        if e in ctx.entities}
            sources["traverse"] = ranked_chunks(traversal, mentions)[:n]
        return sources, scores

    def _lexical(self) -> LexicalIndex:
        if self._idx.lexical is None:
            raise RetrievalError("this mode needs the lexical index",
                                 hint="open the retriever through the workspace")
        return self._idx.lexical

    def _graph_chunks(self, ctx: _Context, dense: list[str]) -> list[str]:
        """Chunks the graph puts forward: the evidence of the gathered triples, most
        relevant triple first, then the chunks that mention a question entity;
        ties in the order of chunk similarity."""
        best: dict[str, float] = {}
        for t in ctx.triples:
            relevance = ctx.relevance(t)
            for ev in t.evidence:
                best[ev.chunk_id] = max(best.get(ev.chunk_id, float("-inf")), relevance)
        for eid in ctx.question_entities:
            entity = ctx.entities.get(eid)
            for chunk_id in entity.chunk_ids if entity is not None else []:
                best[chunk_id] = max(best.get(chunk_id, float("-inf")), 1.0)
        position = {c: i for i, c in enumerate(dense)}
        return sorted(best, key=lambda c: (-best[c], position.get(c, len(position)), c))

    # -- gathering ------------------------------------------------------------------

    def _fetch(self, ids: Iterable[str]) -> dict[str, EntityBrief]:
        """These entities, read once per retriever (a question reads the entities
        it reaches, never every entity of the workspace, and of each only its
        name, concepts and where it is mentioned)."""
        wanted = list(dict.fromkeys(ids))
        missing = [e for e in wanted if e not in self._entity_cache]
        if missing:
            self._entity_cache.update((b.id, b) for b in self._store.entity_briefs(missing))
        return {e: self._entity_cache[e] for e in wanted if e in self._entity_cache}

    def _link_all(self, entity_ids: Sequence[str]) -> None:
        """:meth:`_linked` of these entities, read in one batched query where the
        store has one (the tables' ``links_of``), not two a seed."""
        missing = [e for e in dict.fromkeys(entity_ids) if e not in self._link_cache]
        batch = getattr(self._store, "links_of", None)
        if not missing or batch is None:
            return
        found: dict[str, set[str]] = {e: set() for e in missing}
        for link in batch(missing, (LinkKind.REFERENCE_OF, LinkKind.SAME_AS)):
            if link.source in found:
                found[link.source].add(link.target)
            if link.target in found and link.kind is LinkKind.SAME_AS:
                found[link.target].add(link.source)
        self._link_cache.update(found)

    def _linked(self, entity_id: str) -> set[str]:
        """Entities one link away that stand for the same thing: the literature
        entity a user entity refers to, and entities merged with it (either way)."""
        if entity_id not in self._link_cache:
            out = {link.target for link in self._store.links(source=entity_id)
                   if link.kind in (LinkKind.REFERENCE_OF, LinkKind.SAME_AS)}
            out |= {link.source for link in self._store.links(target=entity_id,
                                                               kind=LinkKind.SAME_AS)}
            self._link_cache[entity_id] = out
        return self._link_cache[entity_id]

    def _gather(self, question: str, q_concepts: list[str], qvec: Matrix) -> _Context:
        by_concept = self._store.entities_of_concepts(q_concepts) if q_concepts else []
        self._entity_cache.update((e.id, e) for e in by_concept)
        q_entities = {e.id for e in by_concept}
        seeds = set(q_entities)
        seeds.update(eid for eid, _ in self._idx.entities.search(
            qvec, self._config.top_entities))
        # Across layers (reference_of) and across merged names (same_as, both ways).
        self._link_all(sorted(seeds))
        for eid in list(seeds):
            seeds.update(self._linked(eid))
        intents = question_predicates(question)
        # What a curator rejected, or replaced by an edit, is not used (t.in_force).
        triples = {t.id: t for t in self._store.triples(entity_ids=sorted(seeds))
                   if t.in_force}
        # Entities one asked-for hop from the question's own bring their triples too.
        hop = {e for t in triples.values() if t.predicate in intents
               and {t.head, t.tail} & q_entities for e in (t.head, t.tail)}
        for t in self._store.triples(entity_ids=sorted(hop - seeds)):
            if t.in_force:
                triples.setdefault(t.id, t)
        reached = seeds | {e for t in triples.values() for e in (t.head, t.tail)}
        return _Context(self._fetch(sorted(reached)), q_entities, intents,
                        list(triples.values()))

    # -- traverse -------------------------------------------------------------------

    def _traverse(self, question: str, q_concepts: list[str], qvec: Matrix
                  ) -> tuple[_Context, Traversal]:
        """The traverse mode's context: topic entities (by concept; partial matches of
        the question's entity spans: by character n-grams against the vocabulary's
        names, and by vector against the entities), then the traversal; the triples it kept, and
        every triple it read of the entities on its paths (their qualifiers and harms
        are the answer's conditions)."""
        doc = self.parse(question)
        # "which genes ...": a kind of answer, not a topic to start from
        topical = [e for e in doc.ents if not class_word(e.text)]
        spans = list(dict.fromkeys(e.text for e in topical))
        own = [e.kb_id_ for e in topical if e.kb_id_]
        concepts = list(dict.fromkeys([*own, *self._subword_concepts(doc)]))
        by_concept = self._store.entities_of_concepts(concepts) if concepts else []
        self._entity_cache.update((e.id, e) for e in by_concept)
        topic = topic_entities([e.id for e in by_concept], spans, qvec,
                               self._idx.entities.search, self._embedder, self._config)
        traversal = traverse(question, qvec, topic, self, self._guide, self._config)
        on_path = set(traversal.paths)
        triples = dict(traversal.triples)
        for t in traversal.seen.values():
            if t.head in on_path or t.tail in on_path:
                triples.setdefault(t.id, t)
        reached = on_path | {e for t in triples.values() for e in (t.head, t.tail)}
        ctx = _Context(self._fetch(sorted(reached)), set(topic), question_predicates(question),
                       list(triples.values()), paths=dict(traversal.scores))
        return ctx, traversal

    def _subword_concepts(self, doc: Doc) -> list[str]:
        """Concepts whose names match a run of one to three content words of the
        question by character n-grams ("lisinoprill", "beta blockers"), where the
        pipeline found no concept: partial matching, for the first hop only."""
        if self._concepts is None:
            return []
        found = {t.i for e in doc.ents if e.kb_id_ for t in e}
        # The first SUBWORD_WORDS content words: a long question costs no more.
        words = [t for t in doc if t.is_alpha and not t.is_stop and len(t.text) > 2]
        words = words[:SUBWORD_WORDS]
        out: list[str] = []
        for n in (3, 2, 1):
            for i in range(len(words) - n + 1):
                run = words[i:i + n]
                if (run[-1].i - run[0].i != n - 1 or any(t.i in found for t in run)
                        or class_word(doc[run[0].i:run[-1].i + 1].text)):
                    continue
                best = self._concepts.search(doc[run[0].i:run[-1].i + 1].text, 1)
                if best and best[0].score >= SUBWORD_MIN:
                    out.append(best[0].concept.id)
                    found |= {t.i for t in run}
        return out

    def triples_of(self, entity_ids: Sequence[str]) -> list[Triple]:
        return self._store.triples(entity_ids=list(entity_ids)) if entity_ids else []

    def briefs(self, entity_ids: Iterable[str]) -> dict[str, EntityBrief]:
        return self._fetch(sorted(entity_ids))

    def linked(self, entity_id: str) -> set[str]:
        """For a traversal: the entities that stand for the same thing (``same_as``,
        ``reference_of``), and those defined by the same vocabulary concept
        (``definition_of``)."""
        if entity_id not in self._same_concept_cache:
            out = set(self._linked(entity_id))
            for concept in self._defined_by(entity_id):
                out |= {x.source for x in self._store.links(target=concept,
                                                           kind=LinkKind.DEFINITION_OF)}
            out.discard(entity_id)
            self._same_concept_cache[entity_id] = out
        return self._same_concept_cache[entity_id]

    def entity_vector(self, entity_id: str) -> Matrix | None:
        return self._idx.entities.vector(entity_id)

    def _traversal_trace(self, prepared: Prepared) -> dict[str, object]:
        traversal = prepared.traversal
        if traversal is None:
            return {}
        entities = prepared.ctx.entities
        steps = [TraversalStep(depth=s.depth, frontier=s.frontier, candidates=s.candidates,
                               kept=s.kept, stop=s.stop,
                               clues=[entities[c].name if c in entities else c
                                      for c in s.clues])
                 for s in traversal.steps]
        return {"traversal": steps,
                "paths": path_lines(traversal, traversal.triples, entities)}

    def _conditions(self, ctx: _Context, facts: list[Fact],
                    citations: dict[tuple[str, int, int], Citation]) -> list[Condition]:
        """The conditions the answer holds under (:mod:`medkg.retrieval.conditions`)."""
        by_id = {t.id: t for t in ctx.triples}
        used = [by_id[f.triple_id] for f in facts if f.triple_id in by_id]

        def name(eid: str) -> str:
            return ctx.entities[eid].name if eid in ctx.entities else eid

        def cite(t: Triple) -> list[int]:
            return [self._cite(citations, self._chunk(ev.chunk_id), ev.start, ev.end).n
                    for ev in t.evidence[:2]]

        # A caution is never hidden because its statement is below the facts' bar
        # (a missed contraindication costs more than a doubtful one), but it says so.
        pool = [t for t in ctx.triples if t.head in ctx.entities and t.tail in ctx.entities
                and t.in_force]
        stated = conditions(used, pool, ctx.question_entities, name, cite,
                            self._config.max_citations, ctx.intents)
        for cond in stated:
            cond.unreviewed = not any(self._is_fact(by_id[t]) for t in cond.triple_ids
                                      if t in by_id)
        return stated

    def _verdict(self, question: str, ctx: _Context, items: list[_Candidate],
                 citations: dict[tuple[str, int, int], Citation]) -> Verdict | None:
        """The verdict of a "can I give X with Y?" question (:mod:`.verdict`)."""
        low = question.lower()

        def named(group: set[str]) -> list[Named]:
            out = [Named(e, b.name, (b.name, *b.surface[:20]), b.type)
                   for e in ctx.question_entities if (b := ctx.entities.get(e)) is not None
                   and b.type in group]
            # in the order the question names them
            return sorted(out, key=lambda n: min((i for s in n.surfaces
                                                  if (i := low.find(s.lower())) >= 0),
                                                 default=len(low)))

        def cite_triple(t: Triple) -> list[int]:
            return [self._cite(citations, self._chunk(ev.chunk_id), ev.start, ev.end).n
                    for ev in t.evidence[:2]]

        def passage(c: _Candidate) -> Passage:
            s = c.sentence
            return Passage(s.text, s.chunk.text,
                           lambda: self._cite(citations, s.chunk, s.start, s.end).n)

        conditions = named({"DISO", "PHEN"})
        # A condition the question names but no entity carries (the question's "CKD"
        # normalised to another concept than the documents' "chronic kidney
        # disease") is still looked for in the passages, by its vocabulary names.
        for cid in self.concepts_of(question):
            concept = self._concepts.get(cid) if self._concepts is not None else None
            if concept is not None and concept.semantic_group in ("DISO", "PHEN") and not any(
                    concept.name.lower() == c.name.lower() for c in conditions):
                conditions.append(Named(cid, concept.name, tuple(concept.terms()[:20]),
                                        concept.semantic_group))
        return decide(named({"CHEM"}), conditions, ctx.triples, self._is_fact, cite_triple,
                      [passage(c) for c in items])

    def _not_found(self, question: str) -> tuple[list[str], list[str]]:
        """The entities a question names, and those of them no document mentions
        (neither an entity of their concept nor a chunk holding their words).
        Organisms ("patients", "mice") say who, not what: they are not looked for."""
        ents = [e for e in self.parse(question).ents
                if not class_word(e.text) and e.label_ != "LIVB"]
        kb = {_span_name(e.text): e.kb_id_ for e in ents}
        named = list(dict.fromkeys(n for n in kb if n))
        lexical = self._lexical()
        missing = [n for n in named if not lexical.contains(n) and not (
            kb.get(n) and self._store.entities_of_concepts([kb[n]]))]
        return named, missing

    def flags(self, chunk_id: str, start: int, end: int, asked: set[str]) -> list[str]:
        """How the text at ``[start, end)`` of a chunk qualifies what it names of the
        question's concepts ``asked`` (else of anything it names): "stroke: family
        history", "pneumonia: hedged"."""
        return [f"{name}: {flag}" for name, q in self._qualified(
            self._chunk(chunk_id), start, end, asked) for flag in q.flags()]

    def _qualified(self, chunk: Chunk, start: int, end: int, asked: set[str]
                   ) -> list[tuple[str, Qualifiers]]:
        """The mentions in ``[start, end)`` of a chunk with their ConText
        qualifiers, read in the chunk's context (a "Family history:" line above
        counts): those of the question's concepts, else every mention there."""
        if chunk.id not in self._contexts:
            if len(self._contexts) >= 256:
                self._contexts.pop(next(iter(self._contexts)))
            doc = self._nlp(chunk.text)
            self._contexts[chunk.id] = [
                (chunk.start + e.start_char, chunk.start + e.end_char, e.text, e.kb_id_,
                 Qualifiers.of_context(e._)) for e in doc.ents]
        inside = [m for m in self._contexts[chunk.id] if start <= m[0] and m[1] <= end]
        named = [m for m in inside if m[3] in asked] or inside
        return [(text, q) for _, _, text, _, q in named]

    def _document(self, document_id: str) -> Document:
        if document_id not in self._documents:
            if len(self._documents) >= 64:  # texts can be long: keep the last few
                self._documents.pop(next(iter(self._documents)))
            self._documents[document_id] = self._store.document(document_id)
        return self._documents[document_id]

    def _chunk(self, chunk_id: str) -> Chunk:
        if chunk_id not in self._chunks:
            self._chunks[chunk_id] = self._store.chunk(chunk_id)
        return self._chunks[chunk_id]

    def _candidates(self, ctx: _Context, chunk_ids: Sequence[str]) -> list[_Candidate]:
        """Candidate sentences: evidence of the gathered triples, and the sentences of
        the best-ranked chunks."""
        out: dict[tuple[str, int], _Candidate] = {}

        def add(chunk: Chunk, start: int, end: int, triple: Triple | None) -> None:
            text = chunk.text[start - chunk.start : end - chunk.start]
            if is_heading(text):
                return
            key = (chunk.document_id, start)
            if key not in out:
                out[key] = _Candidate(_Sentence(chunk, start, end, text))
            if triple is not None:
                out[key].triples.add(triple.id)
                out[key].bonus = max(out[key].bonus, ctx.relevance(triple))

        for t in ctx.triples:
            for ev in t.evidence:
                add(self._chunk(ev.chunk_id), ev.start, ev.end, t)
        for chunk_id in chunk_ids:
            chunk = self._chunk(chunk_id)
            for s, e in sentence_spans(chunk.text):
                add(chunk, chunk.start + s, chunk.start + e, None)
        return list(out.values())

    def _rank(self, items: list[_Candidate], qvec: Matrix, ctx: _Context
              ) -> tuple[list[_Sentence], list[float]]:
        """Evidence of the asked-for facts first, one sentence per fact; then the
        sentences most similar to the question; near-duplicates are skipped.
        Also returns every candidate's score."""
        if not items:
            return [], []
        vectors = self._embedder.embed([c.sentence.text for c in items])
        scores = vectors @ qvec + TRIPLE_BONUS * np.array([c.bonus for c in items])
        limit = self._config.max_citations
        # The user's own documents first among equally relevant facts: a clinician
        # asking about a drug wants what their notes say of it beside the literature.
        # (what a triple says ranks it; its confidence only after the layer)
        wanted = sorted((t for t in ctx.triples if ctx.relevance(t) >= FACT_FIRST),
                        key=lambda t: (-ctx.standing(t), t.layer is not Layer.USER,
                                       -t.confidence, t.id))
        order: list[int] = []
        covered: set[str] = set()
        for t in wanted:
            if t.id in covered or len(order) >= max(1, limit - 2):
                continue
            best = max((i for i, c in enumerate(items) if t.id in c.triples),
                       key=lambda i: scores[i], default=None)
            if best is not None:
                order.append(best)
                covered |= items[best].triples
        order += [int(i) for i in np.argsort(-scores)]
        # A question about named entities gets sentences about them: a sentence must
        # name a question entity or a direct neighbour, or be the evidence of a triple
        # that touches one ("side effects of warfarin" does not cite metformin's).
        names = {n.lower() for e in ctx.focus if e in ctx.entities
                 for n in (ctx.entities[e].name, *ctx.entities[e].surface[:50])
                 if len(n) > 2}
        about = {t.id for t in ctx.triples if {t.head, t.tail} & ctx.focus}
        on_topic = [not names or bool(c.triples & about)
                    or any(n in c.sentence.text.lower() for n in names) for c in items]
        if not any(on_topic):
            on_topic = [True] * len(items)
        chosen: list[int] = []
        for i in order:
            if i in chosen or not on_topic[i] or any(
                    vectors[i] @ vectors[j] > NEAR_DUPLICATE for j in chosen):
                continue
            chosen.append(i)
            if len(chosen) == limit:
                break
        return [items[i].sentence for i in chosen], [float(x) for x in scores]

    # -- answer parts ---------------------------------------------------------------

    def _cite(
        self, citations: dict[tuple[str, int, int], Citation], chunk: Chunk, start: int, end: int
    ) -> Citation:
        key = (chunk.document_id, start, end)
        if key not in citations:
            doc = self._document(chunk.document_id)
            citations[key] = Citation(
                n=len(citations) + 1, document_id=doc.id, title=doc.title, source=doc.source,
                layer=doc.layer, chunk_id=chunk.id, start=start, end=end,
                quote=doc.text[start:end],
            )
        return citations[key]

    def _is_fact(self, t: Triple) -> bool:
        return presents_as_fact(t, self._facts_config.min_precision)

    def _fact_triples(self, ctx: _Context, proposed: bool = False) -> list[Triple]:
        """The triples an answer lists as facts (``proposed``: the unreviewed ones
        below ``facts.min_precision`` instead), most relevant first."""
        pool = [t for t in ctx.triples if self._is_fact(t) != proposed
                and (not proposed or t.in_force)]
        relevant = [t for t in pool if {t.head, t.tail} & ctx.focus] or pool
        ranked = sorted(relevant, key=lambda t: (-ctx.relevance(t), t.id))
        return [t for t in ranked[: self._config.max_citations * 2]
                if t.head in ctx.entities and t.tail in ctx.entities]

    def _facts(
        self, ctx: _Context, citations: dict[tuple[str, int, int], Citation],
        proposed: bool = False,
    ) -> list[Fact]:
        """The facts an answer lists; a user-layer fact names the literature facts it
        refers to (same predicate, both ends linked across the layers) and the
        concepts that define its ends, adding those literature facts if missing.
        ``proposed``: the statements below the facts' bar instead (none of them
        is cited as a condition or counted as a fact)."""
        triples = self._fact_triples(ctx, proposed)
        self._define_all(sorted({e for t in triples for e in (t.head, t.tail)}))
        refers = {t.id: self._literature_of(ctx, t, proposed)
                  for t in triples if t.layer is Layer.USER}
        listed = {t.id for t in triples}
        for found in refers.values():
            triples += [x for x in found if x.id not in listed]
            listed |= {x.id for x in found}
        facts = []
        for t in triples:
            refs = [self._cite(citations, self._chunk(ev.chunk_id), ev.start, ev.end).n
                    for ev in t.evidence[:2]]
            facts.append(Fact(
                triple_id=t.id, head_id=t.head, tail_id=t.tail,
                head=ctx.entities[t.head].name, predicate=t.predicate,
                tail=ctx.entities[t.tail].name, layer=t.layer, confidence=t.confidence,
                qualifiers=t.qualifiers, review=t.review, citations=refs,
                literature=[x.id for x in refers.get(t.id, [])],
                defined_by=[c for e in (t.head, t.tail) for c in self._defined_by(e)],
            ))
        return facts

    def _literature_of(self, ctx: _Context, t: Triple, proposed: bool = False
                       ) -> list[Triple]:
        """The literature triples a user triple refers to: the same predicate between
        the literature entities its two ends are linked to (facts only, for a fact)."""
        heads, tails = self._linked(t.head), self._linked(t.tail)
        return sorted((x for x in ctx.triples if x.layer is Layer.LITERATURE
                       and self._is_fact(x) != proposed
                       and x.predicate == t.predicate and x.head in heads and x.tail in tails
                       and x.head in ctx.entities and x.tail in ctx.entities),
                      key=lambda x: (-x.confidence, x.id))

    def _define_all(self, entity_ids: Sequence[str]) -> None:
        """:meth:`_defined_by` (and :meth:`_linked`) of these entities in a few batched
        reads where the store has them (the tables' ``links_of``)."""
        batch = getattr(self._store, "links_of", None)
        missing = [e for e in dict.fromkeys(entity_ids) if e not in self._definition_cache]
        if not missing or batch is None:
            return
        self._link_all(missing)
        others = sorted({o for e in missing for o in self._link_cache.get(e, set())})
        own: dict[str, list[str]] = {}
        for link in batch([*missing, *others], (LinkKind.DEFINITION_OF,)):
            own.setdefault(link.source, []).append(link.target)
        for e in missing:
            mine = own.get(e) or [c for o in sorted(self._link_cache.get(e, set()))
                                  for c in own.get(o, [])]
            self._definition_cache[e] = list(dict.fromkeys(mine))

    def _defined_by(self, entity_id: str) -> list[str]:
        """The concepts defining an entity: its own ``definition_of`` links, else
        those of the entities it is linked to (a user entity's literature one)."""
        if entity_id not in self._definition_cache:
            own = [x.target for x in self._store.links(source=entity_id,
                                                       kind=LinkKind.DEFINITION_OF)]
            if not own:
                own = [x.target for other in sorted(self._linked(entity_id))
                       for x in self._store.links(source=other, kind=LinkKind.DEFINITION_OF)]
            self._definition_cache[entity_id] = list(dict.fromkeys(own))
        return self._definition_cache[entity_id]

    def _definitions(self, q_concepts: list[str], facts: list[Fact]) -> list[Definition]:
        """Definitions of the question's terms, then of the terms in the facts shown."""
        concept_ids = list(dict.fromkeys([*q_concepts, *(c for f in facts for c in f.defined_by)]))
        out: list[Definition] = []
        for cid in concept_ids:
            if len(out) >= self._config.max_definitions:
                break
            try:
                concept = self._store.concept(cid)
            except NotFoundError:
                continue  # an id no vocabulary holds (a dbSNP variant, say): no definition
            if concept.definition:
                out.append(Definition(term=concept.name, concept_id=concept.id,
                                      definition=concept.definition, source=concept.source))
        return out


# A question's own verbs that a tagger may take into an entity ("Describe genomiser").
_QUESTION_VERBS = frozenset({"describe", "list", "name", "explain", "give", "what", "which",
                             "how", "is", "are", "does", "do", "can", "define"})


def _span_name(text: str) -> str:
    words = text.split()
    while words and words[0].lower() in _QUESTION_VERBS:
        words = words[1:]
    return " ".join(words)


def abstain(answer: Answer, named: list[str], missing: list[str], closest: float = 1.0,
            floor: float = 0.0) -> Answer:
    """An answer that says first what the workspace does not hold: when nothing
    the question names is in any document, or when no sentence found comes as
    close to the question as ``floor`` (``retrieval.min_evidence``: the closest
    sentence's cosine ``closest``), it answers nothing (the trace keeps what was
    searched and ranked); when part of what it names is missing it says which
    before the rest."""
    said = f"No document in this workspace mentions {_listed(missing)}." if missing else ""
    if missing and len(missing) == len(named):
        why = f"not in any document: {', '.join(missing)}"
    elif closest < floor:
        why = (f"weak evidence: the closest sentence found has similarity {closest:.2f} "
               f"to the question, below retrieval.min_evidence {floor:.2f}")
        said = (f"{said} No passage in this workspace answers this question closely; "
                "nothing is cited as an answer.").strip()
    else:
        if not missing:
            return answer
        return answer.model_copy(update={"text": f"{said} {answer.text}".strip(),
                                         "not_found": missing})
    return answer.model_copy(update={
        "text": said, "sentences": [], "citations": [], "facts": [], "conditions": [],
        "proposed": [], "verdict": None, "answerable": False, "not_found": missing,
        "why_not": why})


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _chunk_ranking(items: list[_Candidate], scores: list[float], chosen: list[_Sentence]
                   ) -> list[str]:
    """The chunks an answer drew on, best first: those of the answer's sentences in
    answer order, then the other candidates' chunks by their best sentence."""
    order = list(dict.fromkeys(s.chunk.id for s in chosen))
    best: dict[str, float] = {}
    for item, score in zip(items, scores, strict=True):
        cid = item.sentence.chunk.id
        best[cid] = max(best.get(cid, float("-inf")), score)
    order += [c for c, _ in sorted(best.items(), key=lambda kv: -kv[1]) if c not in order]
    return order
