"""The verifier: every rule of the RuleHub applied to candidate triples.

``Verifier.check`` looks at a batch of new triples (those generated for one
head entity, say) against the entities they name and the triples already in
the graph, and returns one :class:`Violation` per broken rule with its SAC-KG
error type, so a corrector can act on each type differently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from medkg.model import Entity, Predicate, Triple
from medkg.ontology.index import normalize_term
from medkg.rulehub.evidence import (
    CAUSAL,
    condition_of_population,
    induced_by_another,
    negated_in,
    stated_instead,
)
from medkg.rulehub.rules import ErrorType, Rule, RuleSet, load_rules

GENERIC = frozenset({"disease", "diseases", "patient", "patients", "treatment", "therapy",
                     "drug", "drugs", "medication", "condition", "symptom", "symptoms",
                     "effect", "effects", "problem", "thing", "it", "this", "that"})
MAX_NAME_WORDS = 12
_UNITS = r"(?:mg|g|mcg|µg|ug|units?|iu|ml|mmol|meq|mg/kg|mg/m2)"
# A minus sign only where no digit precedes it: "10-50 mg" is a range, not -50 mg.
_DOSE = re.compile(rf"(?<![\d.])(-?\d+(?:\.\d+)?)\s*{_UNITS}\b", re.IGNORECASE)
_BARE_DOSE = re.compile(rf"\bdoses?\s+(?:of\s+)?(\d+(?:\.\d+)?)\b(?!\s*(?:{_UNITS}|%|/))",
                        re.IGNORECASE)
_AGE = re.compile(r"\b(\d{1,4})[- ]years?[- ]old\b|\baged\s+(\d{1,4})\b", re.IGNORECASE)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
_CHANGE = re.compile(r"(increas|rise|rose|higher|more|greater|gain|change|improv)\w*"
                     r"\W+(?:\w+\W+){0,3}$", re.IGNORECASE)
_DASH = "\u2013"  # an en dash, as in "2019\u20132021"
_YEARS = re.compile(rf"\b((?:19|20)\d{{2}})\s*(?:-|{_DASH}|to|until|through)\s*"
                    rf"((?:19|20)\d{{2}})\b")
_DATES = re.compile(rf"(\d{{4}}-\d{{2}}-\d{{2}})\s*(?:{_DASH}|to|until|through|-{{1,2}}\s)\s*"
                    rf"(\d{{4}}-\d{{2}}-\d{{2}})")
_ONSET = re.compile(r"\bonset\D{0,30}?((?:19|20)\d{2})", re.IGNORECASE)
_RESOLVED = re.compile(r"\bresol\w*\D{0,30}?((?:19|20)\d{2})", re.IGNORECASE)


@dataclass(frozen=True)
class Violation:
    rule: str
    severity: str
    error: ErrorType
    triple_id: str | None  # None: about the batch as a whole
    message: str
    hint: str
    detail: str = ""

    @property
    def hard(self) -> bool:
        return self.severity == "hard"


class Verifier:
    def __init__(self, rules: RuleSet | None = None, min_triples: int = 1,
                 surface: Mapping[str, Sequence[str]] | None = None) -> None:
        self.rules = rules or load_rules()
        self.min_triples = min_triples
        self.surface = surface or {}  # entity id -> the texts it is mentioned by

    def _v(self, rule_id: str, triple: Triple | None, detail: str = "") -> Violation:
        rule: Rule = self.rules.get(rule_id)
        return Violation(rule.id, rule.severity, rule.error,
                         triple.id if triple is not None else None, rule.message, rule.hint,
                         detail)

    def check(
        self,
        triples: Sequence[Triple],
        entities: Mapping[str, Entity],
        requested_head: str | None = None,
        either_end: bool = False,
        existing: Iterable[Triple] = (),
    ) -> list[Violation]:
        """Violations of the new ``triples`` (names and groups from ``entities``;
        conflicts and cycles also against ``existing`` triples). ``requested_head``
        is the entity id or name the batch was generated for; with ``either_end``
        it may be the head or the tail (our predicates are directed: a disease
        the SAC-KG loop expands is the tail of ``treats``)."""
        out: list[Violation] = []
        if len(triples) < self.min_triples:
            out.append(self._v("S004", None, f"{len(triples)} < {self.min_triples}"))
        for t in triples:
            out += self._check_one(t, entities, requested_head, either_end)
        out += self._conflicts(triples, [*existing], entities)
        return out

    def _check_one(self, t: Triple, entities: Mapping[str, Entity],
                   requested_head: str | None, either_end: bool = False) -> list[Violation]:
        head, tail = entities.get(t.head), entities.get(t.tail)
        if head is None or tail is None or not head.name.strip() or not tail.name.strip():
            return [self._v("S001", t, "head or tail is missing")]
        out = []
        ends = (head, tail) if either_end else (head,)
        if requested_head is not None and not any(
                requested_head in (e.id, e.name)
                or normalize_term(requested_head) == normalize_term(e.name) for e in ends):
            out.append(self._v("S002", t, f"head {head.name!r}, requested {requested_head!r}"))
        if t.head == t.tail or normalize_term(head.name) == normalize_term(tail.name):
            out.append(self._v("S003", t, head.name))
        quotes = [e.quote for e in t.evidence if e.quote.strip()]
        if not quotes:
            out.append(self._v("S005", t))
        elif not any(n.lower() in q.lower() for q in quotes
                     for n in {head.name, tail.name, *self._surface(head),
                               *self._surface(tail)}):
            out.append(self._v("S006", t))
        instead = stated_instead(t.predicate, quotes)
        if instead is not None:
            out.append(self._v("E001", t, instead.value))
        elif t.predicate in CAUSAL and quotes:
            out += self._evidence_rules(t, quotes, {head.name, *self._surface(head)},
                                        {tail.name, *self._surface(tail)})
        if not 0.0 <= t.confidence <= 1.0:
            out.append(self._v("S007", t, str(t.confidence)))
        if tail.name.strip().lower() in GENERIC:
            out.append(self._v("S008", t, tail.name))
        if max(len(head.name.split()), len(tail.name.split())) > MAX_NAME_WORDS:
            out.append(self._v("S009", t))
        rule = self.rules.type_rule(t.predicate)
        if rule is not None and not rule.allows(head.type or "CONC", tail.type or "CONC"):
            out.append(self._v(rule.id, t, f"{head.name} ({head.type}) -> "
                                           f"{tail.name} ({tail.type})"))
        texts = [*quotes, head.name, tail.name, t.qualifiers.population or ""]
        out += [self._v(rule_id, t, detail) for rule_id, detail in _numeric_and_temporal(texts)]
        return out

    def _evidence_rules(self, t: Triple, quotes: list[str], head: set[str], tail: set[str]
                        ) -> list[Violation]:
        """E002-E004 for a causal claim; the first that applies (each has its own
        correction)."""
        inducer = induced_by_another(quotes, head, tail)
        if inducer is not None:
            return [self._v("E002", t, inducer)]
        if condition_of_population(quotes, head, tail):
            return [self._v("E003", t)]
        if not t.qualifiers.negated and negated_in(quotes, tail):
            return [self._v("E004", t)]
        return []

    def _surface(self, entity: Entity) -> Iterable[str]:
        """The texts an entity is mentioned by: its mentions', or what
        ``surface`` gave for it (entities read without their mentions)."""
        given = self.surface.get(entity.id)
        return given if given is not None else (m.text for m in entity.mentions)

    def _conflicts(self, new: Sequence[Triple], existing: list[Triple],
                   entities: Mapping[str, Entity]) -> list[Violation]:
        everything = {t.id: t for t in [*existing, *new]}.values()
        by_pair: dict[tuple[str, str], list[Triple]] = {}
        for t in everything:
            by_pair.setdefault((t.head, t.tail), []).append(t)
        out = []
        for t in new:
            others = [o for o in by_pair.get((t.head, t.tail), []) if o.id != t.id]
            preds = {o.predicate for o in others}
            opposite = {Predicate.TREATS, Predicate.CONTRAINDICATED_IN}
            qualified = t.qualifiers.population or any(
                o.qualifiers.population for o in others if o.predicate in opposite)
            if t.predicate in opposite and (opposite - {t.predicate}) & preds \
                    and not qualified:
                out.append(self._v("C001", t))
            docs = {e.document_id for e in t.evidence}
            if any(o.predicate is t.predicate and o.qualifiers.negated != t.qualifiers.negated
                   and docs & {e.document_id for e in o.evidence} for o in others):
                out.append(self._v("C002", t))
            if t.predicate in (Predicate.CAUSES, Predicate.PREVENTS) and (
                    {Predicate.CAUSES, Predicate.PREVENTS} - {t.predicate}) & preds:
                out.append(self._v("C005", t))
            if t.predicate in (Predicate.TREATS, Predicate.HAS_ADVERSE_EFFECT) and (
                    {Predicate.TREATS, Predicate.HAS_ADVERSE_EFFECT} - {t.predicate}) & preds:
                out.append(self._v("C006", t))
        for predicate, rule_id in ((Predicate.IS_A, "C003"), (Predicate.LOCATION_OF, "C004")):
            edges: dict[str, set[str]] = {}
            for t in everything:
                if t.predicate is predicate and not t.qualifiers.negated:
                    edges.setdefault(t.head, set()).add(t.tail)
            for t in new:
                if t.predicate is predicate and _reaches(edges, t.tail, t.head):
                    out.append(self._v(rule_id, t))
        return out


def _reaches(edges: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(edges.get(node, ()))
    return False


def _numeric_and_temporal(texts: Iterable[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for text in texts:
        for m in _DOSE.finditer(text):
            if float(m.group(1)) <= 0:
                found.append(("N001", m.group(0)))
        for m in _BARE_DOSE.finditer(text):
            found.append(("N002", m.group(0)))
        for m in _AGE.finditer(text):
            age = int(m.group(1) or m.group(2))
            if not 0 <= age <= 130:
                found.append(("N003", m.group(0)))
        for m in _PERCENT.finditer(text):
            if float(m.group(1)) > 100 and not _CHANGE.search(text[: m.start()]):
                found.append(("N004", m.group(0)))
        for m in _YEARS.finditer(text):
            if int(m.group(2)) < int(m.group(1)):
                found.append(("TM001", m.group(0)))
        for m in _DATES.finditer(text):
            if m.group(2) < m.group(1):
                found.append(("TM002", m.group(0)))
        onset, resolved = _ONSET.search(text), _RESOLVED.search(text)
        if onset and resolved and int(onset.group(1)) > int(resolved.group(1)):
            found.append(("TM003", f"onset {onset.group(1)}, resolved {resolved.group(1)}"))
    return sorted(set(found))
