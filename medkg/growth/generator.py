"""The SAC-KG generator: triples about one head entity, from the corpus sentences
that mention it most and from example triples of the vocabulary layer.

Two engines behind one interface (:class:`Generator`):

- :class:`BuiltinGenerator` proposes the relations the builtin extractor
  (patterns and the learned relation classifier) states in the head's context
  sentences and that involve the head. The extractor works sentence by
  sentence, so reading its per-sentence results for the retrieved sentences is
  the same as running it over the context. It corrects by the error's type:
  a type-constraint error whose reversed triple fits is reversed; evidence that
  does not name both ends is re-anchored on a context sentence that does;
  anything else is dropped.
- :class:`LLMGenerator` sends the ``generate_triples`` prompt (context and
  examples) and the ``correct_triples`` prompt with the verifier's errors.
  Names must be entities mentioned in the context and evidence must be a
  context sentence: nothing is invented.

Our predicates are directed (a disease is the *tail* of ``treats``), so "a
triple about the head" is one with the head entity at either end; the other end
is the candidate for the next level.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from medkg.errors import LLMOutputError
from medkg.extraction.population import population_of
from medkg.growth.corpus import Sentence, SentenceCorpus
from medkg.llm.client import LLM
from medkg.llm.port import Message
from medkg.llm.prompts import load_prompt
from medkg.llm.schemas import GeneratedTriple, TripleAnswer
from medkg.model import Entity, Evidence, Layer, Qualifiers, Triple
from medkg.ontology.index import ConceptIndex, normalize_term
from medkg.rulehub.evidence import corrected
from medkg.rulehub.rules import RuleSet
from medkg.rulehub.verify import Violation

STAGE = "generate"


@dataclass(frozen=True)
class Head:
    """The entity being expanded: a node of the corpus and its entities in each layer."""

    node: str
    name: str
    type: str
    entity_ids: frozenset[str]
    concept_id: str | None = None


@dataclass
class Context:
    head: Head
    sentences: list[Sentence]
    examples: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(s.text for s in self.sentences)


def example_triples(head: Head, concepts: ConceptIndex, limit: int) -> list[str]:
    """Up to ``limit`` triples about the head's concept from the vocabulary layer's
    own relations (its hierarchy), as format examples; a head without a concept
    gets none."""
    if limit <= 0 or head.concept_id is None or (c := concepts.get(head.concept_id)) is None:
        return []
    out = []
    for parent in c.parents:
        if (p := concepts.get(parent)) is not None:
            out.append(f"({c.name}, is_a, {p.name})")
    return out[:limit]


class Generator(Protocol):
    name: str

    def generate(self, ctx: Context) -> list[Triple]:
        """Triples about ``ctx.head`` stated in ``ctx.sentences``."""
        ...

    def correct(self, ctx: Context, rejected: Mapping[str, list[Violation]],
                triples: Mapping[str, Triple]) -> list[tuple[str, Triple]]:
        """Corrected versions of the rejected triples, each with the id of the triple
        it corrects; a rejected triple without one is dropped."""
        ...


def _merge(triples: Sequence[Triple]) -> list[Triple]:
    """One triple per id, evidence pooled, the highest confidence kept."""
    out: dict[str, Triple] = {}
    for t in triples:
        if t.id in out:
            known = out[t.id]
            known.evidence += [e for e in t.evidence if e not in known.evidence]
            known.confidence = max(known.confidence, t.confidence)
        else:
            out[t.id] = t.model_copy(deep=True)
    return list(out.values())


def reversed_triple(t: Triple) -> Triple:
    return t.model_copy(update={
        "id": Triple.key_for(t.layer, t.tail, t.predicate, t.head, t.qualifiers),
        "head": t.tail, "tail": t.head, "method": f"{t.method}+reversed"})


class BuiltinGenerator:
    name = "builtin"

    def __init__(self, corpus: SentenceCorpus, entities: Mapping[str, Entity],
                 rules: RuleSet) -> None:
        self._corpus = corpus
        self._entities = entities
        self._rules = rules
        self._by_surface: dict[tuple[str, str, Layer], Entity] | None = None

    def generate(self, ctx: Context) -> list[Triple]:
        found = self._corpus.candidates([s.id for s in ctx.sentences])
        about = [t for t in found if {t.head, t.tail} & ctx.head.entity_ids]
        return _merge(about)

    def correct(self, ctx: Context, rejected: Mapping[str, list[Violation]],
                triples: Mapping[str, Triple]) -> list[tuple[str, Triple]]:
        out = []
        for triple_id, violations in rejected.items():
            t = triples[triple_id]
            rules = {v.rule for v in violations}
            type_rule = self._rules.type_rule(t.predicate)
            if type_rule is not None and rules == {type_rule.id}:
                swapped = reversed_triple(t)
                if self._fits(swapped):
                    out.append((triple_id, swapped))
            elif rules <= {"E001", "E003", "E004"}:
                fixed = corrected(t, {v.rule: v.detail for v in violations})
                if fixed is not None:
                    out.append((triple_id, fixed))
            elif rules == {"E002"}:
                inducer = next(v.detail for v in violations if v.rule == "E002")
                head = self._named(inducer, "CHEM", t.layer)
                if head is not None and head.id != t.tail:
                    out.append((triple_id, t.model_copy(deep=True, update={
                        "id": Triple.key_for(t.layer, head.id, t.predicate, t.tail,
                                             t.qualifiers),
                        "head": head.id, "method": f"{t.method}+reheaded"})))
            elif rules <= {"S005", "S006"}:
                anchored = self._reanchor(t, ctx.sentences)
                if anchored is not None:
                    out.append((triple_id, anchored))
        return out

    def _named(self, text: str, group: str, layer: Layer) -> Entity | None:
        """The entity of ``group`` in ``layer`` whose name or a mention is ``text``."""
        if self._by_surface is None:
            self._by_surface = {}
            for e in self._entities.values():
                for surface in {e.name, *(m.text for m in e.mentions)}:
                    self._by_surface.setdefault((normalize_term(surface), e.type, e.layer), e)
        return self._by_surface.get((normalize_term(text), group, layer))

    def _fits(self, t: Triple) -> bool:
        rule = self._rules.type_rule(t.predicate)
        head, tail = self._entities.get(t.head), self._entities.get(t.tail)
        return (rule is not None and head is not None and tail is not None
                and rule.allows(head.type or "CONC", tail.type or "CONC"))

    def _reanchor(self, t: Triple, sentences: Sequence[Sentence]) -> Triple | None:
        head, tail = self._entities.get(t.head), self._entities.get(t.tail)
        if head is None or tail is None:
            return None

        def names(e: Entity) -> set[str]:
            return {e.name.lower(), *(m.text.lower() for m in e.mentions)}

        for s in sentences:
            low = s.text.lower()
            if any(n in low for n in names(head)) and any(n in low for n in names(tail)):
                ev = Evidence(chunk_id=s.chunk_id, document_id=s.document_id, start=s.start,
                              end=s.end, quote=s.text)
                return t.model_copy(update={"evidence": [ev], "method": f"{t.method}+anchored"})
        return None


class LLMGenerator:
    name = "llm"

    def __init__(self, llm: LLM, corpus: SentenceCorpus, entities: Mapping[str, Entity]) -> None:
        self._llm = llm
        self._corpus = corpus
        self._entities = entities
        self._generate = load_prompt("generate_triples")
        self._correct = load_prompt("correct_triples")

    def generate(self, ctx: Context) -> list[Triple]:
        messages = self._generate.render(entity=ctx.head.name, sentences=ctx.text(),
                                         examples="\n".join(ctx.examples) or "(none)")
        return self._ask(ctx, messages)

    def correct(self, ctx: Context, rejected: Mapping[str, list[Violation]],
                triples: Mapping[str, Triple]) -> list[tuple[str, Triple]]:
        lines = []
        for triple_id, violations in rejected.items():
            t = triples[triple_id]
            head, tail = self._entities.get(t.head), self._entities.get(t.tail)
            why = "; ".join(f"{v.message} ({v.rule}). Hint: {v.hint}" for v in violations)
            lines.append(f"({head.name if head else t.head}, {t.predicate.value}, "
                         f"{tail.name if tail else t.tail}): {why}")
        messages = self._correct.render(entity=ctx.head.name, sentences=ctx.text(),
                                        errors="\n".join(lines))
        return _pair_up(self._ask(ctx, messages), [triples[i] for i in rejected])

    def _ask(self, ctx: Context, messages: list[Message]) -> list[Triple]:
        try:
            answer = self._llm.structured(STAGE, messages, TripleAnswer)
        except LLMOutputError as exc:
            self._llm.ledger.fail(STAGE, ctx.head.node, str(exc))
            return []
        out = []
        for g in answer.triples:
            triple = self._resolve(ctx, g)
            if triple is None:
                self._llm.ledger.fail(STAGE, ctx.head.node,
                                      f"({g.head}, {g.predicate.value}, {g.tail}): a name is "
                                      "not an entity of the context sentences")
            else:
                out.append(triple)
        return _merge(out)

    def _resolve(self, ctx: Context, g: GeneratedTriple) -> Triple | None:
        """Map the answer's names to entities mentioned in the context (the layer of
        the sentence the evidence is, else of the first sentence that names both)."""
        evidence = _find_sentence(ctx.sentences, g.evidence)
        for s in ([evidence] if evidence else []) + list(ctx.sentences):
            names = self._names(s)
            head, tail = names.get(normalize_term(g.head)), names.get(normalize_term(g.tail))
            if head is None or tail is None:
                continue
            ev = []
            if evidence is not None:
                ev = [Evidence(chunk_id=evidence.chunk_id, document_id=evidence.document_id,
                               start=evidence.start, end=evidence.end, quote=evidence.text)]
            layer = Layer(s.layer)
            qualifiers = self._qualifiers(evidence or s, head, tail)
            return Triple(id=Triple.key_for(layer, head, g.predicate, tail, qualifiers),
                          layer=layer, head=head, predicate=g.predicate, tail=tail,
                          evidence=ev, qualifiers=qualifiers, confidence=g.confidence,
                          method="llm:generate")
        return None

    def _qualifiers(self, s: Sentence, head: str, tail: str) -> Qualifiers:
        """The ConText qualifiers extraction gave the two entities' mentions in the
        sentence (negated or hedged if either is), and the population it names."""
        found = [m.qualifiers for eid in (head, tail)
                 for m in getattr(self._entities.get(eid), "mentions", [])
                 if m.document_id == s.document_id and s.start <= m.start < s.end]
        return Qualifiers(
            negated=any(q.negated for q in found), uncertain=any(q.uncertain for q in found),
            hypothetical=any(q.hypothetical for q in found),
            historical=any(q.historical for q in found),
            experiencer=next((q.experiencer for q in found if q.experiencer != "patient"),
                             "patient"),
            population=population_of(s.text))

    def _names(self, s: Sentence) -> dict[str, str]:
        out: dict[str, str] = {}
        for eid in self._corpus.entity_ids_in(s.id):
            e = self._entities.get(eid)
            if e is None:
                continue
            out.setdefault(normalize_term(e.name), eid)
            for m in e.mentions:
                if m.document_id == s.document_id and s.start <= m.start < s.end:
                    out.setdefault(normalize_term(m.text), eid)
        return out


def _pair_up(fixed: list[Triple], rejected: list[Triple]) -> list[tuple[str, Triple]]:
    """Which rejected triple each correction corrects: the one with the same two
    entities, else one sharing an entity, else the first one not yet corrected."""
    out = []
    free = list(rejected)
    for t in fixed:
        if not free:
            break
        match = (next((r for r in free if {r.head, r.tail} == {t.head, t.tail}), None)
                 or next((r for r in free if {r.head, r.tail} & {t.head, t.tail}), None)
                 or free[0])
        free.remove(match)
        out.append((match.id, t))
    return out


def _find_sentence(sentences: Sequence[Sentence], quote: str) -> Sentence | None:
    """The context sentence the quote is (or contains), compared without spacing or case."""
    want = " ".join(quote.split()).lower().strip(" .")
    if len(want) < 10:
        return None
    for s in sentences:
        have = " ".join(s.text.split()).lower()
        if want in have or (len(have) >= 10 and have.strip(" .") in want):
            return s
    return None
