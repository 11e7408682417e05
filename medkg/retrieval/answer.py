"""Answer types and their text rendering.

An answer is extractive in the builtin engine: every sentence of it is a
quote from a source, marked with the number of its citation. Facts come from
the graph with their own citations; definitions come from the vocabulary.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_serializer

from medkg.model import Layer, Predicate, Qualifiers
from medkg.retrieval.trace import Trace


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
    trace: Trace = Field(default_factory=Trace)  # what was searched and used

    @field_serializer("trace")
    def _trace_json(self, trace: Trace) -> dict[str, Any]:
        return trace.model_dump(mode="json", exclude_none=True)

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

    def render_trace(self) -> str:
        """How the answer was found, for ``medkg ask --explain``."""
        t = self.trace
        lines = [f"Trace ({self.mode}):"]
        if t.query_tags:
            lines.append("  question tags: " + "; ".join(f"{k}: {', '.join(v)}"
                                                       for k, v in t.query_tags.items()))
        for level in t.tree_path or []:
            lines.append(f"  tree level {level.level}:")
            for node in level.nodes:
                lines.append(f"    {node.id} (score {node.score}, sim {node.similarity}, "
                             f"{node.chunks} chunks) {node.summary[:160]}")
        if t.scope_chunks is not None:
            lines.append(f"  chunks in scope: {t.scope_chunks}")
        for step in t.refinement or []:
            shared = ", ".join(step.shared_terms) or "none"
            lines.append(f"  bottom-up: level {step.level} {step.node}: shared terms "
                         f"{shared}; +{step.added_chunks} chunks")
        if t.question_concepts:
            lines.append(f"  question concepts: {', '.join(t.question_concepts)}")
        if t.focus_entities:
            lines.append(f"  entities: {', '.join(t.focus_entities[:12])}")
        lines.append(f"  triples considered: {len(t.triples)}; candidate chunks ranked: "
                     f"{len(t.ranking)}; chunks the answer drew on: {len(t.retrieved_chunks)}")
        if t.note:
            lines.append(f"  note: {t.note}")
        return "\n".join(lines)


def is_heading(text: str) -> bool:
    """Headings and title lines are not answers: '#'-lines, short unpunctuated lines."""
    stripped = text.strip()
    return stripped.startswith("#") or (
        not stripped.endswith((".", "?", "!", ")")) and len(stripped.split()) <= 8
    )
