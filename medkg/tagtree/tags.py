"""Tag summaries (MedGraphRAG): what a chunk's meta-graph is about, under fixed
medical tag categories.

The builtin engine fills the tags from the graph, extractively: every entity
mentioned in the chunk goes under the category its semantic group, its
qualifiers and its triples give it (a disorder that a triple names as an
adverse effect is an adverse event, and so is, in the user's notes, one named in a
sentence that names a drug and says it brought it on ("developed wheeze and
bronchospasm after ibuprofen", "hyperkalemia, probably due to lisinopril"); one
mentioned as history is patient history; an HPO phenotype or the tail of
``has_symptom`` is a sign or symptom; a procedure with laboratory words or a
measured value is a laboratory result).
The LLM engine writes the tags with the ``tag_summary`` prompt. A group of
summaries is summarised by counting: the terms most of its members share.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel

from medkg.model import Entity, Layer, Predicate, Triple
from medkg.text import sentence_spans

CATEGORIES: tuple[str, ...] = (
    "symptoms_and_signs", "diagnoses_and_conditions", "patient_history",
    "anatomy_and_body_functions", "medications_and_doses", "procedures",
    "laboratory_results", "adverse_events", "genes_and_organisms",
)
LABELS = {c: c.replace("_and_", " and ").replace("_", " ") for c in CATEGORIES}
MAX_TERMS = 8
_LAB = re.compile(r"\b(level|levels|count|serum|plasma|blood|urine|assay|test|concentration|"
                  r"titer|titre|ratio|score|mg/dl|mmol/l|g/dl|µmol/l|iu/l|u/l)\b", re.IGNORECASE)
# A sentence of a note that says a drug brought a disorder on (with the drug named in it).
_BROUGHT_ON = re.compile(r"\b(?:caus\w*|induc\w*|due to|secondary to|attributed to|"
                         r"side[- ]effects?|adverse|develop\w*|after (?:taking|starting|the)|"
                         r"since starting|intoleran\w*|reaction)\b", re.IGNORECASE)
_INDICATION = re.compile(r"\b(?:for|to treat|to prevent|against)\s+$", re.IGNORECASE)
_DOSE = re.compile(r"\b\d+(?:\.\d+)?\s*(?:mg|mcg|µg|g|units?|iu|ml|mg/kg)\b", re.IGNORECASE)


class TagSummary(BaseModel):
    tags: dict[str, list[str]] = {}

    def text(self) -> str:
        """``symptoms and signs: cough, fever; medications and doses: ...``"""
        parts = [f"{LABELS.get(c, c)}: {', '.join(terms)}"
                 for c in CATEGORIES if (terms := self.tags.get(c))]
        return "; ".join(parts)

    def terms(self) -> set[str]:
        return {t.lower() for terms in self.tags.values() for t in terms}

    def __bool__(self) -> bool:
        return any(self.tags.values())


_GROUP_CATEGORY = {"DISO": "diagnoses_and_conditions", "PHEN": "symptoms_and_signs",
                   "CHEM": "medications_and_doses", "ANAT": "anatomy_and_body_functions",
                   "PHYS": "anatomy_and_body_functions", "PROC": "procedures",
                   "DEVI": "procedures", "GENE": "genes_and_organisms",
                   "LIVB": "genes_and_organisms"}


def category_of_group(group: str) -> str | None:
    """The category a bare mention of this semantic group goes under."""
    return _GROUP_CATEGORY.get(group)


def category_of(entity: Entity, text: str, triples: Sequence[Triple],
                brought_on: Sequence[tuple[int, int]] = ()) -> str | None:
    """The tag category of an entity mentioned in ``text``, given the triples
    the chunk states about it and the sentences (``brought_on``, offsets in
    ``text``) of a note that say a drug named there brought something on."""
    as_tail = {t.predicate for t in triples if t.tail == entity.id}
    history = any(m.qualifiers.historical or m.qualifiers.experiencer != "patient"
                  for m in entity.mentions)
    group = entity.type
    if group in ("DISO", "PHEN"):
        if Predicate.HAS_ADVERSE_EFFECT in as_tail:
            return "adverse_events"
        if any(s <= m.start and m.end <= e and not m.qualifiers.negated
               and m.qualifiers.experiencer == "patient"
               and not _INDICATION.search(text[max(s, m.start - 12) : m.start])
               for m in entity.mentions for s, e in brought_on):
            return "adverse_events"
        if history:
            return "patient_history"
        if Predicate.HAS_SYMPTOM in as_tail or any(c.startswith("HP:")
                                                   for c in entity.concept_ids):
            return "symptoms_and_signs"
        return "diagnoses_and_conditions"
    if group in ("PROC", "DEVI"):
        window = " ".join(text[max(0, m.start - 12): m.end + 20] for m in entity.mentions[:3])
        return "laboratory_results" if _LAB.search(window) else "procedures"
    return category_of_group(group)


def summarise_chunk(text: str, offset: int, entities: Iterable[Entity],
                    triples: Sequence[Triple]) -> TagSummary:
    """The builtin tag summary of one chunk (``text`` starts at document offset
    ``offset``); entities with their mentions in this chunk only."""
    tags: dict[str, list[str]] = {}
    entities = list(entities)
    brought_on = _brought_on(text, offset, entities)
    for entity in sorted(entities, key=lambda e: min((m.start for m in e.mentions), default=0)):
        mentions = [m.model_copy(update={"start": m.start - offset, "end": m.end - offset})
                    for m in entity.mentions]
        shifted = entity.model_copy(update={"mentions": mentions})
        category = category_of(shifted, text, triples, brought_on)
        if category is None:
            continue
        term = entity.name
        if category == "medications_and_doses":
            near = " ".join(text[m.end: m.end + 25] for m in mentions[:1])
            if (dose := _DOSE.search(near)) is not None:
                term = f"{entity.name} {dose.group(0)}"
        bucket = tags.setdefault(category, [])
        if term not in bucket and len(bucket) < MAX_TERMS:
            bucket.append(term)
    return TagSummary(tags=tags)


def _brought_on(text: str, offset: int, entities: Sequence[Entity]) -> list[tuple[int, int]]:
    """The sentences of a user's note (offsets in ``text``) that name a drug and say
    it brought something on. Literature chunks are left to their statements."""
    drugs = [(m.start - offset, m.end - offset) for e in entities
             if e.type == "CHEM" and e.layer is Layer.USER for m in e.mentions]
    if not drugs:
        return []
    return [(s, e) for s, e in sentence_spans(text) if _BROUGHT_ON.search(text[s:e])
            and any(s <= a and b <= e for a, b in drugs)]


def merge(summaries: Iterable[TagSummary], limit: int = MAX_TERMS) -> TagSummary:
    """A group's summary: per category, the terms most of its members name."""
    counts: dict[str, Counter[str]] = {}
    for s in summaries:
        for category, terms in s.tags.items():
            # Each member counts a term once; ties keep the order terms first came in
            # (a set here made the order, and so the cut at ``limit``, differ per run).
            counts.setdefault(category, Counter()).update(dict.fromkeys(terms, 1))
    return TagSummary(tags={c: [t for t, _ in counts[c].most_common(limit)]
                            for c in CATEGORIES if c in counts})
