"""Extraction quality against a PubTator gold standard (BC5CDR, BioRED, ...).

The pipeline sees only each document's text. Scores:

- entities: strict match of span and type, micro and per type;
- normalisation: of the predicted mentions whose span matches a gold mention
  that has an id, the share whose concept maps (by id or cross-reference) to a
  gold id; a mention left without a concept counts as wrong;
- relations: document-level concept pairs, as in the BC5CDR CID task: a
  predicted triple counts when its (head, tail) concept ids, mapped to the
  gold id space, form a gold pair in either order. Where the gold types have a
  known meaning (CID), only triples of that meaning are scored.

Types are mapped by semantic group: CHEM -> the corpus's chemical type, DISO
-> its disease type, GENE -> gene, LIVB -> organism, VARI -> variant (by name, so any PubTator
file with such types works).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel
from spacy.language import Language

from medkg.evaluation.pubtator import PubTatorDocument, read_pubtator
from medkg.extraction.extract import Relate, extract
from medkg.model import Chunk, Concept, Document, Layer, Predicate
from medkg.ontology.index import ConceptIndex

GROUP_WORDS = {"CHEM": "chemical", "DISO": "disease", "GENE": "gene", "LIVB": "organism",
               "VARI": "variant"}
RELATION_PREDICATES = frozenset({
    Predicate.CAUSES, Predicate.HAS_ADVERSE_EFFECT, Predicate.TREATS, Predicate.PREVENTS,
    Predicate.ASSOCIATED_WITH, Predicate.INTERACTS_WITH, Predicate.CONTRAINDICATED_IN,
})
# Gold relation types whose meaning one predicate family carries: a BC5CDR "CID"
# (chemical-induced disease) is matched by causal triples, not by "treats".
TYPE_PREDICATES = {"CID": frozenset({Predicate.CAUSES, Predicate.HAS_ADVERSE_EFFECT})}


def _scored_predicates(gold_types: set[str]) -> frozenset[Predicate]:
    """The predicates that count against a gold file: when every gold relation type
    has a known meaning, those predicates; otherwise every relation predicate."""
    if gold_types and gold_types <= TYPE_PREDICATES.keys():
        return frozenset().union(*(TYPE_PREDICATES[t] for t in gold_types))
    return RELATION_PREDICATES


class PRF(BaseModel):
    p: float
    r: float
    f1: float

    @classmethod
    def of(cls, tp: int, fp: int, fn: int) -> PRF:
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        return cls(p=round(p, 4), r=round(r, 4), f1=round(2 * p * r / (p + r), 4) if p + r else 0.0)


class EntityScores(BaseModel):
    micro: PRF
    by_type: dict[str, PRF]


class NormalizationScores(BaseModel):
    accuracy: float
    scored_mentions: int
    by_type: dict[str, float]


class ExtractionReport(BaseModel):
    documents: int
    entities: EntityScores
    normalization: NormalizationScores
    relations: PRF
    seconds: float


def _type_map(gold_types: Iterable[str]) -> dict[str, str]:
    """Semantic group -> the gold corpus's type name, matched by words."""
    mapping = {}
    for group, word in GROUP_WORDS.items():
        for t in gold_types:
            if word in t.lower():
                mapping[group] = t
                break
    return mapping


def _gold_ids(concept: Concept) -> set[str]:
    """The ids a concept can be scored under: its own and its cross-references,
    without prefix (PubTator ids are bare: D008687, 5243)."""
    out = set()
    for ref in (concept.id, *concept.xrefs):
        prefix, _, local = ref.partition(":")
        out.add(local if prefix.upper() in {"MESH", "MSH", "NCBIGENE", "NCBITAXON"} else ref)
    return out


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def evaluate(
    gold: Path, index: ConceptIndex, nlp: Language, relate: Relate | None = None
) -> ExtractionReport:
    docs = list(read_pubtator(gold))
    types = _type_map({m.type for d in docs for m in d.mentions})
    predicates = _scored_predicates({r.type for d in docs for r in d.relations})
    t0 = time.perf_counter()
    counts: Counter[str] = Counter()
    norm: Counter[str] = Counter()
    rel: Counter[str] = Counter()
    for doc in docs:
        _score_document(doc, index, nlp, relate, types, predicates, counts, norm, rel)
    seconds = time.perf_counter() - t0
    gold_types = sorted({m.type for d in docs for m in d.mentions})
    by_type = {t: PRF.of(counts[f"tp:{t}"], counts[f"fp:{t}"], counts[f"fn:{t}"])
               for t in gold_types}
    micro = PRF.of(*(sum(counts[f"{k}:{t}"] for t in gold_types) for k in ("tp", "fp", "fn")))
    return ExtractionReport(
        documents=len(docs),
        entities=EntityScores(micro=micro, by_type=by_type),
        normalization=NormalizationScores(
            accuracy=_share(norm["right"], norm["n"]), scored_mentions=norm["n"],
            by_type={t: _share(norm[f"right:{t}"], norm[f"n:{t}"])
                     for t in gold_types if norm[f"n:{t}"]}),
        relations=PRF.of(rel["tp"], rel["fp"], rel["fn"]),
        seconds=round(seconds, 2),
    )


def _score_document(doc: PubTatorDocument, index: ConceptIndex, nlp: Language,
                    relate: Relate | None, types: dict[str, str],
                    predicates: frozenset[Predicate], counts: Counter[str],
                    norm: Counter[str], rel: Counter[str]) -> None:
    text = doc.text
    document = Document.create(layer=Layer.LITERATURE, title=doc.title, source=doc.pmid,
                               media_type="text/plain", text=text)
    [result] = list(extract([Chunk.create(document, 0, 0, len(text))], nlp, relate=relate))
    predicted = {(m.start, m.end, types.get(m.group, m.group)): m for m in result.mentions}
    gold = {(m.start, m.end, m.type): m for m in doc.mentions}
    for t in {k[2] for k in predicted} | {k[2] for k in gold}:
        pk = {k for k in predicted if k[2] == t}
        gk = {k for k in gold if k[2] == t}
        counts[f"tp:{t}"] += len(pk & gk)
        counts[f"fp:{t}"] += len(pk - gk)
        counts[f"fn:{t}"] += len(gk - pk)
    gold_spans = {(m.start, m.end): m for m in doc.mentions if m.ids}
    for m in result.mentions:
        g = gold_spans.get((m.start, m.end))
        if g is not None:
            concept = index.get(m.concept_id)
            right = concept is not None and bool(_gold_ids(concept) & set(g.ids))
            for key in ("", f":{g.type}"):
                norm[f"n{key}"] += 1
                norm[f"right{key}"] += right
    gold_pairs = {frozenset((r.first, r.second)) for r in doc.relations}
    pred_pairs: set[frozenset[str]] = set()
    for r in result.relations:
        if r.predicate not in predicates or r.head.qualifiers.negated:
            continue
        head, tail = index.get(r.head.concept_id), index.get(r.tail.concept_id)
        if head is None or tail is None:
            continue
        match = next((frozenset((a, b)) for a in _gold_ids(head) for b in _gold_ids(tail)
                      if frozenset((a, b)) in gold_pairs), None)
        pred_pairs.add(match or frozenset((head.id, tail.id)))
    rel["tp"] += len(pred_pairs & gold_pairs)
    rel["fp"] += len(pred_pairs - gold_pairs)
    rel["fn"] += len(gold_pairs - pred_pairs)
