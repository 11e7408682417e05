"""Merging concepts from several vocabularies that name the same thing.

Two concepts are the same when one lists the other's id as a cross-reference
(DOID:6000 has xref MESH:D006333), when their preferred names are equal
after normalisation ("Atrial flutter" in HPO and "Atrial Flutter" in MeSH), or
when each one's preferred name is a synonym of the other and neither has
another such partner in the other's vocabulary (HPO "Arrhythmia", synonym
"Cardiac arrhythmias"; MeSH "Arrhythmias, Cardiac", entry term "Arrhythmia").
Semantic groups must be compatible in every case. A one-way synonym is not
enough: MeSH lists narrower terms as entry terms ("Metabolic acidosis" under
"Acidosis"), and merging on them would erase distinctions. Each group of equals becomes
one concept whose id comes from the most preferred source; the other ids
become cross-references, their names synonyms, so no id is lost and a lookup
by any of them still finds the concept.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from medkg.model import Concept
from medkg.ontology.index import normalize_term
from medkg.unionfind import UnionFind

DEFAULT_PREFERENCE = ("MESH", "UMLS", "DOID", "MONDO", "HP", "DRUGBANK")
_OPEN = {None, "", "CONC"}


def _prefix(concept_id: str) -> str:
    return concept_id.split(":", 1)[0].upper()


def _compatible(a: str | None, b: str | None) -> bool:
    """Groups that may name the same thing. A gene only equals a gene: symbols
    collide with words ("REST", "CAT") that open-group vocabularies list."""
    if "GENE" in (a, b):
        return a == b
    return a in _OPEN or b in _OPEN or a == b


def merge_equivalents(
    concepts: Iterable[Concept], prefer: Sequence[str] = DEFAULT_PREFERENCE
) -> list[Concept]:
    by_id: dict[str, Concept] = {}
    for c in concepts:
        by_id[c.id] = _fold(by_id[c.id], c) if c.id in by_id else c
    groups = UnionFind()
    for c in by_id.values():
        for ref in c.xrefs:
            if ref in by_id and _compatible(c.semantic_group, by_id[ref].semantic_group):
                groups.union(c.id, ref)
    by_name: dict[str, list[str]] = {}
    for c in by_id.values():
        if not c.obsolete:
            by_name.setdefault(normalize_term(c.name), []).append(c.id)
    for ids in by_name.values():
        for other_id in ids[1:]:
            if _compatible(by_id[ids[0]].semantic_group, by_id[other_id].semantic_group):
                groups.union(ids[0], other_id)
    for a, b in _mutual_names(by_id):
        groups.union(a, b)
    rank = {p: i for i, p in enumerate(prefer)}
    members: dict[str, list[Concept]] = {}
    for c in by_id.values():
        members.setdefault(groups.find(c.id), []).append(c)
    merged_groups: list[Concept] = []
    representative: dict[str, str] = {}
    for group in members.values():
        group.sort(key=lambda c: (rank.get(_prefix(c.id), len(rank)), c.id))
        merged = group[0]
        for other in group[1:]:
            merged = _fold(merged, other)
        merged_groups.append(merged)
        representative.update((c.id, merged.id) for c in group)
    # Parents may name concepts that were folded into another: point at the survivor.
    return [c.model_copy(update={"parents": list(dict.fromkeys(
        representative.get(p, p) for p in c.parents if representative.get(p, p) != c.id))})
        for c in merged_groups]


def _name_keys(name: str) -> set[str]:
    """A name normalised as written and, for inverted MeSH-style names
    ("Arrhythmias, Cardiac"), in natural order."""
    keys = {normalize_term(name)}
    head, sep, tail = name.rpartition(", ")
    if sep and head and "," not in head:
        keys.add(normalize_term(f"{tail} {head}"))
    return keys


def _mutual_names(by_id: dict[str, Concept]) -> list[tuple[str, str]]:
    """Pairs from different vocabularies that list each other's preferred name,
    kept only where each side has exactly one such partner in the other's vocabulary."""
    live = [c for c in by_id.values() if not c.obsolete]
    terms = {c.id: set().union(*(_name_keys(t) for t in c.terms())) for c in live}
    by_term: dict[str, list[str]] = {}
    for cid, keys in terms.items():
        for key in keys:
            by_term.setdefault(key, []).append(cid)
    partners: dict[tuple[str, str], set[str]] = {}  # (id, other vocabulary) -> ids
    for c in live:
        for key in _name_keys(c.name):
            for other in by_term.get(key, []):
                o = by_id[other]
                if (_prefix(other) != _prefix(c.id) and _name_keys(o.name) & terms[c.id]
                        and _compatible(c.semantic_group, o.semantic_group)):
                    partners.setdefault((c.id, _prefix(other)), set()).add(other)
    pairs = []
    for (cid, _vocabulary), others in partners.items():
        if len(others) != 1:
            continue
        [other] = others
        if partners.get((other, _prefix(cid))) == {cid} and cid < other:
            pairs.append((cid, other))
    return pairs


def _fold(keep: Concept, other: Concept) -> Concept:
    """``other`` joins ``keep``: its id a cross-reference, its names synonyms."""
    names = [other.name, *other.synonyms]
    synonyms = [*keep.synonyms, *(n for n in names if n.lower() != keep.name.lower())]
    xrefs = [*keep.xrefs, *([other.id] if other.id != keep.id else []), *other.xrefs]
    sources = keep.source if other.source in keep.source else f"{keep.source} + {other.source}"
    return keep.model_copy(update={
        "synonyms": list(dict.fromkeys(synonyms)),
        "definition": keep.definition or other.definition,
        "semantic_type": keep.semantic_type or other.semantic_type,
        "semantic_group": (keep.semantic_group if keep.semantic_group not in _OPEN
                           else other.semantic_group or keep.semantic_group),
        "parents": list(dict.fromkeys([*keep.parents, *other.parents])),
        "xrefs": [x for x in dict.fromkeys(xrefs) if x != keep.id],
        "source": sources,
    })
