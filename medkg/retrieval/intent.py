"""What a question asks for, as the predicates whose triples answer it.

"What treats X?" wants ``treats`` triples about X; "What are the risks of
Y?" wants ``has_adverse_effect``/``causes``/``contraindicated_in``. Cue words
are matched on word starts, so "treatment", "treated" and "treats" all count.
"""

from __future__ import annotations

import re

from medkg.errors import RetrievalError
from medkg.model import Predicate
from medkg.text import clean_text

_CUES: dict[Predicate, tuple[str, ...]] = {
    Predicate.TREATS: ("treat", "therap", "drug", "medic", "manag", "first-line", "prescri",
                       "relie", "control"),
    Predicate.HAS_ADVERSE_EFFECT: ("risk", "side effect", "adverse", "harm", "complication",
                                   "danger", "safety", "cause"),
    Predicate.CAUSES: ("cause", "lead to", "risk factor", "why"),
    Predicate.CONTRAINDICATED_IN: ("contraindicat", "avoid", "should not", "risk", "safe"),
    Predicate.HAS_SYMPTOM: ("symptom", "sign", "present", "feel", "complain"),
    Predicate.DIAGNOSES: ("diagnos", "test", "confirm", "detect", "investigat"),
    Predicate.PREVENTS: ("prevent", "reduce the risk", "protect", "lower the risk"),
    Predicate.INTERACTS_WITH: ("interact", "combin", "together with"),
    Predicate.LOCATION_OF: ("where", "organ", "affect"),
    Predicate.ASSOCIATED_WITH: ("associat", "link", "related", "risk factor"),
    Predicate.IS_A: ("what is", "type of", "kind of"),
}


def question_predicates(question: str) -> set[Predicate]:
    """The predicates a question's wording asks about (empty: no clear intent)."""
    low = question.lower()
    return {
        predicate
        for predicate, cues in _CUES.items()
        if any(re.search(rf"\b{re.escape(cue)}", low) for cue in cues)
    }


# "Which drugs ...", "what genes ...": the semantic groups an answer entity has.
_ANSWER_TYPES: dict[str, tuple[str, ...]] = {
    "CHEM": ("drug", "medication", "medicine", "chemical", "compound", "agent", "therap"),
    "DISO": ("disease", "disorder", "condition", "adverse effect", "side effect",
             "complication", "symptom", "syndrome"),
    "GENE": ("gene", "protein", "receptor", "enzyme"),
}
_WHICH = re.compile(r"\b(?:which|what)\s+(?:other\s+)?([a-z -]{3,40})")


def answer_groups(question: str) -> set[str]:
    """The semantic groups a "which X / what X" question wants its answers in
    (empty: the question does not say)."""
    m = _WHICH.search(question.lower())
    if m is None:
        return set()
    head = m.group(1)
    return {group for group, cues in _ANSWER_TYPES.items()
            if any(head.startswith(cue) or f" {cue}" in head[:20] for cue in cues)}


def class_word(text: str) -> bool:
    """Whether a question's words name a kind of answer ("drugs", "genes", "the
    conditions") rather than a topic: "which diseases ..." is not about the concept
    Disease."""
    low = text.lower().strip()
    low = low[4:] if low.startswith("the ") else low
    return any(low == cue or low.rstrip("s") == cue.rstrip("s") or low == f"{cue}s"
               for cues in _ANSWER_TYPES.values() for cue in cues)


def check_question(question: str, limit: int) -> str:
    """The question, stripped; an empty, wordless or over-long one is refused (before any
    model is loaded: :func:`medkg.pipeline.ask.compose` checks it once, on the way
    in); text no output can carry (a lone surrogate from an undecodable argument)
    is replaced first."""
    question = clean_text(question).strip()
    if not question:
        raise RetrievalError("the question is empty")
    if not any(c.isalnum() for c in question):
        raise RetrievalError("the question has no words (no letter or digit)")
    if len(question) > limit:
        raise RetrievalError(
            f"the question is {len(question):,} characters; at most {limit:,} are taken",
            hint="shorten it, or raise retrieval.max_question_chars")
    return question


_ABOUT_PATIENTS = re.compile(
    r"\b(?:my|our|the|which|what|any|whose)\s+(?:\w+\s+)?patients?\b|\bpatients?\s+(?:had|has|have|with|"
    r"who)\b|\bwho\s+(?:had|has|have)\b", re.IGNORECASE)


def about_patients(question: str) -> bool:
    """Whether a question asks about patients ("which of my patients had a
    stroke?"): a family history or a negated mention is then no answer."""
    return bool(_ABOUT_PATIENTS.search(question))
