"""Retrieval only: the evidence behind an answer, for a language model of the
user's own (``medkg retrieve``, ``/api/retrieve``, the MCP server's
``search_evidence``).

A :class:`Retrieval` holds what an LLM needs to answer by itself, every item
numbered by one set of markers: the passages (the best chunks of the
candidate ranking, then any other chunk the facts, conditions or verdict cite),
each with its document, offsets, text, score and every source's rank; the
graph's facts with their review state and the passages that state them; the
conditions the answer holds under; the definitions; and a ready context block
that cites the passages as ``[n]``. Whether the workspace can answer at all
(``answerable``, ``not_found``) is the same judgement as ``medkg ask``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, Field

from medkg.model import Chunk, Document, Layer
from medkg.retrieval.answer import Answer, Condition, Definition, Fact
from medkg.retrieval.trace import SourceRank
from medkg.retrieval.verdict import Verdict


class Quote(BaseModel):
    """A sentence of a passage that the answer's sentences, facts, conditions or
    verdict cite."""

    start: int  # document offsets: document.text[start:end] == text
    end: int
    text: str
    flags: list[str] = Field(default_factory=list)


class Passage(BaseModel):
    """One chunk of evidence, cited in the context as ``[n]``."""

    n: int
    chunk_id: str
    document_id: str
    title: str
    source: str
    layer: Layer
    start: int  # document offsets of the chunk
    end: int
    text: str  # document.text[start:end]
    rank: int | None  # in the candidate ranking (None: cited, not ranked)
    score: float | None  # its score there (fused, or the one source's)
    sources: dict[str, SourceRank] = Field(default_factory=dict)
    # how it qualifies what it names of the question ("stroke: family history")
    flags: list[str] = Field(default_factory=list)
    quotes: list[Quote] = Field(default_factory=list)


class EvidenceFact(Fact):
    """A fact of the graph with the passages that state it."""

    passages: list[int] = Field(default_factory=list)


class EvidenceCondition(Condition):
    passages: list[int] = Field(default_factory=list)


class Retrieval(BaseModel):
    question: str
    mode: str
    answerable: bool
    not_found: list[str] = Field(default_factory=list)
    why_not: str = ""
    passages: list[Passage]
    facts: list[EvidenceFact]
    proposed: list[EvidenceFact] = Field(default_factory=list)  # below facts.min_precision
    conditions: list[EvidenceCondition] = Field(default_factory=list)
    definitions: list[Definition] = Field(default_factory=list)
    verdict: Verdict | None = None
    verdict_passages: list[int] = Field(default_factory=list)
    context: str  # the block to give an LLM; its [n] are the passages' n

    def passage(self, n: int) -> Passage:
        """The passage a context marker ``[n]`` cites."""
        for p in self.passages:
            if p.n == n:
                return p
        raise KeyError(n)


def assemble(answer: Answer, top: int, chunks: Mapping[str, Chunk],
             documents: Mapping[str, Document],
             flags: Callable[[str, int, int], list[str]]) -> Retrieval:
    """The retrieval of a composed (not yet worded) ``answer``: its ``top`` best
    ranked chunks, then the other chunks it cites (its sentences, facts,
    conditions, verdict).
    ``chunks`` and ``documents`` hold every chunk and document named;
    ``flags(chunk_id, start, end)`` qualifies a span (the retriever's)."""
    trace = answer.trace
    ranked = trace.candidates if trace.candidates is not None else []
    order = [c.chunk_id for c in ranked] or list(trace.ranking or trace.retrieved_chunks)
    by_rank = {c.chunk_id: c for c in ranked}
    cited = {c.n: c for c in answer.citations}
    wanted = list(dict.fromkeys([*order[:top], *(c.chunk_id for c in answer.citations)]))
    passages: dict[str, Passage] = {}
    for chunk_id in wanted:
        chunk, candidate = chunks.get(chunk_id), by_rank.get(chunk_id)
        if chunk is None:  # deleted since it was ranked
            continue
        doc = documents[chunk.document_id]
        passages[chunk_id] = Passage(
            n=len(passages) + 1, chunk_id=chunk.id, document_id=doc.id, title=doc.title,
            source=doc.source, layer=doc.layer, start=chunk.start, end=chunk.end,
            text=chunk.text, rank=order.index(chunk_id) + 1 if chunk_id in order else None,
            score=candidate.score if candidate else None,
            sources=candidate.sources if candidate else {},
            flags=flags(chunk.id, chunk.start, chunk.end))
    for c in answer.citations:
        if c.chunk_id in passages:
            passages[c.chunk_id].quotes.append(
                Quote(start=c.start, end=c.end, text=c.quote, flags=c.flags))

    def markers(numbers: Sequence[int]) -> list[int]:
        return list(dict.fromkeys(passages[cited[n].chunk_id].n for n in numbers
                                  if n in cited and cited[n].chunk_id in passages))

    facts = [EvidenceFact(**f.model_dump(), passages=markers(f.citations)) for f in answer.facts]
    proposed = [EvidenceFact(**f.model_dump(), passages=markers(f.citations))
                for f in answer.proposed]
    conditions = [EvidenceCondition(**c.model_dump(), passages=markers(c.citations))
                  for c in answer.conditions]
    verdict_passages = markers(answer.verdict.citations) if answer.verdict else []
    made = Retrieval(
        question=answer.question, mode=answer.mode, answerable=answer.answerable,
        not_found=answer.not_found, why_not=answer.why_not,
        passages=list(passages.values()), facts=facts, proposed=proposed,
        conditions=conditions, definitions=answer.definitions, verdict=answer.verdict,
        verdict_passages=verdict_passages, context="")
    made.context = context_block(made)
    return made


def context_block(r: Retrieval) -> str:
    """The evidence as text for an LLM's prompt: numbered passages (with their
    source and qualifiers), then facts, conditions and definitions citing them."""
    lines = [f"Question: {r.question}", ""]
    if not r.answerable:
        lines += [f"Note: the documents may not answer this question: {r.why_not}", ""]
    lines.append("Passages (cite them by number):")
    for p in r.passages:
        flags = f" [qualified: {'; '.join(p.flags)}]" if p.flags else ""
        lines.append(f"[{p.n}] {p.title} ({p.layer.value} document {p.document_id}, "
                     f"chars {p.start}-{p.end}){flags}")
        lines.append("    " + " ".join(p.text.split()))
    if r.verdict is not None:
        lines += ["", f"Verdict{' (unreviewed, low confidence)' if r.verdict.unreviewed else ''}"
                  f": {r.verdict.text} {_refs(r.verdict_passages)}".rstrip()]
    for title, facts in (("Facts from the knowledge graph", r.facts),
                         ("Proposed, not facts (unreviewed, low confidence)", r.proposed)):
        if facts:
            lines += ["", f"{title}:"]
            lines += [f"- {_fact(f)} {_refs(f.passages)}".rstrip() for f in facts]
    if r.conditions:
        lines += ["", "Conditions the evidence holds under:"]
        for c in r.conditions:
            doubt = " (unreviewed, low confidence)" if c.unreviewed else ""
            lines.append(f"- {c.kind}{doubt}: {c.text} {_refs(c.passages)}".rstrip())
    if r.definitions:
        lines += ["", "Definitions:"]
        lines += [f"- {d.term} ({d.concept_id}): {d.definition}" for d in r.definitions]
    return "\n".join(lines)


def _fact(f: Fact) -> str:
    notes = [k for k in ("negated", "uncertain", "hypothetical", "historical")
             if getattr(f.qualifiers, k)]
    if f.qualifiers.experiencer != "patient":
        notes.append(f"experiencer: {f.qualifiers.experiencer}")
    notes += [f"{f.layer.value}", f"confidence {f.confidence:.2f}", f"review: {f.review.value}"]
    return f"{f.head} -{f.predicate.value}-> {f.tail} ({', '.join(notes)})"


def _refs(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in numbers)


__all__ = ["EvidenceCondition", "EvidenceFact", "Passage", "Quote", "Retrieval",
           "assemble", "context_block"]
