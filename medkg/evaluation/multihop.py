"""Two-hop and conditional questions generated from gold relations (BioRED, BC5CDR).

Every question and every answer comes from the corpora's *gold* annotations,
never from medkg's own extractions, so the set can judge the graph that
medkg builds. The gold relations become directed, typed edges between
concepts (MeSH, NCBI Gene ids), each remembering the documents that state it:

- BC5CDR ``CID``: chemical ``causes`` disease;
- BioRED chemical--disease: ``Positive_Correlation`` -> ``causes``,
  ``Negative_Correlation`` -> ``treats``, ``Association`` -> ``associated``;
- BioRED gene--disease (any type): gene ``associated`` disease;
- BioRED chemical--gene (any type): chemical ``affects`` gene.

Chains of two edges through a bridge concept make the 2-hop questions (the
bridge is never named in the question); the answers are the chains' far ends.
An answer's evidence is its gold mentions in the documents that state the
second edge, so a retrieval finds an answer when one of its top-k chunks
holds such a mention (answer-entity recall@k). An answer is *cross-document*
when no document stating its second edge mentions the question's entity:
text search on the question's words cannot reach it, only a hop can.

Conditional questions ask what a chemical is used for and when it should be
avoided: the answers are the diseases it treats (gold ``treats``), the
conditions the diseases it causes (gold ``causes``); an answer states a
condition when it names one of them (any gold surface form).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from medkg.evaluation.pubtator import PubTatorDocument, read_pubtator

Kind = Literal["chemical", "disease", "gene", "variant"]
Relation = Literal["causes", "treats", "associated", "affects"]

KINDS: dict[str, Kind] = {
    "Chemical": "chemical", "ChemicalEntity": "chemical",
    "Disease": "disease", "DiseaseOrPhenotypicFeature": "disease",
    "GeneOrGeneProduct": "gene", "SequenceVariant": "variant",
}
CHEMICAL_DISEASE: dict[str, Relation] = {
    "CID": "causes", "Positive_Correlation": "causes", "Negative_Correlation": "treats",
    "Association": "associated",
}


@dataclass(frozen=True)
class Template:
    """A chain S -first-> B -second-> T (``reverse``: the edge points the other way)."""

    name: str
    start: Kind
    first: Relation
    first_reverse: bool
    bridge: Kind
    second: Relation
    second_reverse: bool
    answer: Kind
    text: str  # the question, with {start}


TEMPLATES: tuple[Template, ...] = (
    Template("chemical-gene-disease", "chemical", "affects", False, "gene", "associated",
             False, "disease",
             "Which diseases are associated with the genes that {start} acts on?"),
    Template("gene-disease-drug", "gene", "associated", False, "disease", "treats", True,
             "chemical", "Which drugs treat the diseases that {start} is associated with?"),
    Template("drug-adverse-drug", "chemical", "causes", False, "disease", "treats", True,
             "chemical", "Which drugs treat the conditions that {start} can cause?"),
    Template("disease-drug-adverse", "disease", "treats", True, "chemical", "causes", False,
             "disease", "Which adverse effects can the drugs used to treat {start} cause?"),
)
CONDITIONAL = "What is {start} used to treat, and when should it be avoided?"


@dataclass(frozen=True)
class Span:
    document: str  # the PMID
    start: int
    end: int


@dataclass(frozen=True)
class GoldEntity:
    """An answer or a condition: a concept, its usual name, every surface form the
    gold mentions give it, and its gold mentions in the supporting documents."""

    concept: str
    name: str
    surfaces: tuple[str, ...]
    evidence: tuple[Span, ...]
    cross_document: bool = False


@dataclass(frozen=True)
class HopQuestion:
    id: str
    kind: Literal["2-hop", "conditional"]
    template: str
    question: str
    start: str  # the concept the question names
    bridges: tuple[str, ...]  # 2-hop: the concepts in between (never named)
    answers: tuple[GoldEntity, ...]
    conditions: tuple[GoldEntity, ...] = ()


@dataclass
class GoldIndex:
    """A corpus's gold annotations by concept: kinds, names, mentions, and the
    relations as typed edges."""

    documents: dict[str, PubTatorDocument] = field(default_factory=dict)
    kind: dict[str, Kind] = field(default_factory=dict)
    names: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    mentions: dict[tuple[str, str], list[Span]] = field(
        default_factory=lambda: defaultdict(list))  # (pmid, concept) -> spans
    # (head, relation, tail) -> the documents stating it
    edges: dict[tuple[str, Relation, str], set[str]] = field(
        default_factory=lambda: defaultdict(set))
    # every gold relation as annotated: (first, type, second) -> the documents stating it
    # (BC5CDR's CID is BioRED's Positive_Correlation)
    relations: dict[tuple[str, str, str], set[str]] = field(
        default_factory=lambda: defaultdict(set))

    def name(self, concept: str) -> str:
        return self.names[concept].most_common(1)[0][0]

    def surfaces(self, concept: str) -> tuple[str, ...]:
        return tuple(sorted({n.lower() for n in self.names[concept]}))

    def gold(self, concept: str, docs: Iterable[str], start: str) -> GoldEntity:
        """``concept`` as an answer: its mentions in ``docs``; cross-document when
        none of them mentions ``start``."""
        evidence = tuple(s for d in sorted(docs) for s in self.mentions.get((d, concept), []))
        cross = all((d, start) not in self.mentions for d in docs)
        return GoldEntity(concept, self.name(concept), self.surfaces(concept), evidence, cross)


def read_corpora(paths: Iterable[Path]) -> dict[str, PubTatorDocument]:
    """The documents of PubTator files by PMID (the first file to hold one wins)."""
    out: dict[str, PubTatorDocument] = {}
    for path in paths:
        for doc in read_pubtator(path):
            out.setdefault(doc.pmid, doc)
    return out


def gold_index(documents: dict[str, PubTatorDocument]) -> GoldIndex:
    c = GoldIndex(documents)
    for doc in documents.values():
        for m in doc.mentions:
            kind = KINDS.get(m.type)
            if kind is None or len(m.ids) != 1:
                continue
            concept = m.ids[0]
            c.kind.setdefault(concept, kind)
            c.names[concept][m.text] += 1
            c.mentions[(doc.pmid, concept)].append(Span(doc.pmid, m.start, m.end))
        for r in doc.relations:
            edge = _edge(c.kind.get(r.first), r.first, r.type, c.kind.get(r.second), r.second)
            if edge is not None:
                c.edges[edge].add(doc.pmid)
            if r.first in c.kind and r.second in c.kind and r.first != r.second:
                typed = "Positive_Correlation" if r.type == "CID" else r.type
                c.relations[(r.first, typed, r.second)].add(doc.pmid)
    return c


def _edge(kind_a: Kind | None, a: str, relation: str, kind_b: Kind | None, b: str
          ) -> tuple[str, Relation, str] | None:
    kinds = {kind_a, kind_b}
    if kinds == {"chemical", "disease"}:
        chem, dis = (a, b) if kind_a == "chemical" else (b, a)
        rel = CHEMICAL_DISEASE.get(relation)
        return (chem, rel, dis) if rel else None
    if kinds == {"gene", "disease"}:
        return (a, "associated", b) if kind_a == "gene" else (b, "associated", a)
    if kinds == {"chemical", "gene"}:
        return (a, "affects", b) if kind_a == "chemical" else (b, "affects", a)
    return None


def _neighbours(c: GoldIndex, concept: str, relation: Relation, reverse: bool
                ) -> dict[str, set[str]]:
    """Concepts one edge away (``reverse``: along edges pointing at ``concept``),
    each with the documents that state the edge."""
    out: dict[str, set[str]] = defaultdict(set)
    for (head, rel, tail), docs in c.edges.items():
        if rel != relation:
            continue
        if not reverse and head == concept:
            out[tail] |= docs
        elif reverse and tail == concept:
            out[head] |= docs
    return out


def question_id(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:12]


def generate(documents: dict[str, PubTatorDocument], *, max_answers: int = 8,
             max_bridges: int = 4, per_template: int = 60) -> list[HopQuestion]:
    """The 2-hop and conditional questions of a corpus, from its gold relations only.

    A question keeps at most ``max_bridges`` bridges and ``max_answers`` answers
    (questions with more are left out: their recall@5 could not be judged); at
    most ``per_template`` per template, chosen by a hash of the question (the
    same corpus always gives the same set)."""
    c = gold_index(documents)
    out: list[HopQuestion] = []
    by_kind: dict[Kind, list[str]] = defaultdict(list)
    for concept, kind in sorted(c.kind.items()):
        if concept in c.names and len(c.name(concept)) >= 3:
            by_kind[kind].append(concept)
    for t in TEMPLATES:
        found: list[HopQuestion] = []
        for start in by_kind[t.start]:
            bridges = {b: d for b, d in _neighbours(c, start, t.first, t.first_reverse).items()
                       if c.kind.get(b) == t.bridge and b != start}
            if not bridges or len(bridges) > max_bridges:
                continue
            answers: dict[str, set[str]] = defaultdict(set)
            for b in bridges:
                for a, docs in _neighbours(c, b, t.second, t.second_reverse).items():
                    if a != start and a not in bridges and c.kind.get(a) == t.answer:
                        answers[a] |= docs
            answers = {a: d for a, d in answers.items() if a in c.names}
            if not answers or len(answers) > max_answers:
                continue
            text = t.text.format(start=c.name(start))
            found.append(HopQuestion(
                question_id(t.name, start), "2-hop", t.name, text, start, tuple(sorted(bridges)),
                tuple(c.gold(a, d, start) for a, d in sorted(answers.items()))))
        out += sorted(found, key=lambda q: q.id)[:per_template]
    conditional: list[HopQuestion] = []
    for chem in by_kind["chemical"]:
        treats = _neighbours(c, chem, "treats", False)
        causes = _neighbours(c, chem, "causes", False)
        treats = {d: x for d, x in treats.items() if d in c.names and d not in causes}
        causes = {d: x for d, x in causes.items() if d in c.names}
        if not treats or not causes or len(treats) > max_answers:
            continue
        conditional.append(HopQuestion(
            question_id("conditional", chem), "conditional", "treats-unless-causes",
            CONDITIONAL.format(start=c.name(chem)), chem, (),
            tuple(c.gold(d, x, chem) for d, x in sorted(treats.items())),
            tuple(c.gold(d, x, chem) for d, x in sorted(causes.items()))))
    return out + sorted(conditional, key=lambda q: q.id)[:per_template]


# -- scoring --------------------------------------------------------------------------


class HopReport(BaseModel):
    mode: str
    questions: int
    recall: dict[str, float]  # "recall@5", "recall@10", and the cross-document answers'
    cross_document_answers: int
    conditional_questions: int
    condition_stated: float | None  # share of conditional questions naming a gold condition
    latency_ms: dict[str, float]


ChunkSpan = tuple[str, int, int]  # (PMID, start, end) of a chunk


def found_at(answer: GoldEntity, ranking: Sequence[str],
             where: Callable[[str], ChunkSpan | None], k: int) -> bool:
    """Whether one of the first ``k`` chunks holds a gold mention of the answer in a
    document that states its edge."""
    for chunk_id in ranking[:k]:
        span = where(chunk_id)
        if span is None:
            continue
        doc, start, end = span
        if any(e.document == doc and e.start < end and e.end > start for e in answer.evidence):
            return True
    return False


def states(condition: GoldEntity, text: str) -> bool:
    """Whether ``text`` names the condition (a gold surface form, as whole words)."""
    low = text.lower()
    return any(re.search(rf"(?<!\w){re.escape(s)}(?!\w)", low) for s in condition.surfaces
               if len(s) >= 3)


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def score(mode: str, questions: Sequence[HopQuestion], rankings: Sequence[Sequence[str]],
          stated_texts: Sequence[str], times_ms: Sequence[float],
          where: Callable[[str], ChunkSpan | None]) -> HopReport:
    """Answer-entity recall@5/@10 (micro-averaged over the answers of the 2-hop
    questions, and over their cross-document answers alone), the condition-stated
    rate of the conditional questions (``stated_texts``: what each answer says,
    its text and its stated conditions), and latency."""
    hits = {k: 0 for k in (5, 10)}
    cross_hits = {k: 0 for k in (5, 10)}
    total = cross = 0
    stated = conditional = 0
    for q, ranking, text in zip(questions, rankings, stated_texts, strict=True):
        if q.kind == "conditional":
            conditional += 1
            stated += any(states(c, text) for c in q.conditions)
            continue
        for a in q.answers:
            total += 1
            cross += a.cross_document
            for k in hits:
                if found_at(a, ranking, where, k):
                    hits[k] += 1
                    cross_hits[k] += a.cross_document
    recall = {f"recall@{k}": round(hits[k] / total, 3) if total else 0.0 for k in hits}
    recall |= {f"cross-document recall@{k}": round(cross_hits[k] / cross, 3) if cross else 0.0
               for k in cross_hits}
    return HopReport(
        mode=mode, questions=len(questions), recall=recall, cross_document_answers=cross,
        conditional_questions=conditional,
        condition_stated=round(stated / conditional, 3) if conditional else None,
        latency_ms={"p50": _percentile(times_ms, 0.5), "p95": _percentile(times_ms, 0.95)})
