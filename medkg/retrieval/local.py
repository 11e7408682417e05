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

from dataclasses import dataclass

import numpy as np
from spacy.language import Language

from medkg.config import RetrievalConfig
from medkg.errors import RetrievalError
from medkg.linking.embeddings import Embedder, Matrix
from medkg.linking.vectors import VectorIndex
from medkg.model import Chunk, Entity, Layer, LinkKind, Predicate, Triple
from medkg.retrieval.answer import Answer, Citation, Definition, Fact
from medkg.retrieval.intent import question_predicates
from medkg.store.base import GraphStore
from medkg.text import sentence_spans

TRIPLE_BONUS = 0.12  # per unit of triple relevance, for a sentence that is its evidence
FACT_FIRST = 1.5  # evidence of a triple this relevant is cited before look-alike sentences


@dataclass(frozen=True)
class _Sentence:
    chunk: Chunk
    start: int
    end: int
    text: str


_Candidates = dict[tuple[str, int], tuple[_Sentence, float]]


@dataclass
class Indexes:
    chunks: VectorIndex
    entities: VectorIndex


@dataclass
class _Context:
    """What one question has gathered from the graph."""

    entities: dict[str, Entity]
    question_entities: set[str]
    focus: set[str]
    intents: set[Predicate]
    triples: list[Triple]

    def relevance(self, t: Triple) -> float:
        ends = (t.head, t.tail)
        return (
            sum(1.0 for e in ends if e in self.question_entities)
            + (1.0 if t.predicate in self.intents else 0.0)
            + sum(0.5 for e in ends if e in self.focus)
            + 0.1 * t.confidence
            - (0.5 if t.qualifiers.negated else 0.0)
        )


class LocalRetriever:
    """Answers questions from the graph and its chunks, citing every sentence."""

    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        indexes: Indexes,
        nlp: Language,
        config: RetrievalConfig,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._idx = indexes
        self._nlp = nlp
        self._config = config
        self._chunks: dict[str, Chunk] = {}

    def ask(self, question: str) -> Answer:
        question = question.strip()
        if not question:
            raise RetrievalError("the question is empty")
        if len(self._idx.chunks) == 0:
            raise RetrievalError(
                "this workspace has no indexed documents",
                hint="run `medkg ingest FILES` and `medkg build` first",
            )
        qvec = self._embedder.embed([question])[0]
        q_concepts = list(dict.fromkeys(e.kb_id_ for e in self._nlp(question).ents))
        ctx = self._gather(question, q_concepts, qvec)
        chosen = self._rank(self._candidates(ctx, qvec), qvec, ctx)
        citations: dict[tuple[str, int, int], Citation] = {}
        parts = [f"{s.text} [{self._cite(citations, s.chunk, s.start, s.end).n}]"
                 for s in chosen]
        facts = self._facts(ctx, citations)
        return Answer(
            question=question,
            mode="local",
            text=" ".join(parts),
            citations=sorted(citations.values(), key=lambda c: c.n),
            facts=facts,
            definitions=self._definitions(q_concepts, facts, ctx),
            trace={
                "question_concepts": q_concepts,
                "intents": sorted(p.value for p in ctx.intents),
                "focus_entities": sorted(f"{ctx.entities[e].name} ({ctx.entities[e].layer.value})"
                                         for e in ctx.focus if e in ctx.entities),
                "triples": [t.id for t in ctx.triples],
            },
        )

    # -- gathering ------------------------------------------------------------------

    def _gather(self, question: str, q_concepts: list[str], qvec: Matrix) -> _Context:
        entities = {e.id: e for layer in (Layer.USER, Layer.LITERATURE)
                    for e in self._store.entities(layer)}
        wanted = set(q_concepts)
        q_entities = {e.id for e in entities.values() if wanted & set(e.concept_ids)}
        seeds = set(q_entities)
        seeds.update(eid for eid, _ in self._idx.entities.search(qvec, self._config.top_entities))
        for eid in list(seeds):
            seeds.update(link.target for link in
                         self._store.links(source=eid, kind=LinkKind.REFERENCE_OF))
        intents = question_predicates(question)
        triples = {t.id: t for t in self._store.triples(entity_ids=sorted(seeds))}
        # One hop along the asked-for predicates from the question's own entities.
        focus = set(q_entities)
        for t in list(triples.values()):
            if t.predicate in intents and ({t.head, t.tail} & q_entities):
                focus.update((t.head, t.tail))
        for t in self._store.triples(entity_ids=sorted(focus - seeds)):
            triples.setdefault(t.id, t)
        return _Context(entities, q_entities, focus, intents, list(triples.values()))

    def _chunk(self, chunk_id: str) -> Chunk:
        if chunk_id not in self._chunks:
            self._chunks[chunk_id] = self._store.chunk(chunk_id)
        return self._chunks[chunk_id]

    def _candidates(self, ctx: _Context, qvec: Matrix) -> _Candidates:
        """Candidate sentences keyed by (document, start), with their triple bonus."""
        out: _Candidates = {}

        def add(chunk: Chunk, start: int, end: int, bonus: float) -> None:
            text = chunk.text[start - chunk.start : end - chunk.start]
            if _is_heading(text):
                return
            key = (chunk.document_id, start)
            if key not in out or out[key][1] < bonus:
                out[key] = (_Sentence(chunk, start, end, text), bonus)

        for t in ctx.triples:
            for ev in t.evidence:
                add(self._chunk(ev.chunk_id), ev.start, ev.end, ctx.relevance(t))
        for chunk_id, _score in self._idx.chunks.search(qvec, self._config.top_chunks):
            chunk = self._chunk(chunk_id)
            for s, e in sentence_spans(chunk.text):
                add(chunk, chunk.start + s, chunk.start + e, 0.0)
        return out

    def _rank(
        self,
        candidates: _Candidates,
        qvec: Matrix,
        ctx: _Context,
    ) -> list[_Sentence]:
        if not candidates:
            return []
        items = list(candidates.values())
        vectors = self._embedder.embed([s.text for s, _ in items])
        scores = vectors @ qvec + TRIPLE_BONUS * np.array([b for _, b in items])
        # Evidence of the most relevant facts first (at most all but two places),
        # then the sentences most similar to the question.
        facts_first = sorted((i for i, (_, bonus) in enumerate(items) if bonus >= FACT_FIRST),
                             key=lambda i: (-items[i][1], -scores[i]))
        limit = self._config.max_citations
        order = [*facts_first[: max(1, limit - 2)], *(int(i) for i in np.argsort(-scores))]
        chosen: list[_Sentence] = []
        seen_text: set[str] = set()
        for i in order:
            sentence = items[i][0]
            if sentence.text in seen_text:
                continue  # the same sentence twice says nothing new
            seen_text.add(sentence.text)
            chosen.append(sentence)
            if len(chosen) == limit:
                break
        return chosen

    # -- answer parts ---------------------------------------------------------------

    def _cite(
        self, citations: dict[tuple[str, int, int], Citation], chunk: Chunk, start: int, end: int
    ) -> Citation:
        key = (chunk.document_id, start, end)
        if key not in citations:
            doc = self._store.document(chunk.document_id)
            citations[key] = Citation(
                n=len(citations) + 1, document_id=doc.id, title=doc.title, source=doc.source,
                layer=doc.layer, chunk_id=chunk.id, start=start, end=end,
                quote=doc.text[start:end],
            )
        return citations[key]

    def _facts(
        self, ctx: _Context, citations: dict[tuple[str, int, int], Citation]
    ) -> list[Fact]:
        relevant = [t for t in ctx.triples if {t.head, t.tail} & ctx.focus] or ctx.triples
        ranked = sorted(relevant, key=lambda t: (-ctx.relevance(t), t.id))
        facts = []
        for t in ranked[: self._config.max_citations * 2]:
            if t.head not in ctx.entities or t.tail not in ctx.entities:
                continue
            refs = [self._cite(citations, self._chunk(ev.chunk_id), ev.start, ev.end).n
                    for ev in t.evidence[:2]]
            facts.append(Fact(
                triple_id=t.id, head_id=t.head, tail_id=t.tail,
                head=ctx.entities[t.head].name, predicate=t.predicate,
                tail=ctx.entities[t.tail].name, layer=t.layer, confidence=t.confidence,
                qualifiers=t.qualifiers, citations=refs,
            ))
        return facts

    def _definitions(
        self, q_concepts: list[str], facts: list[Fact], ctx: _Context
    ) -> list[Definition]:
        """Definitions of the question's terms, then of the terms in the facts shown."""
        concept_ids = list(q_concepts)
        for entity_id in dict.fromkeys(e for f in facts for e in (f.head_id, f.tail_id)):
            for link in self._store.links(source=entity_id, kind=LinkKind.DEFINITION_OF):
                if link.target not in concept_ids:
                    concept_ids.append(link.target)
        out: list[Definition] = []
        for cid in concept_ids:
            if len(out) >= self._config.max_definitions:
                break
            concept = self._store.concept(cid)
            if concept.definition:
                out.append(Definition(term=concept.name, concept_id=concept.id,
                                      definition=concept.definition, source=concept.source))
        return out


def _is_heading(text: str) -> bool:
    """Headings and title lines are not answers: '#'-lines, short unpunctuated lines."""
    stripped = text.strip()
    return stripped.startswith("#") or (
        not stripped.endswith((".", "?", "!", ")")) and len(stripped.split()) <= 8
    )
