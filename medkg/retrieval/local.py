"""Local graph retrieval with an extractive answer (the builtin engine): the
question's context (:mod:`.context`), its candidates by mode (:mod:`.candidates`,
each mode declared there as data), their fusion (:mod:`.fusion`) and the answer's
composition (:mod:`.compose`), over the graph as :mod:`.graphread` reads it.

1. Find the question's concepts (vocabulary matcher), the predicates its
   wording asks about, and embed it.
2. Gather the graph around its entities (or traverse from them).
3. Rank chunks by each of the mode's sources and fuse them; the candidate
   sentences are the evidence of the gathered triples and the sentences of the
   best chunks, ranked by similarity to the question plus the relevance of the
   triples they support.
4. Answer with the best sentences, each a numbered citation whose quote is
   the source text at its offsets; list the facts and the definitions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc

from medkg.config import FactsConfig, RetrievalConfig, RetrievalMode
from medkg.errors import RetrievalError
from medkg.linking.embeddings import Embedder, Matrix
from medkg.model import Chunk, Qualifiers
from medkg.ontology.index import ConceptIndex
from medkg.retrieval.answer import Answer, AnswerSentence, Citation
from medkg.retrieval.candidates import (
    FALLBACK,
    MODES,
    Indexes,
    Prepared,
    chunk_ranking,
    rank,
    sentence_candidates,
    source_rankings,
)
from medkg.retrieval.compose import Composer, abstain, not_found
from medkg.retrieval.context import Context, gather, traversal_context
from medkg.retrieval.fusion import candidates, rrf
from medkg.retrieval.graphread import GraphReader
from medkg.retrieval.guide import BuiltinGuide
from medkg.retrieval.intent import about_patients
from medkg.retrieval.trace import Trace, TraversalStep
from medkg.retrieval.traverse import Guide, Traversal, path_lines
from medkg.retrieval.verdict import asks_for_verdict
from medkg.store.base import GraphStore

__all__ = ["LocalRetriever"]


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
        self._guide = guide or BuiltinGuide(embedder)
        self._concepts = concepts  # the traverse mode's subword matches of question spans
        self._embedder = embedder
        self._idx = indexes
        self._nlp = nlp
        self._config = config
        self._graph = GraphReader(store, indexes.entities)
        self._compose = Composer(self._graph, config, facts or FactsConfig(), concepts)
        # each chunk's mentions with their qualifiers, as its citations need them
        self._contexts: dict[str, list[tuple[int, int, str, str, Qualifiers]]] = {}
        self._parsed: dict[str, Doc] = {}  # the last few questions, parsed

    def ask(self, question: str, *, mode: RetrievalMode = "local", qvec: Matrix | None = None,
            tree: Sequence[str] | None = None) -> Answer:
        """Answer the question by ``mode`` (:data:`.candidates.MODES`):

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
        question prepared once can be answered with several priors. The question
        is taken as :func:`~medkg.retrieval.intent.check_question` left it (the
        pipeline checks it once, on the way in)."""
        spec = MODES.get(mode)
        if spec is None:
            raise RetrievalError(f"the local retriever does not answer in mode {mode!r}",
                                 hint=f"modes: {', '.join(MODES)}")
        if len(self._idx.chunks) == 0:
            raise RetrievalError(
                "this workspace has no indexed documents",
                hint="run `medkg ingest FILES` and `medkg build` first",
            )
        qvec = self._embedder.embed_query([question])[0] if qvec is None else qvec
        q_concepts = self.concepts_of(question)
        traversal = None
        if spec.context == "traverse":
            ctx, traversal = traversal_context(
                question, self.parse(question), qvec, self._graph, self._idx.entities,
                self._embedder, self._guide, self._concepts, self._config)
            if not traversal.triples:
                return self._without_path(question, mode, qvec, q_concepts, ctx, traversal)
        elif spec.context == "graph":
            ctx = gather(question, q_concepts, qvec, self._graph, self._idx.entities,
                         self._config)
        else:
            ctx = Context({}, set(), set(), [])
        if not spec.fused:
            n = self._config.candidates
            [source] = spec.sources
            single = (self._idx.chunks.search(qvec, n) if source == "dense"
                      else self._idx.lexical_index().search(question, n))
            return Prepared(question, mode, qvec, q_concepts, ctx, {}, single, traversal)
        sources, scores = source_rankings(question, qvec, ctx, mode, self._idx, self._config,
                                          traversal)
        return Prepared(question, mode, qvec, q_concepts, ctx, sources, None, traversal, scores)

    def _without_path(self, question: str, mode: RetrievalMode, qvec: Matrix,
                      q_concepts: list[str], ctx: Context, traversal: Traversal) -> Prepared:
        """A traversal that found no path: the question is answered from
        :data:`.candidates.FALLBACK`'s evidence, and the answer says so."""
        names = [ctx.entities[e].name if e in ctx.entities else e for e in traversal.topic]
        start = (f"from {', '.join(names[:5])}" if names
                 else "from the question: nothing it names is in the graph")
        note = (f"traverse found no path {start}; this answer is {FALLBACK} retrieval's "
                "evidence")
        ctx = gather(question, q_concepts, qvec, self._graph, self._idx.entities,
                     self._config)
        sources, scores = source_rankings(question, qvec, ctx, FALLBACK, self._idx,
                                          self._config)
        return Prepared(question, mode, qvec, q_concepts, ctx, sources, None, traversal,
                        scores, fallback=note)

    def fuse(self, prepared: Prepared, tree: Sequence[str] | None = None
             ) -> list[tuple[str, float]]:
        """The candidate ranking of a prepared question: a mode of one source keeps
        that source's order and scores; the others are fused (weighted RRF), the
        tree's chunks (best first) being one more vote where given."""
        if prepared.single is not None:
            return prepared.single
        sources = dict(prepared.sources)
        if tree and "tree" in MODES[prepared.mode].sources:
            sources["tree"] = list(tree)[: self._config.candidates]
        return rrf(sources, self._config.fusion_weights.by_source(), k=self._config.rrf_k,
                   limit=self._config.candidates)

    def answer(self, prepared: Prepared, tree: Sequence[str] | None = None) -> Answer:
        """The extractive answer of a prepared question, with ``tree`` as the prior."""
        question, mode, qvec, ctx = prepared.question, prepared.mode, prepared.qvec, prepared.ctx
        compose = self._compose
        ranking = self.fuse(prepared, tree)
        draw = [c for c, _ in ranking[: self._config.top_chunks]]
        items = sentence_candidates(ctx, draw, self._graph.chunk)
        chosen, scores = rank(items, qvec, ctx, self._embedder, self._config.max_citations)
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
            cited = compose.cite(citations, s.chunk, s.start, s.end)
            sentences.append(AnswerSentence(text=s.text, citation=cited.n, layer=cited.layer))
        verdict = (compose.verdict(question, prepared.concepts, ctx, items, citations)
                   if asks_for_verdict(question) else None)
        facts = compose.facts(ctx, citations)
        proposed = compose.facts(ctx, citations, proposed=True)
        stated = compose.conditions(ctx, facts, citations)
        for c in citations.values():
            c.flags = self.flags(c.chunk_id, c.start, c.end, asked)
        flagged = {c.n: f" ({'; '.join(c.flags)})" for c in citations.values() if c.flags}
        used = chunk_ranking(items, scores, chosen)
        ranked = [c for c, _ in ranking]
        if MODES[mode].answer_first:  # its own candidates first, then the rest by similarity
            ranked = list(dict.fromkeys([*used, *ranked]))[: self._config.candidates]
        named, missing = not_found(self.parse(question), self._idx.lexical_index(),
                                   self._graph.store)
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
            definitions=compose.definitions(prepared.concepts, facts),
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
        answer.trace.fallback = prepared.fallback
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
        return {ctx.entities[e].name.lower() for t in self._compose.fact_triples(ctx)
                for e in (t.head, t.tail)}

    def flags(self, chunk_id: str, start: int, end: int, asked: set[str]) -> list[str]:
        """How the text at ``[start, end)`` of a chunk qualifies what it names of the
        question's concepts ``asked`` (else of anything it names): "stroke: family
        history", "pneumonia: hedged"."""
        return [f"{name}: {flag}" for name, q in self._qualified(
            self._graph.chunk(chunk_id), start, end, asked) for flag in q.flags()]

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
        topic = []
        for e in traversal.topic:
            name = f"{entities[e].name} ({entities[e].layer.value})" if e in entities else e
            topic.append(f"{name}: {traversal.why[e]}" if e in traversal.why else name)
        return {"traversal": steps, "topic": topic,
                "paths": path_lines(traversal, traversal.triples, entities)}
