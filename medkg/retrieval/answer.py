"""Answer types and their text rendering.

An answer is extractive in the builtin engine: every sentence of it is a
quote from a source, marked with the number of its citation. Facts come from
the graph with their own citations; definitions come from the vocabulary.
"""

from __future__ import annotations

from typing import Any

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
    trace: dict[str, Any]  # what was searched and used: JSON values

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
        if tags := t.get("query_tags"):
            lines.append("  question tags: " + "; ".join(f"{k}: {', '.join(v)}"
                                                       for k, v in tags.items()))
        for step in t.get("tree_path", []):
            lines.append(f"  tree level {step['level']}:")
            for node in step["nodes"]:
                lines.append(f"    {node['id']} (score {node['score']}, sim {node['similarity']}, "
                             f"{node['chunks']} chunks) {node['summary'][:160]}")
        if "scope_chunks" in t:
            lines.append(f"  chunks in scope: {t['scope_chunks']}")
        for step in t.get("refinement", []):
            shared = ", ".join(step["shared_terms"]) or "none"
            lines.append(f"  bottom-up: level {step['level']} {step['node']}: shared terms "
                         f"{shared}; +{step['added_chunks']} chunks")
        if t.get("question_concepts"):
            lines.append(f"  question concepts: {', '.join(t['question_concepts'])}")
        if t.get("focus_entities"):
            lines.append(f"  entities: {', '.join(t['focus_entities'][:12])}")
        lines.append(f"  triples considered: {len(t.get('triples', []))}; "
                     f"chunks ranked: {len(t.get('retrieved_chunks', []))}")
        if note := t.get("note"):
            lines.append(f"  note: {note}")
        return "\n".join(lines)
