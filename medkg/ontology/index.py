"""Concept lookup by name and synonym.

Terms are normalised (case, whitespace, hyphens, simple plurals) so that
"Type 2 diabetes mellitus", "type-2 diabetes mellitus" and "type 2 diabetes
mellitus" find the same concept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from medkg.model import Concept

_PUNCT = re.compile(r"[\s\-_/,]+")


def normalize_term(text: str) -> str:
    """Lower-case, unify separators, and strip a plural 's' from the last word."""
    words = _PUNCT.sub(" ", text.lower()).strip().split(" ")
    last = words[-1]
    if len(last) > 4 and last.endswith("s") and not last.endswith(("ss", "us", "is")):
        words[-1] = last[:-1]
    return " ".join(words)


class ConceptIndex:
    """Exact and synonym lookup over a set of concepts (obsolete ones excluded)."""

    def __init__(self, concepts: Iterable[Concept]) -> None:
        self._concepts: dict[str, Concept] = {}
        self._by_term: dict[str, list[str]] = {}
        for concept in concepts:
            if concept.obsolete:
                continue
            self._concepts[concept.id] = concept
            for term in concept.terms():
                ids = self._by_term.setdefault(normalize_term(term), [])
                if concept.id not in ids:
                    ids.append(concept.id)

    def __len__(self) -> int:
        return len(self._concepts)

    def __contains__(self, concept_id: object) -> bool:
        return concept_id in self._concepts

    def get(self, concept_id: str) -> Concept | None:
        return self._concepts.get(concept_id)

    def lookup(self, text: str) -> list[Concept]:
        """Concepts whose name or synonym normalises to the same form as ``text``."""
        return [self._concepts[i] for i in self._by_term.get(normalize_term(text), [])]

    def concepts(self) -> list[Concept]:
        return list(self._concepts.values())

    def terms(self) -> Iterable[tuple[str, Concept]]:
        """Every (surface term, concept) pair, for building phrase matchers."""
        for concept in self._concepts.values():
            for term in concept.terms():
                yield term, concept
