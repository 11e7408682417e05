"""The candidates of a question: each mode declared as data (which candidate
sources it uses, fused or kept as ranked, how its answer ranks its chunks), each
source's ranking of chunks, and the candidate sentences an extractive answer is
drawn from, ranked.

Sources: ``lexical`` (BM25 over the chunks), ``dense`` (chunk vectors),
``graph`` (the evidence of the gathered triples, then the chunks mentioning a
question entity), ``traverse`` (the chunks of the traversal's paths) and
``tree`` (U-Retrieval's prior, added at fusion). A fused mode combines its
sources by weighted reciprocal-rank fusion (:mod:`medkg.retrieval.fusion`,
weights ``retrieval.fusion_weights``). ``global`` and ``auto`` are not modes of
the local retriever: :mod:`medkg.pipeline.ask` dispatches them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from medkg.config import RetrievalConfig
from medkg.errors import RetrievalError
from medkg.linking.embeddings import Embedder, Matrix
from medkg.linking.vectors import VectorIndex
from medkg.model import Chunk, Layer, Triple
from medkg.retrieval.answer import is_heading
from medkg.retrieval.context import Context
from medkg.retrieval.lexical import LexicalIndex
from medkg.retrieval.traverse import Traversal, ranked_chunks
from medkg.text import sentence_spans

TRIPLE_BONUS = 0.12  # per unit of triple relevance, for a sentence that is its evidence
FACT_FIRST = 1.5  # evidence of a triple this relevant is cited before look-alike sentences
NEAR_DUPLICATE = 0.92  # cosine above which two answer sentences say the same thing


@dataclass(frozen=True)
class ModeSpec:
    """How a mode of the local retriever finds its candidate chunks."""

    context: str  # what it gathers from the graph first: "none", "graph" or "traverse"
    sources: tuple[str, ...]  # its candidate sources
    fused: bool  # True: the sources fused (RRF); False: its one source's ranking as is
    # the chunks its answer drew on lead the candidate ranking (local search)
    answer_first: bool = False


MODES: dict[str, ModeSpec] = {
    "vector": ModeSpec("none", ("dense",), fused=False),  # plain vector RAG, a baseline
    "bm25": ModeSpec("none", ("lexical",), fused=False),  # a baseline
    "local": ModeSpec("graph", ("dense",), fused=False, answer_first=True),
    "hybrid": ModeSpec("graph", ("lexical", "dense", "graph"), fused=True),
    "u-retrieval": ModeSpec("graph", ("lexical", "dense", "graph", "tree"), fused=True),
    "traverse": ModeSpec("traverse", ("lexical", "dense", "traverse"), fused=True),
}
# where a traversal finds no path, the traverse mode answers from this mode's evidence
# (hybrid: the same candidates as u-retrieval but the tree's vote, which needs no tree)
FALLBACK = "hybrid"


@dataclass(frozen=True)
class Sentence:
    chunk: Chunk
    start: int
    end: int
    text: str


@dataclass
class SentenceCandidate:
    sentence: Sentence
    bonus: float = 0.0  # relevance of the most relevant triple it is evidence for
    triples: set[str] = field(default_factory=set)


@dataclass
class Indexes:
    chunks: VectorIndex
    entities: VectorIndex
    lexical: LexicalIndex | None = None

    def lexical_index(self) -> LexicalIndex:
        if self.lexical is None:
            raise RetrievalError("this mode needs the lexical index",
                                 hint="open the retriever through the workspace")
        return self.lexical


@dataclass(frozen=True)
class Prepared:
    """A question made ready to answer (``LocalRetriever.prepare``)."""

    question: str
    mode: str
    qvec: Matrix
    concepts: list[str]
    ctx: Context
    sources: dict[str, list[str]]  # each candidate source's ranking (fused modes)
    single: list[tuple[str, float]] | None  # the one source's hits (single-source modes)
    traversal: Traversal | None = None  # the traverse mode's paths
    # the sources' own scores where they have one (BM25, cosine), by chunk
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    fallback: str | None = None  # traverse without a path: what it answered from instead

    def rankings(self, tree: Sequence[str] | None = None
                 ) -> tuple[dict[str, list[str]], dict[str, dict[str, float]]]:
        """Each source's ranking and scores as the fusion saw them (a single-source
        mode's one source named after its kind; ``tree``: the tree's vote)."""
        if self.single is not None:
            name = MODES[self.mode].sources[0]
            return {name: [c for c, _ in self.single]}, {name: dict(self.single)}
        sources = dict(self.sources)
        if tree and "tree" in MODES[self.mode].sources:
            sources["tree"] = list(tree)
        return sources, self.scores


def source_rankings(question: str, qvec: Matrix, ctx: Context, mode: str, indexes: Indexes,
                    config: RetrievalConfig, traversal: Traversal | None = None
                    ) -> tuple[dict[str, list[str]], dict[str, dict[str, float]]]:
    """Each of the mode's sources' ranking of chunks (``config.candidates`` each),
    and the scores of those that have one (the tree's vote is added at fusion)."""
    n = config.candidates
    wanted = MODES[mode].sources
    hits = indexes.chunks.search(qvec, n)
    dense = [c for c, _ in hits]
    sources: dict[str, list[str]] = {}
    scores: dict[str, dict[str, float]] = {}
    if "lexical" in wanted:
        lexical = indexes.lexical_index().search(question, n)
        sources["lexical"] = [c for c, _ in lexical]
        scores["lexical"] = dict(lexical)
    if "dense" in wanted:
        sources["dense"], scores["dense"] = dense, dict(hits)
    if "graph" in wanted:
        sources["graph"] = graph_chunks(ctx, dense)[:n]
    if "traverse" in wanted and traversal is not None:
        mentions = {e: ctx.entities[e].chunk_ids for e in traversal.topic
                    if e in ctx.entities}
        sources["traverse"] = ranked_chunks(traversal, mentions)[:n]
    return sources, scores


def graph_chunks(ctx: Context, dense: list[str]) -> list[str]:
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



def sentence_candidates(ctx: Context, chunk_ids: Sequence[str], chunk: Callable[[str], Chunk]
                        ) -> list[SentenceCandidate]:
    """Candidate sentences: evidence of the gathered triples, and the sentences of
    the best-ranked chunks."""
    out: dict[tuple[str, int], SentenceCandidate] = {}

    def add(piece: Chunk, start: int, end: int, triple: Triple | None) -> None:
        text = piece.text[start - piece.start : end - piece.start]
        if is_heading(text):
            return
        key = (piece.document_id, start)
        if key not in out:
            out[key] = SentenceCandidate(Sentence(piece, start, end, text))
        if triple is not None:
            out[key].triples.add(triple.id)
            out[key].bonus = max(out[key].bonus, ctx.relevance(triple))

    for t in ctx.triples:
        for ev in t.evidence:
            add(chunk(ev.chunk_id), ev.start, ev.end, t)
    for chunk_id in chunk_ids:
        piece = chunk(chunk_id)
        for s, e in sentence_spans(piece.text):
            add(piece, piece.start + s, piece.start + e, None)
    return list(out.values())



def rank(items: list[SentenceCandidate], qvec: Matrix, ctx: Context, embedder: Embedder,
         limit: int) -> tuple[list[Sentence], list[float]]:
    """Evidence of the asked-for facts first, one sentence per fact; then the
    sentences most similar to the question; near-duplicates are skipped.
    Also returns every candidate's score."""
    if not items:
        return [], []
    vectors = embedder.embed([c.sentence.text for c in items])
    scores = vectors @ qvec + TRIPLE_BONUS * np.array([c.bonus for c in items])
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



def chunk_ranking(items: list[SentenceCandidate], scores: list[float], chosen: list[Sentence]
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
