"""Answer types and their text rendering.

An answer is extractive in the builtin engine: every sentence of it is a
quote from a source, marked with the number of its citation. Facts come from
the graph with their own citations; definitions come from the vocabulary.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_serializer

from medkg.model import Layer, Predicate, Qualifiers, ReviewState, Triple
from medkg.retrieval.trace import Trace
from medkg.retrieval.verdict import Verdict


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
    # How the quote qualifies what it names of the question ("stroke: family
    # history", "pneumonia: hedged"): a reader must see it before taking the quote
    # as a fact about the patient.
    flags: list[str] = Field(default_factory=list)


class AnswerSentence(BaseModel):
    """One sentence of the extractive answer: a quote, its citation, its layer."""

    text: str
    citation: int
    layer: Layer


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
    # a curator's decision on it (accepted, rejected, edited), or proposed
    review: ReviewState = ReviewState.PROPOSED
    # MedGraphRAG's [entity, source, definition]: for a user-layer fact, the
    # literature facts it refers to (triple ids of facts in the same answer) and
    # the vocabulary concepts that define its two ends.
    literature: list[str] = Field(default_factory=list)
    defined_by: list[str] = Field(default_factory=list)


def presents_as_fact(triple: Triple, min_precision: float) -> bool:
    """Whether an answer states ``triple`` as a fact: a curator accepted it, or its
    (calibrated) confidence reaches ``min_precision`` and no curator rejected or
    replaced it. The rest stay proposed: in the graph, not in answers as facts."""
    if triple.review is ReviewState.ACCEPTED:
        return True
    return triple.in_force and triple.confidence >= min_precision


ConditionKind = Literal["negated", "uncertain", "hypothetical", "population",
                        "contraindication", "adverse effect", "conflicting evidence"]


class Condition(BaseModel):
    """A condition an answer holds under, stated with its sources: a qualifier of a
    fact used (negated, uncertain, hypothetical, the population studied), what
    speaks against a therapy the answer names (a contraindication, an adverse
    effect), or evidence that disagrees (both sides shown, never averaged)."""

    kind: ConditionKind
    text: str
    triple_ids: list[str]
    citations: list[int]
    # drawn only from statements below facts.min_precision that no curator accepted:
    # shown, since a caution costs less than a miss, but not as a fact
    unreviewed: bool = False


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
    conditions: list[Condition] = Field(default_factory=list)  # when the answer holds
    sentences: list[AnswerSentence] = Field(default_factory=list)  # the extractive answer's
    trace: Trace = Field(default_factory=Trace)  # what was searched and used
    # False when the workspace cannot answer: what the question names is in no
    # document. The text then says so, and nothing is cited as if it answered.
    answerable: bool = True
    # what the question names that no document mentions (all of it: not answerable)
    not_found: list[str] = Field(default_factory=list)
    # why it is not answerable: what is in no document, or how weak the evidence is
    why_not: str = ""
    # statements below facts.min_precision that the evidence used also proposes,
    # listed only when asked for (--show-proposed): unreviewed, low confidence
    proposed: list[Fact] = Field(default_factory=list)
    # "can I give X with Y?": contraindicated / caution / no evidence found, cited
    verdict: Verdict | None = None

    @field_serializer("trace")
    def _trace_json(self, trace: Trace) -> dict[str, Any]:
        return trace.model_dump(mode="json", exclude_none=True)

    def render(self) -> str:
        """Plain-text rendering for a terminal: the answer (by layer where it draws on
        both the user's documents and the literature), the facts (each user fact with
        the literature fact it refers to and what defines it), definitions, sources."""
        lines = [f"Q: {self.question}", ""]
        if self.trace.fallback:
            lines += [f"Note: {self.trace.fallback}.", ""]
        if self.verdict is not None:
            doubt = " (unreviewed, low confidence)" if self.verdict.unreviewed else ""
            refs = "".join(f"[{n}]" for n in self.verdict.citations)
            lines += [f"Verdict{doubt}: {self.verdict.text} {refs}".rstrip(), ""]
        flagged = {c.n: f" ({'; '.join(c.flags)})" for c in self.citations if c.flags}
        layers = {s.layer for s in self.sentences}
        if len(layers) > 1 and not self.mode.endswith("+llm"):
            for layer in (Layer.USER, Layer.LITERATURE):
                mine = [s for s in self.sentences if s.layer is layer]
                if mine:
                    lines += [_LAYER_HEADING[layer],
                              *(f"  {s.text} [{s.citation}]{flagged.get(s.citation, '')}"
                                for s in mine)]
        else:
            lines.append(self.text or "(no answer found in this workspace)")
        if self.conditions:
            lines += ["", "Conditions (when this holds):"]
            for cond in self.conditions:
                refs = "".join(f"[{n}]" for n in cond.citations)
                doubt = " (unreviewed, low confidence)" if cond.unreviewed else ""
                lines.append(f"  - {cond.kind}{doubt}: {cond.text} {refs}")
        by_id = {f.triple_id: f for f in self.facts}
        defined = {d.concept_id: d for d in self.definitions}
        for layer in (Layer.USER, Layer.LITERATURE):
            facts = [f for f in self.facts if f.layer is layer]
            if not facts:
                continue
            lines += ["", f"Facts {_LAYER_FROM[layer]}:"]
            for f in facts:
                lines.append(f"  - {_fact_line(f)}")
                for tid in f.literature:
                    if tid in by_id:
                        lines.append(f"      in the literature: {_fact_line(by_id[tid])}")
                terms = [defined[c].term for c in f.defined_by if c in defined]
                if layer is Layer.USER and terms:
                    lines.append(f"      defined: {', '.join(terms)}")
        if self.proposed:
            lines += ["", "Unreviewed, low confidence (not facts; shown on request):"]
            lines += [f"  - {_fact_line(f)}" for f in self.proposed]
        if self.definitions:
            lines += ["", "Definitions:"]
            for d in self.definitions:
                lines.append(f"  - {d.term} ({d.concept_id}): {d.definition}")
        if self.citations:
            lines += ["", "Sources:"]
            for c in self.citations:
                lines.append(
                    f"  [{c.n}] {c.title} — {c.layer.value} document {c.document_id}, "
                    f"chars {c.start}-{c.end}: \"{c.quote}\"{flagged.get(c.n, '')}"
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
        if t.keywords:
            lines.append("  keywords: low (entities): " + (", ".join(t.keywords.get("low", []))
                         or "none") + "; high (themes): "
                         + (", ".join(t.keywords.get("high", [])) or "none"))
        if t.traversal:
            for hop in t.traversal:
                clues = f"; clue entities: {', '.join(hop.clues)}" if hop.clues else ""
                stop = f"; stop: {hop.stop}" if hop.stop else ""
                lines.append(f"  hop {hop.depth}: frontier {hop.frontier} entities, "
                             f"{hop.candidates} triples scored, {hop.kept} kept{clues}{stop}")
        for why in t.topic or []:
            lines.append(f"  topic entity: {why}")
        for path in t.paths or []:
            lines.append(f"  path: {path}")
        if t.fallback:
            lines.append(f"  fallback: {t.fallback}")
        if t.question_concepts:
            lines.append(f"  question concepts: {', '.join(t.question_concepts)}")
        if t.focus_entities:
            lines.append(f"  entities: {', '.join(t.focus_entities[:12])}")
        if t.closest is not None:
            lines.append(f"  closest sentence to the question: cosine {t.closest:.2f}")
        lines.append(f"  triples considered: {len(t.triples)}; candidate chunks ranked: "
                     f"{len(t.ranking)}; chunks the answer drew on: {len(t.retrieved_chunks)}")
        if t.note:
            lines.append(f"  note: {t.note}")
        return "\n".join(lines)


_LAYER_HEADING = {Layer.USER: "In your documents:", Layer.LITERATURE: "In the literature:"}
_LAYER_FROM = {Layer.USER: "from your documents", Layer.LITERATURE: "from the literature"}


def _fact_line(f: Fact) -> str:
    flags = [k for k in ("negated", "uncertain", "hypothetical", "historical")
             if getattr(f.qualifiers, k)]
    if f.qualifiers.experiencer != "patient":
        flags.append(f"experiencer={f.qualifiers.experiencer}")
    note = f" ({', '.join(flags)})" if flags else ""
    refs = "".join(f"[{n}]" for n in f.citations)
    return (f"{f.head} —{f.predicate.value}→ {f.tail}{note}"
            f"  [{f.layer.value}, conf {f.confidence:.2f}] {refs}")


def is_heading(text: str) -> bool:
    """Headings and title lines are not answers: '#'-lines, short unpunctuated lines."""
    stripped = text.strip()
    return stripped.startswith("#") or (
        not stripped.endswith((".", "?", "!", ")")) and len(stripped.split()) <= 8
    )
