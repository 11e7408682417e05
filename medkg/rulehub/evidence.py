"""What an evidence sentence states about a drug and a condition: an adverse effect,
an indication, a prevention or a contraindication.

A classifier that reads co-occurrence ("lithium ... oliguria") cannot tell "used to
manage oliguria" from "caused oliguria"; the words of the sentence can. Rule E001
of the RuleHub uses :func:`stated_instead` to find adverse-effect and causal
triples whose every evidence quote states something else, and the corrector
restates them with the predicate the quote states. Rule E002 uses
:func:`induced_by_another`: "calcitonin potentiated haloperidol-induced
catalepsy" names haloperidol, not calcitonin, as the cause; the corrector moves
the claim to the chemical the quote names, when the graph has it.
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
    r"|\btherapy (?:for|of)\b|\beffective (?:in|for|against)\b|\befficacy\b"
    r"|\b(?:improv|alleviat|ameliorat|reliev|revers|attenuat)\w*",
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
    r"([\w][\w.'-]*?(?:\s*\([\w.-]+\))?)\s*-?\s*(?:induced|caused|evoked|triggered)\s+"
    r"((?:[\w-]+\s+){0,3}?[\w-]+(?:\s+[\w-]+){0,3})", re.IGNORECASE)


def _normal(text: str) -> str:
    return " ".join(text.lower().replace("-", " ").split())


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
            if any(h == who or h in who.split() or who in h.split() for h in heads):
                return None  # the head itself induces the tail
            short = re.search(r"\(([\w.-]+)\)", m.group(1))  # "(BHA)": the abbreviation
            found = found or (short.group(1) if short else m.group(1))
        if found is None:
            return None
        inducer = inducer or found
    return inducer


def restated(t: Triple, predicate: Predicate) -> Triple:
    """``t`` with another predicate (and so another id), its evidence and
    qualifiers kept, its method saying it was restated."""
    return t.model_copy(deep=True, update={
        "id": Triple.key_for(t.layer, t.head, predicate, t.tail, t.qualifiers),
        "predicate": predicate, "method": f"{t.method}+restated"})
