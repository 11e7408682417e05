"""A verdict for "can I give X to a patient with Y?", only where the evidence says one.

A clinician asking whether a drug may be given with a condition wants a yes, a
no or a "careful", and the source of it. The answer states one only when a cited
statement or sentence supports it, strongest first:

- **contraindicated**: a ``contraindicated_in`` statement from the drug to the
  condition, or a sentence about the drug that says it is contraindicated, must
  not or should not be given, or is to be avoided, in a passage that names the
  condition ("Metformin is contraindicated in patients with an eGFR below 30" in
  a section on chronic kidney disease: the sentence carries its own condition);
- **caution**: a sentence about the drug, in such a passage, that says to reduce
  or adjust the dose, monitor, or use with caution; or a sentence naming both
  that says the drug does harm there ("in some adults with asthma, NSAIDs such as
  ibuprofen cause bronchospasm");
- **no evidence found**: neither; the answer says the workspace does not say.

A verdict drawn only from a statement below ``facts.min_precision`` says so
(``unreviewed``). Pure: the retriever hands in the question's entities, the
statements and the candidate sentences.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from medkg.model import Predicate, Triple

_ASKS = re.compile(
    r"\b(?:can|could|may|should|shall)\s+(?:i|we|you|one|he|she|they)\s+"
    r"(?:give|use|prescribe|start|continue|take|restart|add)\b|"
    r"\bis\s+(?:it\s+)?safe\b|\bsafe\s+to\b|\bcontraindicated\b|\bok(?:ay)?\s+to\s+give\b",
    re.IGNORECASE)
_CONTRAINDICATED = re.compile(
    r"\bcontraindicat\w*|\b(?:must|should)\s+not\s+be\s+(?:used|given|taken|combined|"
    r"prescribed)|\bdo\s+not\s+(?:use|give|prescribe)|\bavoid(?:ed)?\b|\bstop\s+\w+\s+because",
    re.IGNORECASE)
_CAUTION = re.compile(
    r"\bcaution\w*|\b(?:dose|doses)\s+(?:should|must|is|are)\s+(?:be\s+)?(?:reduced|"
    r"adjusted|lowered|halved)|\breduce[ds]?\s+the\s+dose|\bdose\s+(?:reduction|adjustment)|"
    r"\bmonitor\w*|\b(?:checked|measured)\s+every\b", re.IGNORECASE)

# A sentence naming the drug and the condition that says the drug does harm there
# ("in some adults with asthma, NSAIDs such as ibuprofen cause bronchospasm").
_HARM = re.compile(r"\b(?:caus\w*|induc\w*|exacerbat\w*|worsen\w*|precipitat\w*|"
                   r"risk\s+of|adverse|side[- ]effects?)\b", re.IGNORECASE)

Kind = Literal["contraindicated", "caution", "no evidence found"]


class Verdict(BaseModel):
    """What the evidence says about giving ``drug`` with ``condition``."""

    kind: Kind
    drug: str
    condition: str
    text: str
    citations: list[int] = []
    triple_ids: list[str] = []
    unreviewed: bool = False  # drawn only from a statement below the facts' bar


def asks_for_verdict(question: str) -> bool:
    return bool(_ASKS.search(question))


@dataclass(frozen=True)
class Named:
    """An entity the question names: its id, name, surface forms, semantic group."""

    id: str
    name: str
    surfaces: tuple[str, ...]
    group: str

    def named_in(self, text: str) -> bool:
        low = text.lower()
        return any(re.search(rf"\b{re.escape(s.lower())}", low) for s in self.surfaces if s)


@dataclass(frozen=True)
class Passage:
    """A candidate sentence with the text of the chunk (passage) around it."""

    text: str
    passage: str
    cite: Callable[[], int]  # its citation number, made when used


def decide(drugs: Sequence[Named], conditions: Sequence[Named], triples: Iterable[Triple],
           is_fact: Callable[[Triple], bool], cite_triple: Callable[[Triple], list[int]],
           passages: Sequence[Passage]) -> Verdict | None:
    """The verdict for the first drug and condition the question names, or None when
    it does not name both (then it is no such question)."""
    if not drugs or not conditions:
        return None
    drug, condition = drugs[0], conditions[0]
    drug_ids = {d.id for d in drugs}
    condition_ids = {c.id for c in conditions}
    stated = [t for t in triples if t.predicate is Predicate.CONTRAINDICATED_IN
              and t.in_force and not t.qualifiers.negated
              and t.head in drug_ids and t.tail in condition_ids]
    if stated:
        stated.sort(key=lambda t: (not is_fact(t), -t.confidence, t.id))
        best = stated[0]
        return Verdict(kind="contraindicated", drug=drug.name, condition=condition.name,
                       text=f"Contraindicated: {drug.name} in {condition.name}.",
                       citations=cite_triple(best), triple_ids=[t.id for t in stated],
                       unreviewed=not any(is_fact(t) for t in stated))
    def names_condition(text: str) -> bool:
        return any(c.named_in(text) for c in conditions)

    for kind, cue, where in (("contraindicated", _CONTRAINDICATED, "passage"),
                             ("caution", _CAUTION, "passage"), ("caution", _HARM, "sentence")):
        said = [p for p in passages if drug.named_in(p.text) and cue.search(p.text)
                and names_condition(p.passage if where == "passage" else p.text)]
        if said:
            verb = "Contraindicated" if kind == "contraindicated" else "Caution"
            return Verdict(kind=kind, drug=drug.name, condition=condition.name,
                           text=f"{verb}, as the source says: \"{said[0].text}\"",
                           citations=[said[0].cite()])
    return Verdict(kind="no evidence found", drug=drug.name, condition=condition.name,
                   text=f"No statement or sentence in this workspace says whether "
                        f"{drug.name} can be given with {condition.name}.")
