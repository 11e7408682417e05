"""Entity resolution inside a layer: which entities name the same thing.

Entities normalised to the same concept are already one entity (their id comes
from the concept). The rest are resolved here:

1. candidates: the nearest entities by embedding (``name; type; context``);
2. a pair merges when its types are compatible, the two are not known to be
   different concepts, no near-miss guard fires, and either one is an
   abbreviation the documents define for the other, or both the embedding
   similarity and the name similarity clear their thresholds;
3. merges are ``same_as`` links from each merged entity to the cluster's
   survivor (the one with a concept, else the most mentioned), with the score
   and method. Nothing is fused in the store: undoing a merge removes its link
   and records ``different_from``, which later builds respect.

Near-miss guards stop the merges peers get wrong: opposite prefixes
(hypertension / hypotension, hyperkalemia / hypokalemia, tachycardia /
bradycardia), different numbers (type 1 / type 2 diabetes, stage II / III),
names that differ only in a letter (hepatitis B / C), laterality and other
opposed words, and negated forms (non-small cell, atypical).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from medkg.linking.embeddings import Matrix
from medkg.linking.linker import compatible
from medkg.linking.vectors import VectorIndex
from medkg.model import Entity, Link, LinkKind
from medkg.unionfind import UnionFind

OPPOSED_PREFIXES = (("hyper", "hypo"), ("hyper", "normo"), ("hypo", "normo"),
                    ("tachy", "brady"), ("micro", "macro"), ("poly", "olig"),
                    ("endo", "exo"), ("intra", "extra"), ("pre", "post"), ("sub", "supra"),
                    ("inter", "intra"))
OPPOSED_WORDS = (("left", "right"), ("upper", "lower"), ("acute", "chronic"),
                 ("benign", "malignant"), ("primary", "secondary"), ("anterior", "posterior"),
                 ("increased", "decreased"), ("high", "low"), ("positive", "negative"),
                 ("early", "late"), ("systolic", "diastolic"), ("central", "peripheral"),
                 ("maternal", "paternal"), ("male", "female"))
NEGATING = ("non", "anti", "un", "in", "a")
_WORDS = re.compile(r"[a-z0-9]+")
_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)?|i{1,3}|iv|v|vi{0,3}|ix|x)$")


@dataclass(frozen=True)
class ResolutionSettings:
    candidates: int = 10
    min_cosine: float = 0.85
    min_name_similarity: float = 0.75


def _words(name: str) -> list[str]:
    return _WORDS.findall(name.lower())


def near_miss(a: str, b: str) -> str | None:
    """Why two names must not merge although they look alike, or None."""
    wa, wb = _words(a), _words(b)
    na = {w for w in wa if _NUMBER.match(w)} | {m for w in wa for m in re.findall(r"\d+", w)}
    nb = {w for w in wb if _NUMBER.match(w)} | {m for w in wb for m in re.findall(r"\d+", w)}
    if na != nb:
        return f"different numbers ({sorted(na)} vs {sorted(nb)})"
    for x, y in OPPOSED_PREFIXES:
        for one, two in ((wa, wb), (wb, wa)):
            if any(w.startswith(x) for w in one) and any(w.startswith(y) for w in two) \
                    and not any(w.startswith(y) for w in one):
                return f"opposite prefixes {x}-/{y}-"
    sa, sb = set(wa), set(wb)
    for x, y in OPPOSED_WORDS:
        if (x in sa and y in sb and y not in sa) or (y in sa and x in sb and x not in sa):
            return f"opposed words {x}/{y}"
    differing = sa ^ sb
    if differing and differing <= set(NEGATING) | {"not", "without", "no"}:
        return f"one negates the other ({sorted(differing)})"  # non-small cell / small cell
    if differing and all(len(w) <= 2 for w in differing):
        return f"differ only in a short token ({sorted(differing)})"  # hepatitis B / C
    for word_a, word_b in zip(wa, wb, strict=False):
        for prefix in NEGATING:
            if word_a == prefix + word_b or word_b == prefix + word_a:
                return f"one negates the other ({word_a}/{word_b})"
    return None


def name_similarity(a: str, b: str) -> float:
    """Similarity of two names as written (lower case, words only), 0..1."""
    return SequenceMatcher(None, " ".join(_words(a)), " ".join(_words(b))).ratio()


def _different_concepts(a: Entity, b: Entity) -> bool:
    return bool(a.concept_ids and b.concept_ids and not set(a.concept_ids) & set(b.concept_ids))


def resolve(
    entities: Sequence[Entity],
    vectors: Matrix,
    index: VectorIndex,
    abbreviations: dict[str, str] | None = None,
    refused: Iterable[tuple[str, str]] = (),
    settings: ResolutionSettings = ResolutionSettings(),
    mention_counts: Mapping[str, int] | None = None,
) -> list[Link]:
    """``same_as`` links for the entities of one layer (``index`` holds their vectors).

    ``abbreviations`` maps short forms defined in the documents to long forms;
    ``refused`` pairs (from ``different_from`` links) never merge; a cluster's
    survivor is the entity with a concept and the most mentions (``mention_counts``
    where the entities came without their mentions).
    """
    by_id = {e.id: e for e in entities}
    no = {frozenset(p) for p in refused}
    expansions = {k.lower(): v.lower() for k, v in (abbreviations or {}).items()}
    clusters = UnionFind()
    scored: dict[frozenset[str], tuple[float, str]] = {}
    allowed = set(by_id)  # once: a set per entity made resolution quadratic
    for entity, vector in zip(entities, vectors, strict=True):
        for other_id, cosine in index.search(vector, settings.candidates + 1, allowed):
            other = by_id[other_id]
            pair = frozenset((entity.id, other_id))
            if other_id == entity.id or pair in scored or pair in no:
                continue
            verdict = _judge(entity, other, cosine, expansions, settings)
            if verdict is not None:
                scored[pair] = verdict
                clusters.union(entity.id, other_id)
    members: dict[str, list[Entity]] = {}
    for eid in clusters.parent:
        members.setdefault(clusters.find(eid), []).append(by_id[eid])
    links = []
    for group in members.values():
        if len(group) < 2:
            continue
        survivor = max(group, key=lambda e: (
            bool(e.concept_ids),
            mention_counts[e.id] if mention_counts is not None else len(e.mentions), e.id))
        for e in group:
            if e.id == survivor.id:
                continue
            score, method = scored.get(frozenset((e.id, survivor.id)), (0.0, "transitive"))
            links.append(Link(kind=LinkKind.SAME_AS, source=e.id, target=survivor.id,
                              score=round(score, 4), method=f"resolution:{method}"))
    return sorted(links, key=lambda link: (link.target, link.source))


def _judge(a: Entity, b: Entity, cosine: float, expansions: dict[str, str],
           settings: ResolutionSettings) -> tuple[float, str] | None:
    if not compatible(a.type, b.type) or _different_concepts(a, b):
        return None
    if near_miss(a.name, b.name) is not None:
        return None
    an, bn = a.name.lower(), b.name.lower()
    if expansions.get(an) == bn or expansions.get(bn) == an:
        return 1.0, "abbreviation"
    if cosine < settings.min_cosine:
        return None
    if name_similarity(a.name, b.name) < settings.min_name_similarity:
        return None
    return cosine, "embedding+name"
