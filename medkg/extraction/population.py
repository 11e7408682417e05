"""The population a statement is made about, read from its evidence sentence:
"in children", "in patients with severe CKD", "among elderly women".

A bare "in patients" names no population; a group word with a modifier or a
condition does. The result is the phrase as written (whitespace collapsed), so
an answer can state it as a condition of validity.
"""

from __future__ import annotations

import re

_MODIFIER = (r"(?:elderly|older|old|young|younger|adult|pediatric|paediatric|pregnant|"
             r"lactating|breast-?feeding|postmenopausal|premenopausal|obese|overweight|"
             r"critically ill|hospitali[sz]ed|diabetic|hypertensive|healthy|male|female|"
             r"term|preterm|premature|elderly|frail|renal|hepatic|cirrhotic|asian|"
             r"african|caucasian|white|black|hispanic)")
_GROUP = (r"(?:children|child|adolescents|teenagers|infants|neonates|newborns|babies|"
          r"adults|women|men|girls|boys|elderly|patients|subjects|volunteers|individuals|"
          r"people|persons|populations?|mothers|smokers|athletes)")
_SPECIFIC = (r"(?:children|child|adolescents|teenagers|infants|neonates|newborns|babies|"
             r"women|men|girls|boys|elderly|mothers|smokers|athletes)")
_TAIL = (r"(?:\s+(?:with|without|aged|over|under|older than|younger than|receiving|on)"
         r"\s+[^,.;:()]{2,50})")
_POPULATION = re.compile(
    rf"\b(?:in|among|for|to)\s+(?:(?:the|all|some|many|most|\d[\d,]*)\s+)?"
    rf"((?:{_MODIFIER}[\s,]+){{0,3}}{_GROUP}{_TAIL}?)",
    re.IGNORECASE)
_SPECIFIC_RE = re.compile(rf"^(?:{_SPECIFIC})$", re.IGNORECASE)
_STOP = re.compile(r"\s+(?:and|or|who|which|that|than|but|was|were|is|are|had|has)\b.*$",
                   re.IGNORECASE)


def population_of(text: str) -> str | None:
    """The first population the text names, or None (a bare "in patients" is none)."""
    for match in _POPULATION.finditer(text):
        phrase = " ".join(match.group(1).split())
        phrase = _STOP.sub("", phrase).strip(" ,")
        words = phrase.split()
        if len(words) > 1 or _SPECIFIC_RE.match(phrase):
            return phrase
    return None
