"""Concept lookup: exact and synonym, abbreviations, and approximate.

- exact: names and synonyms normalised (case, separators, simple plurals), so
  "Type-2 diabetes mellitus" finds "type 2 diabetes mellitus";
- abbreviations: short capitalised synonyms ("CHF", "T2DM") match only in
  that case, so "chf" or "cap" do not;
- approximate: character 3-gram TF-IDF over every term with cosine ranking,
  as scispaCy's linker generates candidates, for misspellings and variants.

The approximate part is built on first use and can be saved to and loaded
from a directory, so a large vocabulary does not re-fit at every start.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medkg import files
from medkg.errors import StoreError
from medkg.model import Concept

CONCEPTS = "concepts.jsonl"
_PUNCT = re.compile(r"[\s\-_/,]+")


def normalize_term(text: str) -> str:
    """Lower-case, unify separators, and strip a plural 's' from the last word."""
    words = _PUNCT.sub(" ", text.lower()).strip().split(" ")
    last = words[-1]
    if len(last) > 4 and last.endswith("s") and not last.endswith(("ss", "us", "is")):
        words[-1] = last[:-1]
    return " ".join(words)


def is_acronym(term: str) -> bool:
    """Short terms at least half in capitals: "CHF", "ECG", "AFib", "T2DM"."""
    if len(term) > 6:
        return False
    letters = [c for c in term if c.isalpha()]
    upper = sum(c.isupper() for c in letters)
    return upper >= 2 and 2 * upper >= len(letters)


_TOKEN = re.compile(r"\w+(?:['\u2019-]\w+)*|[^\w\s]")
MAX_TERM_TOKENS = 8


@dataclass(frozen=True)
class Match:
    """A vocabulary term found in a text: ``text[start:end]`` names ``concept``."""

    start: int
    end: int
    concept: Concept


@dataclass(frozen=True)
class Candidate:
    concept: Concept
    score: float
    method: str  # "exact", "abbreviation" or "approximate"
    term: str  # the vocabulary term that matched


class ConceptIndex:
    """Lookup over a set of concepts (obsolete ones excluded)."""

    def __init__(self, concepts: Iterable[Concept]) -> None:
        self._concepts: dict[str, Concept] = {}
        self._by_term: dict[str, list[str]] = {}
        self._acronyms: dict[str, list[str]] = {}
        self._replaced_by: dict[str, str] = {}
        self._aliases: dict[str, str] = {}  # cross-referenced id -> concept id
        for concept in concepts:
            if concept.obsolete:
                if concept.replaced_by:
                    self._replaced_by[concept.id] = concept.replaced_by
                continue
            self._concepts[concept.id] = concept
            for ref in concept.xrefs:
                self._aliases.setdefault(ref, concept.id)
            for term in concept.terms():
                table, key = ((self._acronyms, term.strip()) if is_acronym(term.strip())
                              else (self._by_term, normalize_term(term)))
                ids = table.setdefault(key, [])
                if concept.id not in ids:
                    ids.append(concept.id)
        self._approx: _NgramIndex | None = None
        self._saved_approx: Path | None = None

    def __len__(self) -> int:
        return len(self._concepts)

    def __contains__(self, concept_id: object) -> bool:
        return concept_id in self._concepts

    def get(self, concept_id: str) -> Concept | None:
        return self._concepts.get(concept_id)

    def ancestors(self, concept_id: str) -> set[str]:
        """Every concept above this one along ``parents``."""
        seen: set[str] = set()
        stack = list(self._concepts[concept_id].parents) if concept_id in self._concepts else []
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                parent = self._concepts.get(current)
                stack.extend(parent.parents if parent else [])
        return seen

    def resolve(self, concept_id: str) -> Concept | None:
        """The live concept for an id: its own, the one that replaced it
        (``replaced_by``), or the one it was merged into (a cross-reference)."""
        seen: set[str] = set()
        while concept_id not in self._concepts and concept_id not in seen:
            seen.add(concept_id)
            nxt = self._replaced_by.get(concept_id) or self._aliases.get(concept_id)
            if nxt is None:
                return None
            concept_id = nxt
        return self._concepts.get(concept_id)

    def concepts(self) -> list[Concept]:
        return list(self._concepts.values())

    def terms(self) -> Iterable[tuple[str, Concept]]:
        """Every (surface term, concept) pair, for building phrase matchers."""
        for concept in self._concepts.values():
            for term in concept.terms():
                yield term, concept

    def find_in(self, text: str, min_chars: int = 3, stop_words: frozenset[str] = frozenset(),
                skip_groups: frozenset[str] = frozenset()) -> list[Match]:
        """Vocabulary terms in running text, longest match first, left to right.

        Dictionary lookups over token n-grams: no per-term set-up, so it starts
        instantly on a vocabulary of any size. Acronyms match only in capitals.
        Concepts of ``skip_groups`` are never matched: a term they share with
        another concept ("insulin": the gene and the hormone) names the other.
        """
        tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
        out: list[Match] = []
        i = 0
        while i < len(tokens):
            found: Match | None = None
            for n in range(min(MAX_TERM_TOKENS, len(tokens) - i), 0, -1):
                start, end = tokens[i][0], tokens[i + n - 1][1]
                surface = text[start:end]
                if len(surface) < min_chars or surface.lower() in stop_words:
                    continue
                ids = (self._acronyms.get(surface) if is_acronym(surface)
                       else self._by_term.get(normalize_term(surface)))
                if ids and skip_groups:
                    ids = [c for c in ids if self._concepts[c].semantic_group not in skip_groups]
                if ids:
                    found = Match(start, end, self._concepts[ids[0]])
                    i += n
                    break
            if found is None:
                i += 1
            else:
                out.append(found)
        return out

    def lookup(self, text: str) -> list[Concept]:
        """Concepts whose name or synonym is ``text`` (normalised; acronyms by case)."""
        ids = self._acronyms.get(text.strip(), []) if is_acronym(text.strip()) else []
        ids = ids + [i for i in self._by_term.get(normalize_term(text), []) if i not in ids]
        return [self._concepts[i] for i in ids]

    def search(self, text: str, k: int = 5) -> list[Candidate]:
        """Ranked candidates: exact and abbreviation matches first, then approximate."""
        out: dict[str, Candidate] = {}
        stripped = text.strip()
        if is_acronym(stripped):
            for cid in self._acronyms.get(stripped, []):
                out[cid] = Candidate(self._concepts[cid], 1.0, "abbreviation", stripped)
        for cid in self._by_term.get(normalize_term(text), []):
            out.setdefault(cid, Candidate(self._concepts[cid], 1.0, "exact", text))
        if len(out) < k and self._concepts:
            for term, cid, score in self.approximate().query(text, k * 3):
                if cid not in out:
                    out[cid] = Candidate(self._concepts[cid], score, "approximate", term)
                if len(out) >= k:
                    break
        return sorted(out.values(), key=lambda c: -c.score)[:k]

    def approximate(self) -> _NgramIndex:
        if self._approx is None and self._saved_approx is not None:
            self.load_approximate(self._saved_approx)
        if self._approx is None:
            pairs = [(normalize_term(t), c.id) for t, c in self.terms()]
            self._approx = _NgramIndex.fit(sorted(set(pairs)))
        return self._approx

    def save(self, directory: Path, derived_from: str = "") -> None:
        """Save the concepts and the n-gram index (each file atomically, then the
        manifest naming the vocabulary version they come from): ``load`` then
        skips the graph store."""
        files.forget_manifest(directory)
        self.approximate().save(directory)
        with files.atomic_text(directory / CONCEPTS) as f:
            for concept in self._concepts.values():
                f.write(concept.model_dump_json(exclude_defaults=True) + "\n")
        files.write_manifest(directory, [CONCEPTS, *_NgramIndex.FILES], derived_from)

    @classmethod
    def load(cls, directory: Path, derived_from: str = "") -> ConceptIndex | None:
        """A saved index, or None when there is none, it is incomplete or damaged
        (its files do not match the manifest), or it was made from another
        version of the vocabulary than ``derived_from``."""
        if not files.manifest_matches(directory, derived_from):
            return None
        try:
            with (directory / CONCEPTS).open(encoding="utf-8") as f:
                index = cls(Concept.model_validate_json(line) for line in f)
        except (OSError, ValueError):
            return None
        index._saved_approx = directory  # read on first approximate search
        return index

    def load_approximate(self, directory: Path) -> bool:
        """Use a saved n-gram index if it matches these concepts; False if absent/stale."""
        index = _NgramIndex.load(directory)
        if index is None or set(index.concept_ids) != set(self._concepts):
            return False
        self._approx = index
        return True


class _NgramIndex:
    """Character 3-gram TF-IDF vectors of terms, L2-normalised, in a sparse matrix."""

    FILES = ("matrix.npz", "idf.npy", "terms.json")

    def __init__(self, terms: list[str], concept_ids: list[str], vectorizer: Any,
                 matrix: Any) -> None:
        self.terms = terms
        self.concept_ids = concept_ids
        self._vectorizer = vectorizer
        self._matrix = matrix

    @staticmethod
    def _new_vectorizer() -> Any:
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 3), min_df=1,
                               dtype=np.float32, sublinear_tf=True)

    @classmethod
    def fit(cls, pairs: list[tuple[str, str]]) -> _NgramIndex:
        terms = [t for t, _ in pairs]
        vectorizer = cls._new_vectorizer()
        matrix = vectorizer.fit_transform(terms).tocsr()
        return cls(terms, [c for _, c in pairs], vectorizer, matrix)

    def query(self, text: str, k: int) -> list[tuple[str, str, float]]:
        vector = self._vectorizer.transform([normalize_term(text)])
        scores = (self._matrix @ vector.T).toarray().ravel()
        if not scores.size:
            return []
        top = np.argpartition(-scores, min(k, scores.size - 1))[:k]
        top = top[np.argsort(-scores[top])]
        return [(self.terms[i], self.concept_ids[i], float(scores[i]))
                for i in top if scores[i] > 0]

    def save(self, directory: Path) -> None:
        from scipy import sparse

        with files.atomic_binary(directory / "matrix.npz") as f:
            sparse.save_npz(f, self._matrix)
        with files.atomic_binary(directory / "idf.npy") as f:
            np.save(f, self._vectorizer.idf_)
        meta = {"terms": self.terms, "concept_ids": self.concept_ids,
                "vocabulary": {k: int(v) for k, v in self._vectorizer.vocabulary_.items()}}
        files.write_text(directory / "terms.json", json.dumps(meta))

    @classmethod
    def load(cls, directory: Path) -> _NgramIndex | None:
        from scipy import sparse

        if not (directory / "terms.json").exists():
            return None
        try:
            meta = json.loads((directory / "terms.json").read_text(encoding="utf-8"))
            matrix = sparse.load_npz(directory / "matrix.npz").tocsr()
            idf = np.load(directory / "idf.npy")
        except (OSError, ValueError, KeyError, EOFError) as exc:
            raise StoreError(f"{directory}: the concept index is unreadable ({exc})",
                             hint="delete the directory; it is rebuilt on next use") from exc
        vectorizer = cls._new_vectorizer()
        vectorizer.vocabulary_ = meta["vocabulary"]
        vectorizer.idf_ = idf
        return cls(meta["terms"], meta["concept_ids"], vectorizer, matrix)
