"""Builtin relation extraction: typed surface patterns between adjacent mentions.

A pattern fires when the text between two consecutive entity mentions of one
sentence matches its trigger and the semantic groups of head and tail fit the
predicate. Lists continue a relation ("used to treat A, B and C").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from medkg.model import Predicate

ANY = frozenset({"*"})
UNTYPED = frozenset({"CONC", ""})
CHEM = frozenset({"CHEM"})
TREATMENT = frozenset({"CHEM", "PROC", "DEVI"})
DISORDER = frozenset({"DISO", "PHEN"})
ANAT = frozenset({"ANAT"})
TEST = frozenset({"PROC", "DEVI"})


@dataclass(frozen=True)
class Pattern:
    name: str
    trigger: re.Pattern[str]
    predicate: Predicate
    first: frozenset[str]  # groups allowed for the mention that comes first
    second: frozenset[str]
    reverse: bool = False  # True: the second mention is the head
    confidence: float = 0.7  # the prior, used until the pattern is calibrated


def _p(
    name: str, trigger: str, predicate: Predicate, first: frozenset[str],
    second: frozenset[str], *, reverse: bool = False, confidence: float = 0.7,
) -> Pattern:
    # The trigger may be followed by determiners or modifiers: "can cause a dry cough".
    regex = rf"^\W*(?:{trigger})(?:\s+{_DET})*\W*$"
    return Pattern(
        name, re.compile(regex, re.IGNORECASE), predicate, first, second, reverse, confidence
    )


_ADV = r"(?:\w+ly\s+)?"
_BE = r"(?:(?:is|are|was|were|has been|have been|can be|may be)\s+)"
_DET = r"(?:a|an|the|some|severe|mild|acute|new|persistent|recurrent)"
_ADJ = r"(?:(?:common|known|rare|serious|but|and|very|frequent|severe|important)\s+)*"

PATTERNS: tuple[Pattern, ...] = (
    _p("treats", rf"{_ADV}(?:treats?|treated|{_BE}?{_ADV}(?:used|indicated|given|prescribed|"
       rf"started|effective)\s+(?:to treat|for|in|against)(?: the treatment of| patients with)?|"
       r"(?:is|are) (?:a|an|the)? ?(?:first-line |standard )?(?:treatment|therapy) for|"
       r"for the treatment of|to treat|to control|relieves?|for)", Predicate.TREATS,
       TREATMENT, DISORDER, confidence=0.75),
    _p("treated_with", rf"{_BE}?{_ADV}(?:treated|managed|controlled) (?:with|by|using)|"
       r"responds? to|(?:was|were) started on", Predicate.TREATS, DISORDER, TREATMENT,
       reverse=True, confidence=0.75),
    _p("adverse", rf"{_ADV}(?:can|may|might|often|commonly|frequently)?\s*(?:causes?|caused|"
       r"induces?|induced|leads? to|led to|results? in|resulted in|produces?)|"
       r"(?:side|adverse) effects? (?:include|such as|like)",
       Predicate.HAS_ADVERSE_EFFECT, CHEM, DISORDER, confidence=0.7),
    _p("adverse_of", rf"{_BE}?{_ADV}(?:(?:(?:a|an)\s+)?{_ADJ}(?:side|adverse) effects? of|"
       r"induced by|caused by)", Predicate.HAS_ADVERSE_EFFECT,
       DISORDER, CHEM, reverse=True, confidence=0.7),
    _p("causes", rf"{_ADV}(?:can|may|might|often|commonly)?\s*(?:causes?|caused|leads? to|"
       r"results? in|triggers?)", Predicate.CAUSES, frozenset({"DISO", "LIVB", "PHEN"}),
       DISORDER, confidence=0.65),
    _p("caused_by", rf"{_BE}?{_ADV}(?:(?:caused|triggered) by|due to|secondary to)",
       Predicate.CAUSES, DISORDER, frozenset({"DISO", "LIVB", "PHEN"}), reverse=True,
       confidence=0.65),
    _p("prevents", rf"{_ADV}(?:prevents?|prevented|{_BE}?used to prevent|reduces? the risk of|"
       r"lowers? the risk of|protects? against|for (?:the )?prevention of)", Predicate.PREVENTS,
       TREATMENT, DISORDER, confidence=0.7),
    _p("contraindicated", rf"{_BE}?contraindicated in(?: patients with)?|should not be "
       r"(?:used|given|taken) (?:in|by)(?: patients with)?|must be avoided in(?: patients with)?",
       Predicate.CONTRAINDICATED_IN, TREATMENT, DISORDER, confidence=0.8),
    _p("symptom", r"(?:often |typically |usually )?(?:presents?|presented|presenting) with|"
       r"(?:is |are )?characteri[sz]ed by|(?:symptoms|signs) (?:include|such as)|"
       r"causes symptoms such as|manifests? as|complained of|complains of",
       Predicate.HAS_SYMPTOM, DISORDER, DISORDER, confidence=0.7),
    _p("symptom_of", rf"{_BE}?(?:(?:a|an|the)\s+)?(?:(?:common|classic|typical|early)\s+)*"
       r"(?:symptom|sign|feature|manifestation) of", Predicate.HAS_SYMPTOM, DISORDER,
       DISORDER, reverse=True, confidence=0.75),
    _p("diagnoses", rf"{_BE}?(?:used to (?:diagnose|detect|confirm)|diagnoses|confirms?|"
       r"detects?)", Predicate.DIAGNOSES, TEST, DISORDER, confidence=0.7),
    _p("diagnosed_by", rf"{_BE}?(?:diagnosed|confirmed|detected) (?:by|with|using|on)",
       Predicate.DIAGNOSES, DISORDER, TEST, reverse=True, confidence=0.7),
    _p("is_a", r"(?:is|are) (?:a|an)\s*(?:type|form|kind|class|subtype) of|(?:is|are) (?:a|an)",
       Predicate.IS_A, ANY, ANY, confidence=0.6),
    _p("location", rf"{_ADV}(?:affects?|affecting|involves?|involving|occurs? in|"
       r"located in|of the|in the)", Predicate.LOCATION_OF, DISORDER, ANAT, reverse=True,
       confidence=0.6),
    _p("interacts", r"interacts? with|(?:should not be|must not be) combined with|"
       r"increases? the effect of", Predicate.INTERACTS_WITH, CHEM, CHEM, confidence=0.7),
    _p("associated", rf"{_BE}?(?:associated with|linked to|a risk factor for|"
       r"related to|correlated with)", Predicate.ASSOCIATED_WITH, ANY, ANY, confidence=0.55),
)

_LIST_JOIN = re.compile(r"^\s*(?:,|,?\s*(?:and|or)|,\s*(?:and|or))\s*$", re.IGNORECASE)
MAX_GAP_CHARS = 80
# (a change to the patterns here bumps extraction.nlp.BUILTIN_RULES_VERSION)
# "X is a Y <noun>": Y only modifies the noun after it, and X is not a Y
# ("warfarin is a vitamin K antagonist" does not say warfarin is vitamin K).
_MODIFIED_NOUN = re.compile(
    r"\s*-?\s*(?:antagonists?|agonists?|inhibitors?|blockers?|analog(?:ue)?s?|derivatives?|"
    r"precursors?|metabolites?|receptors?|deficienc(?:y|ies)|antibod(?:y|ies)|levels?|"
    r"tests?|vaccines?|modulators?|activators?|binders?|reductases?|kinases?|pathways?|"
    r"genes?|proteins?|mutations?|variants?|carriers?|resistan(?:t|ce)|associated|related|"
    r"induced|dependent|positive|negative|free|like|based|containing|sparing)\b",
    re.IGNORECASE)


CALIBRATION = Path(__file__).resolve().parents[1] / "models" / "relations" / "patterns.json"
MIN_JUDGED = 10  # a pattern judged fewer times on the training splits keeps its prior


@cache
def calibrated_confidence() -> dict[str, float]:
    """Pattern name -> its precision measured on the training splits
    (``training/train_relations.py``); patterns not measured are absent."""
    try:
        data = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {name: float(entry["confidence"]) for name, entry in data["patterns"].items()
            if "confidence" in entry}


def confidence_of(pattern: Pattern) -> float:
    """What a relation this pattern states is worth: measured, else the prior."""
    return calibrated_confidence().get(pattern.name, pattern.confidence)


def _fits(groups: frozenset[str], group: str) -> bool:
    return groups is ANY or group in groups


@dataclass(frozen=True)
class PairMatch:
    head_index: int
    tail_index: int
    predicate: Predicate
    pattern: str
    confidence: float


def match_pairs(text: str, mentions: list[tuple[int, int, str]]) -> list[PairMatch]:
    """Relations among one sentence's mentions, given as sorted (start, end, group).

    ``text`` is the sentence; offsets are relative to it.
    """
    matches: list[PairMatch] = []
    for i in range(len(mentions) - 1):
        a, b = mentions[i], mentions[i + 1]
        gap = text[a[1] : b[0]]
        if len(gap) > MAX_GAP_CHARS:
            continue
        for pattern in PATTERNS:
            if not (_fits(pattern.first, a[2]) and _fits(pattern.second, b[2])):
                continue
            if pattern.predicate is Predicate.IS_A and (a[2] != b[2] or a[2] in UNTYPED
                                                        or _MODIFIED_NOUN.match(text[b[1]:])):
                continue  # "X is a Y" types only within one group, Y not a modifier
            if not pattern.trigger.match(gap):
                continue
            # The relation carries over a list that follows the second mention.
            tails = [i + 1]
            j = i + 1
            while j + 1 < len(mentions) and _LIST_JOIN.match(
                text[mentions[j][1] : mentions[j + 1][0]]
            ) and _fits(pattern.second, mentions[j + 1][2]):
                tails.append(j + 1)
                j += 1
            for t in tails:
                head, tail = (t, i) if pattern.reverse else (i, t)
                matches.append(PairMatch(head, tail, pattern.predicate, pattern.name,
                                         confidence_of(pattern)))
            break
    return matches
