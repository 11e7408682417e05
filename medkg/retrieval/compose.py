"""The extractive answer's parts, composed from a question's context and its
ranked sentences: numbered citations (each quote the source text at its
offsets), the facts (only statements a curator accepted or whose calibrated
confidence reaches ``facts.min_precision``; the rest proposed), the literature
facts a user fact refers to, the conditions the answer holds under, the verdict
of a "can I give X with Y?" question, the definitions, and abstention when the
workspace cannot answer."""

from __future__ import annotations

from spacy.tokens import Doc

from medkg.config import FactsConfig, RetrievalConfig
from medkg.errors import NotFoundError
from medkg.model import Chunk, Layer, Triple
from medkg.ontology.index import ConceptIndex
from medkg.retrieval.answer import (
    Answer,
    Citation,
    Condition,
    Definition,
    Fact,
    presents_as_fact,
)
from medkg.retrieval.candidates import SentenceCandidate
from medkg.retrieval.conditions import conditions
from medkg.retrieval.context import Context
from medkg.retrieval.graphread import GraphReader
from medkg.retrieval.intent import class_word
from medkg.retrieval.lexical import LexicalIndex
from medkg.retrieval.verdict import Named, Passage, Verdict, decide
from medkg.store.base import GraphStore


class Composer:
    """Composes an answer's parts for one retriever (its reads through ``graph``)."""

    def __init__(self, graph: GraphReader, config: RetrievalConfig, facts: FactsConfig,
                 concepts: ConceptIndex | None) -> None:
        self.graph = graph
        self.config = config
        self.facts_config = facts
        self.concepts = concepts

    def cite(
        self, citations: dict[tuple[str, int, int], Citation], chunk: Chunk, start: int, end: int
    ) -> Citation:
        key = (chunk.document_id, start, end)
        if key not in citations:
            doc = self.graph.document(chunk.document_id)
            citations[key] = Citation(
                n=len(citations) + 1, document_id=doc.id, title=doc.title, source=doc.source,
                layer=doc.layer, chunk_id=chunk.id, start=start, end=end,
                quote=doc.text[start:end],
            )
        return citations[key]

    def is_fact(self, t: Triple) -> bool:
        return presents_as_fact(t, self.facts_config.min_precision)

    def fact_triples(self, ctx: Context, proposed: bool = False) -> list[Triple]:
        """The triples an answer lists as facts (``proposed``: the unreviewed ones
        below ``facts.min_precision`` instead), most relevant first."""
        pool = [t for t in ctx.triples if self.is_fact(t) != proposed
                and (not proposed or t.in_force)]
        relevant = [t for t in pool if {t.head, t.tail} & ctx.focus] or pool
        ranked = sorted(relevant, key=lambda t: (-ctx.relevance(t), t.id))
        return [t for t in ranked[: self.config.max_citations * 2]
                if t.head in ctx.entities and t.tail in ctx.entities]

    def facts(
        self, ctx: Context, citations: dict[tuple[str, int, int], Citation],
        proposed: bool = False,
    ) -> list[Fact]:
        """The facts an answer lists; a user-layer fact names the literature facts it
        refers to (same predicate, both ends linked across the layers) and the
        concepts that define its ends, adding those literature facts if missing.
        ``proposed``: the statements below the facts' bar instead (none of them
        is cited as a condition or counted as a fact)."""
        triples = self.fact_triples(ctx, proposed)
        self.graph.define_all(sorted({e for t in triples for e in (t.head, t.tail)}))
        refers = {t.id: self.literature_of(ctx, t, proposed)
                  for t in triples if t.layer is Layer.USER}
        listed = {t.id for t in triples}
        for found in refers.values():
            triples += [x for x in found if x.id not in listed]
            listed |= {x.id for x in found}
        facts = []
        for t in triples:
            refs = [self.cite(citations, self.graph.chunk(ev.chunk_id), ev.start, ev.end).n
                    for ev in t.evidence[:2]]
            facts.append(Fact(
                triple_id=t.id, head_id=t.head, tail_id=t.tail,
                head=ctx.entities[t.head].name, predicate=t.predicate,
                tail=ctx.entities[t.tail].name, layer=t.layer, confidence=t.confidence,
                qualifiers=t.qualifiers, review=t.review, citations=refs,
                literature=[x.id for x in refers.get(t.id, [])],
                defined_by=[c for e in (t.head, t.tail) for c in self.graph.defined_by(e)],
            ))
        return facts

    def literature_of(self, ctx: Context, t: Triple, proposed: bool = False
                       ) -> list[Triple]:
        """The literature triples a user triple refers to: the same predicate between
        the literature entities its two ends are linked to (facts only, for a fact)."""
        heads, tails = self.graph.same_thing(t.head), self.graph.same_thing(t.tail)
        return sorted((x for x in ctx.triples if x.layer is Layer.LITERATURE
                       and self.is_fact(x) != proposed
                       and x.predicate == t.predicate and x.head in heads and x.tail in tails
                       and x.head in ctx.entities and x.tail in ctx.entities),
                      key=lambda x: (-x.confidence, x.id))

    def conditions(self, ctx: Context, facts: list[Fact],
                    citations: dict[tuple[str, int, int], Citation]) -> list[Condition]:
        """The conditions the answer holds under (:mod:`medkg.retrieval.conditions`)."""
        by_id = {t.id: t for t in ctx.triples}
        used = [by_id[f.triple_id] for f in facts if f.triple_id in by_id]

        def name(eid: str) -> str:
            return ctx.entities[eid].name if eid in ctx.entities else eid

        def cite(t: Triple) -> list[int]:
            return [self.cite(citations, self.graph.chunk(ev.chunk_id), ev.start, ev.end).n
                    for ev in t.evidence[:2]]

        # A caution is never hidden because its statement is below the facts' bar
        # (a missed contraindication costs more than a doubtful one), but it says so.
        pool = [t for t in ctx.triples if t.head in ctx.entities and t.tail in ctx.entities
                and t.in_force]
        stated = conditions(used, pool, ctx.question_entities, name, cite,
                            self.config.max_citations, ctx.intents)
        for cond in stated:
            cond.unreviewed = not any(self.is_fact(by_id[t]) for t in cond.triple_ids
                                      if t in by_id)
        return stated

    def verdict(self, question: str, q_concepts: list[str], ctx: Context,
                items: list[SentenceCandidate],
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
            return [self.cite(citations, self.graph.chunk(ev.chunk_id), ev.start, ev.end).n
                    for ev in t.evidence[:2]]

        def passage(c: SentenceCandidate) -> Passage:
            s = c.sentence
            return Passage(s.text, s.chunk.text,
                           lambda: self.cite(citations, s.chunk, s.start, s.end).n)

        conditions = named({"DISO", "PHEN"})
        # A condition the question names but no entity carries (the question's "CKD"
        # normalised to another concept than the documents' "chronic kidney
        # disease") is still looked for in the passages, by its vocabulary names.
        for cid in q_concepts:
            concept = self.concepts.get(cid) if self.concepts is not None else None
            if concept is not None and concept.semantic_group in ("DISO", "PHEN") and not any(
                    concept.name.lower() == c.name.lower() for c in conditions):
                conditions.append(Named(cid, concept.name, tuple(concept.terms()[:20]),
                                        concept.semantic_group))
        return decide(named({"CHEM"}), conditions, ctx.triples, self.is_fact, cite_triple,
                      [passage(c) for c in items])

    def definitions(self, q_concepts: list[str], facts: list[Fact]) -> list[Definition]:
        """Definitions of the question's terms, then of the terms in the facts shown."""
        concept_ids = list(dict.fromkeys([*q_concepts, *(c for f in facts for c in f.defined_by)]))
        out: list[Definition] = []
        for cid in concept_ids:
            if len(out) >= self.config.max_definitions:
                break
            try:
                concept = self.graph.store.concept(cid)
            except NotFoundError:
                continue  # an id no vocabulary holds (a dbSNP variant, say): no definition
            if concept.definition:
                out.append(Definition(term=concept.name, concept_id=concept.id,
                                      definition=concept.definition, source=concept.source))
        return out


def not_found(doc: Doc, lexical: LexicalIndex, store: GraphStore
          ) -> tuple[list[str], list[str]]:
    """The entities a question (``doc``: parsed) names, and those of them no document mentions
    (neither an entity of their concept nor a chunk holding their words).
    Organisms ("patients", "mice") say who, not what: they are not looked for."""
    ents = [e for e in doc.ents
            if not class_word(e.text) and e.label_ != "LIVB"]
    kb = {_span_name(e.text): e.kb_id_ for e in ents}
    named = list(dict.fromkeys(n for n in kb if n))
    missing = [n for n in named if not lexical.contains(n) and not (
        kb.get(n) and store.entities_of_concepts([kb[n]]))]
    return named, missing


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
