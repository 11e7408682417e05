"""What an evidence sentence states about a drug and a condition: an adverse effect,
an indication, a prevention or a contraindication.

A classifier that reads co-occurrence ("lithium ... oliguria") cannot tell "used to
manage oliguria" from "caused oliguria"; the words of the sentence can. Rule E001
of the RuleHub uses :func:`stated_instead` to find adverse-effect and causal
triples whose every evidence quote states something else, and the corrector
restates them with the predicate the quote states. Rule E002 uses
:func:`induced_by_another`: "calcitonin potentiated haloperidol-induced
catalepsy" names haloperidol, not calcitonin, as the cause; the corrector moves
the claim to the chemical the quote names, when the graph has it. Rules E003
and E004 use :func:`condition_of_population` ("patients with AML undergoing ...":
the condition is who was treated) and :func:`negated_in` ("without apnea").
Every function asks the same of each quote: a claim stands as soon as one quote
may support it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from medkg.model import Predicate, Triple

CAUSAL = frozenset({Predicate.HAS_ADVERSE_EFFECT, Predicate.CAUSES})
_CONTRAINDICATION = re.compile(
    r"\bcontra-?indicat\w*|\bshould (?:not|never) be (?:used|given|taken|prescribed)"
    r"|\bmust (?:not|never) be (?:used|given)|\bavoid\w* in (?:patients|those|people)",
    re.IGNORECASE)
_INDICATION = re.compile(
    r"\btreats\b|\btreating\b|\bindicated (?:for|in)\b"
    r"|\bused (?:to (?:treat|manage|control|relieve|reverse)|"
    r"(?:for|in) the (?:treatment|management|therapy|control) of|for)\b"
    r"|\b(?:for|in) the (?:treatment|management|therapy|control) of\b"
    r"|\bto (?:treat|manage|control|relieve|reverse|alleviate)\b"
    r"|\b(?:treated|managed|controlled) (?:with|by|using)\b|\btreatment (?:for|of)\b"
    r"|\b[\w]+-treated\b"
    r"|\btherapy (?:for|of)\b|\beffective (?:in|for|against)\b|\befficacy\b"
    r"|\b(?:improv|alleviat|ameliorat|reliev|revers|attenuat)\w*"
    # orders and notes: "Start amlodipine 5 mg daily for hypertension"
    r"|\b\d+(?:\.\d+)?\s*(?:mg|mcg|µg|g|units?|ml|puffs?|tablets?)\b[^.;]{0,40}?\bfor\b"
    r"|\b(?:start|started|starting|begin|began|continue|continued|prescribed|initiated)\b"
    r"[^.;]{0,60}?\bfor\b",
    re.IGNORECASE)
_PREVENTION = re.compile(
    r"\bprevent\w*|\bprotect\w* (?:against|from)\b|\bprophyla\w*"
    r"|\b(?:reduc|lower)\w* the (?:risk|incidence) of\b", re.IGNORECASE)
_ADVERSE = re.compile(
    r"\binduc\w*|\bcaus\w*|\badverse\b|\bside[- ]effects?\b|\btoxic\w*|\bcomplicat\w*"
    r"|\bdevelop\w*|\bprecipitat\w*|\bprovok\w*|\bassociated with\b|\b\w+-related\b"
    r"|\battribut\w*|\bafter\b|\bfollowing\b|\bsecondary to\b|\bdue to\b|\boverdos\w*"
    r"|\bintoxica\w*|\bpoison\w*|\bexacerbat\w*|\bworsen\w*|\brisk of\b|\bincreas\w*",
    re.IGNORECASE)


def states(quote: str) -> Predicate | None:
    """The predicate a quote states between a drug and a condition when it says only
    one kind of thing: contraindicated_in, treats or prevents without any word of
    harm; None when it speaks of harm, or of nothing this function knows."""
    if _ADVERSE.search(quote):
        return None
    if _CONTRAINDICATION.search(quote):
        return Predicate.CONTRAINDICATED_IN
    if _INDICATION.search(quote):
        return Predicate.TREATS
    if _PREVENTION.search(quote):
        return Predicate.PREVENTS
    return None


def stated_instead(predicate: Predicate, quotes: Iterable[str]) -> Predicate | None:
    """For an adverse-effect or causal claim: the one other predicate that every
    quote states instead, or None when a quote may support the claim (or the
    quotes disagree)."""
    if predicate not in CAUSAL:
        return None
    stated = {states(q) for q in quotes if q.strip()}
    if len(stated) != 1:
        return None
    return stated.pop()


_INDUCER = re.compile(
    r"([\w][\w.'-]*?(?:\s*\([\w.-]+\))?)\s*-?\s*(?:induced|caused|evoked|triggered)"
    r"(?!\s+by\b)\s+"
    r"((?:[\w-]+\s+){0,3}?[\w-]+(?:\s+[\w-]+){0,3})", re.IGNORECASE)


# Words before "-induced" that name no chemical: "treatment-induced seizures" leaves the
# inducer to the words before ("levomepromazine-fluvoxamine treatment").
_GENERIC_INDUCERS = frozenset({
    "treatment", "therapy", "drug", "drugs", "medication", "medications", "dose", "doses",
    "exposure", "agent", "agents", "combination", "administration", "infusion", "injection",
    "withdrawal", "overdose", "use", "abuse", "intake", "stress", "exercise", "surgery",
    "chemotherapy", "radiation", "radiotherapy", "anesthesia", "anaesthesia", "diet",
})


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[\W_]+", " ", text.lower()).split())


def induced_by_another(quotes: Iterable[str], head: Iterable[str], tail: Iterable[str]
                       ) -> str | None:
    """The chemical that every quote names as the inducer of the tail ("haloperidol-
    induced catalepsy") when it is not the head's name or one of its mentions; None
    when a quote names the head as the inducer or names no inducer of the tail."""
    heads = {_normal(h) for h in head if h.strip()}
    tails = {_normal(t) for t in tail if t.strip()}
    inducer = None
    for quote in quotes:
        found = None
        for m in _INDUCER.finditer(quote):
            after = _normal(m.group(2))
            if not any(after.startswith(t) or f" {t}" in f" {after}" for t in tails):
                continue
            who = _normal(re.sub(r"[()]", " ", m.group(1)))
            if who in _GENERIC_INDUCERS:
                return None  # the quote names no inducing chemical here
            if any(h == who or h in who.split() or who in h.split() for h in heads):
                return None  # the head itself induces the tail
            short = re.search(r"\(([\w.-]+)\)", m.group(1))  # "(BHA)": the abbreviation
            found = found or (short.group(1) if short else m.group(1))
        if found is None:
            return None
        inducer = inducer or found
    return inducer


_WHO = (r"(?:patients?|subjects?|women|men|children|infants|adults|cases?|males?|females?"
        r"|volunteers|individuals|people|rats|mice|dogs|animals|man|woman|boy|girl)")
_POPULATION_OF = re.compile(
    rf"\b{_WHO}\s+(?:\w+\s+){{0,2}}?(?:with|having|suffering from|diagnosed with|"
    rf"with a history of|undergoing|treated for|admitted for|admitted with)\s+"
    rf"((?:[^\s.]+\s+){{0,14}}[^\s.]+)", re.IGNORECASE)
# Where a population phrase ends: a verb or a clause of what happened to them.
_PHRASE_END = re.compile(
    r"\s(?:who|which|that|developed|experienced|had|has|have|received|receiving|was|were|"
    r"is|are|showed|presented|treated|given|taking|took|undergoing|on|after|during|"
    r"following)\b.*",
    re.IGNORECASE)
_HISTORY = re.compile(r"\b(?:history of|known|pre-?existing|underlying|chronic)\s+"
                      r"((?:[\w-]+\s+){0,3}[\w-]+)", re.IGNORECASE)
_CAUSAL_WORD = re.compile(r"induced|associated|related|caused|due to|secondary", re.IGNORECASE)
_NEGATION = re.compile(
    r"\b(?:without|no|not|neither|nor|absence of|free of|lack of|did not (?:cause|induce|"
    r"produce|develop|result in|increase)|was not|were not|no evidence of)\b"
    r"((?:\s+[\w,-]+){0,6})", re.IGNORECASE)


_SCOPE_END = re.compile(r"\s(?:but|however|although|though|except|yet|whereas|while)\b.*",
                        re.IGNORECASE)


def _names(text: str, surfaces: set[str]) -> bool:
    padded = f" {_normal(text)} "
    return any(f" {s} " in padded for s in surfaces)


def _only_within(quote: str, spans: list[tuple[int, int]], tails: set[str]) -> bool:
    """Whether the quote names the tail in these spans and nowhere else."""
    if not spans:
        return False
    rest = quote
    for start, end in sorted(spans, reverse=True):
        rest = rest[:start] + " " + rest[end:]
    return not _names(rest, tails)


def condition_of_population(quotes: Iterable[str], head: Iterable[str], tail: Iterable[str]
                            ) -> bool:
    """Whether every quote names the tail only as the condition of the people
    treated ("patients with AML undergoing ...", "a history of schizophrenia"), not
    as what the head did: such a claim reads the indication as an adverse effect.
    A quote that ties the tail to the head ("amiodarone-induced thyrotoxicosis")
    or names the tail elsewhere too is no such case."""
    heads = {_normal(h) for h in head if h.strip()}
    tails = {_normal(t) for t in tail if t.strip()}
    seen = False
    for quote in quotes:
        spans = []
        for pattern in (_POPULATION_OF, _HISTORY):
            for m in pattern.finditer(quote):
                phrase = _PHRASE_END.sub("", m.group(1))
                if (_names(phrase, tails) and not _CAUSAL_WORD.search(phrase)
                        and not _names(phrase, heads)):
                    spans.append((m.start(1), m.start(1) + len(phrase)))
        if not _only_within(quote, spans, tails):
            return False
        seen = True
    return seen


def negated_in(quotes: Iterable[str], tail: Iterable[str]) -> bool:
    """Whether every quote names the tail only right after a negation ("without
    side effects such as sedation, apnea", "did not cause hepatotoxicity")."""
    tails = {_normal(t) for t in tail if t.strip()}
    seen = False
    for quote in quotes:
        negated = []
        for m in _NEGATION.finditer(quote):
            scope = _SCOPE_END.sub("", m.group(1))
            if _names(scope, tails):
                negated.append((m.start(1), m.start(1) + len(scope)))
        if not _only_within(quote, negated, tails):
            return False
        seen = True
    return seen


def negated(t: Triple) -> Triple:
    """``t`` as a negated claim (another id), its evidence kept."""
    qualifiers = t.qualifiers.model_copy(update={"negated": True})
    return t.model_copy(deep=True, update={
        "id": Triple.key_for(t.layer, t.head, t.predicate, t.tail, qualifiers),
        "qualifiers": qualifiers, "method": f"{t.method}+negated"})


def restated(t: Triple, predicate: Predicate) -> Triple:
    """``t`` with another predicate (and so another id), its evidence and
    qualifiers kept, its method saying it was restated."""
    return t.model_copy(deep=True, update={
        "id": Triple.key_for(t.layer, t.head, predicate, t.tail, t.qualifiers),
        "predicate": predicate, "method": f"{t.method}+restated"})


def corrected(t: Triple, rules: dict[str, str]) -> Triple | None:
    """The typed correction of a triple whose only hard faults are these evidence
    rules (rule id -> the violation's detail): E001 the predicate the evidence
    states, E003 ``associated_with``, E004 negated; None for anything else (E002
    needs the graph's entities: the loop's corrector moves the claim itself)."""
    if rules.keys() == {"E001"}:
        return restated(t, Predicate(rules["E001"]))
    if rules.keys() == {"E003"}:
        return restated(t, Predicate.ASSOCIATED_WITH)
    if rules.keys() == {"E004"}:
        return negated(t)
    return None
