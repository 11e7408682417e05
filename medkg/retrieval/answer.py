"""Answer types and their text rendering.

An answer is extractive in the builtin engine: every sentence of it is a
quote from a source, marked with the number of its citation. Facts come from
the graph with their own citations; definitions come from the vocabulary.
"""

from __future__ import annotations

from pydantic import BaseModel

from medkg.model import Layer, Predicate, Qualifiers


class Citation(BaseModel):
    n: int
    document_id: str
    title: str
    source: str
    layer: Layer
    chunk_id: str
    start: int
    end: int
    quote: str


class Fact(BaseModel):
    triple_id: str
    head_id: str
    tail_id: str
    head: str
    predicate: Predicate
    tail: str
    layer: Layer
    confidence: float
    qualifiers: Qualifiers
    citations: list[int]


class Definition(BaseModel):
    term: str
    concept_id: str
    definition: str
    source: str


class Answer(BaseModel):
    question: str
    mode: str
    text: str
    citations: list[Citation]
    facts: list[Fact]
    definitions: list[Definition]
    trace: dict[str, list[str]]

    def render(self) -> str:
        """Plain-text rendering for a terminal."""
        lines = [f"Q: {self.question}", "", self.text or "(no answer found in this workspace)"]
        if self.facts:
            lines += ["", "Facts from the graph:"]
            for f in self.facts:
                flags = [k for k in ("negated", "uncertain", "hypothetical", "historical")
                         if getattr(f.qualifiers, k)]
                if f.qualifiers.experiencer != "patient":
                    flags.append(f"experiencer={f.qualifiers.experiencer}")
                note = f" ({', '.join(flags)})" if flags else ""
                refs = "".join(f"[{n}]" for n in f.citations)
                lines.append(
                    f"  - {f.head} —{f.predicate.value}→ {f.tail}{note}"
                    f"  [{f.layer.value}, conf {f.confidence:.2f}] {refs}"
                )
        if self.definitions:
            lines += ["", "Definitions:"]
            for d in self.definitions:
                lines.append(f"  - {d.term} ({d.concept_id}): {d.definition}")
        if self.citations:
            lines += ["", "Sources:"]
            for c in self.citations:
                lines.append(
                    f"  [{c.n}] {c.title} — {c.layer.value} document {c.document_id}, "
                    f"chars {c.start}-{c.end}: \"{c.quote}\""
                )
        return "\n".join(lines)
