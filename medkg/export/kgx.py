"""KGX (the Biolink ecosystem's exchange format): nodes and edges, TSV or JSON Lines.

KGX graphs are concept-level: an entity normalised to a concept is that
concept's node (``MONDO:0005148``), so the same disease named in a note and in
a paper is one node, and each edge says which layer stated it
(``medkg_layer``). An entity without a concept keeps its own node,
``MEDKG:<entity id>``; that prefix (like the sample vocabulary's ``MEDKG:``
concepts) is not in Biolink's prefix map, so ``kgx validate`` reports those
nodes; ``normalised_only`` leaves them (and their edges) out.

Edges carry Biolink's edge properties: ``negated``, ``knowledge_level``,
``agent_type``, ``primary_knowledge_source`` (``infores:medkg``),
``publications`` (PubMed ids of the evidence documents), ``has_confidence_score``,
``supporting_text`` (the evidence quotes), plus medkg's own (``medkg_*``: layer,
review state, method, ConText qualifiers, evidence offsets). In TSV a list is
``|``-separated and a tab or line break inside a value becomes a space (KGX's
TSV has no quoting); JSON Lines keeps every value exactly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Literal

from medkg.export.biolink import INFORES, knowledge_level
from medkg.export.files import atomic_dir
from medkg.export.view import ExportReport, GraphView
from medkg.model import Concept, LinkKind, Triple

KgxFormat = Literal["tsv", "jsonl"]
LOCAL_PREFIX = "MEDKG"

NODE_COLUMNS = ("id", "category", "name", "description", "synonym", "xref", "iri",
                "provided_by", "medkg_layer")
EDGE_COLUMNS = ("id", "subject", "predicate", "object", "category", "negated",
                "knowledge_level", "agent_type", "primary_knowledge_source", "publications",
                "has_confidence_score", "supporting_text", "medkg_evidence", "medkg_layer",
                "medkg_review_state", "medkg_method", "medkg_level", "medkg_uncertain",
                "medkg_hypothetical", "medkg_historical", "medkg_experiencer",
                "medkg_population", "medkg_statement")
LIST_COLUMNS = frozenset({"category", "synonym", "xref", "provided_by", "publications",
                          "supporting_text", "medkg_evidence"})


def _tsv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "|".join(_tsv_value(v).replace("|", " ") for v in value)
    if isinstance(value, bool):
        return "True" if value else "False"
    return " ".join(str(value).replace("\t", " ").splitlines())


class _Sink:
    """One KGX file: a TSV with a header, or JSON Lines."""

    def __init__(self, out: IO[str], fmt: KgxFormat, columns: tuple[str, ...]) -> None:
        self.out, self.fmt, self.columns = out, fmt, columns
        if fmt == "tsv":
            out.write("\t".join(columns) + "\n")

    def write(self, row: dict[str, Any]) -> None:
        if self.fmt == "tsv":
            self.out.write("\t".join(_tsv_value(row.get(c)) for c in self.columns) + "\n")
        else:
            self.out.write(json.dumps({k: v for k, v in row.items()
                                       if v is not None and v != []}, ensure_ascii=False)
                           + "\n")


def concept_row(view: GraphView, c: Concept) -> dict[str, Any]:
    return {"id": c.id, "category": [view.concept_category(c)], "name": c.name,
            "description": c.definition, "synonym": list(c.synonyms), "xref": list(c.xrefs),
            "iri": str(view.iris.concept(c.id)), "provided_by": [INFORES],
            "medkg_layer": "vocabulary"}


def edge_row(view: GraphView, t: Triple, subject: str, obj: str) -> dict[str, Any]:
    q = t.qualifiers
    return {
        "id": f"{LOCAL_PREFIX}:{t.id}", "subject": subject,
        "predicate": f"biolink:{t.predicate.biolink}", "object": obj,
        "category": ["biolink:Association"], "negated": q.negated,
        "knowledge_level": knowledge_level(t), "agent_type": view.biolink.agent_type(t),
        "primary_knowledge_source": INFORES, "publications": view.publications(t),
        "has_confidence_score": round(t.confidence, 4),
        "supporting_text": [e.quote for e in t.evidence],
        "medkg_evidence": [f"{e.document_id}:{e.start}-{e.end}" for e in t.evidence],
        "medkg_layer": t.layer.value, "medkg_review_state": t.review.value,
        "medkg_method": t.method, "medkg_level": t.level, "medkg_uncertain": q.uncertain,
        "medkg_hypothetical": q.hypothetical, "medkg_historical": q.historical,
        "medkg_experiencer": q.experiencer, "medkg_population": q.population,
        "medkg_statement": str(view.iris.node("statement", t.id)),
    }


def write_kgx(view: GraphView, target: Path, fmt: KgxFormat, *, overwrite: bool = False,
              normalised_only: bool = False,
              progress: Callable[[str], None] | None = None) -> ExportReport:
    """Write ``TARGET/<name>_nodes.tsv`` and ``_edges.tsv`` (or ``nodes.jsonl`` and
    ``edges.jsonl``), KGX's file names, into the directory ``target``."""
    report = ExportReport(str(target), f"kgx-{fmt}")
    names = ((f"{target.name}_nodes.tsv", f"{target.name}_edges.tsv") if fmt == "tsv"
             else (f"{target.name}_nodes.jsonl", f"{target.name}_edges.jsonl"))
    with atomic_dir(target, overwrite=overwrite) as tmp, \
            (tmp / names[0]).open("w", encoding="utf-8", newline="\n") as nf, \
            (tmp / names[1]).open("w", encoding="utf-8", newline="\n") as ef:
        nodes, edges = _Sink(nf, fmt, NODE_COLUMNS), _Sink(ef, fmt, EDGE_COLUMNS)
        info = view.concept_info()
        node_of: dict[str, str] = {}  # entity id -> its KGX node id
        wanted: dict[str, tuple[str, str]] = {}  # concept id -> (name, category) for a stub
        for e in view.entities():
            cid = next((c for c in e.concept_ids if c in info), None)
            cid = cid or (e.concept_ids[0] if e.concept_ids else None)
            if normalised_only and cid is not None and cid.startswith(f"{LOCAL_PREFIX}:"):
                report.leave_out("entity of a MEDKG concept (no Biolink prefix)")
            elif cid is not None:
                node_of[e.id] = cid
                wanted.setdefault(cid, (e.name, view.entity_category(e)))
            elif normalised_only:
                report.leave_out("entity without a concept")
            else:
                node_of[e.id] = f"{LOCAL_PREFIX}:{e.id}"
                nodes.write({"id": node_of[e.id], "category": [view.entity_category(e)],
                             "name": e.name, "iri": str(view.iris.node("entity", e.id)),
                             "provided_by": [INFORES], "medkg_layer": e.layer.value})
                report.nodes += 1
        if progress:
            progress(f"{len(node_of)} entities")
        for c in view.store.iter_concepts():
            if not (view.with_vocabulary or c.id in wanted):
                continue
            if normalised_only and c.id.startswith(f"{LOCAL_PREFIX}:"):
                report.leave_out("MEDKG concept (no Biolink prefix)")
                continue
            nodes.write(concept_row(view, c))
            wanted.pop(c.id, None)
            report.nodes += 1
            if view.with_vocabulary:
                for parent in c.parents:
                    if parent in info:
                        edges.write({"id": f"{LOCAL_PREFIX}:subclass-{c.id}-{parent}",
                                     "subject": c.id, "predicate": "biolink:subclass_of",
                                     "object": parent, "category": ["biolink:Association"],
                                     "knowledge_level": "knowledge_assertion",
                                     "agent_type": "manual_agent",
                                     "primary_knowledge_source": INFORES,
                                     "medkg_layer": "vocabulary"})
                        report.edges += 1
        for cid, (name, category) in sorted(wanted.items()):  # named by an entity only
            nodes.write({"id": cid, "category": [category], "name": name,
                         "iri": str(view.iris.concept(cid)), "provided_by": [INFORES]})
            report.nodes += 1
        for t in view.triples(report):
            head, tail = node_of.get(t.head), node_of.get(t.tail)
            if head is None or tail is None:
                report.leave_out("statement about an entity left out")
                continue
            edges.write(edge_row(view, t, head, tail))
            report.edges += 1
        for link in view.links(LinkKind.SAME_AS):
            a, b = node_of.get(link.source), node_of.get(link.target)
            if a and b and a != b:
                edges.write({"id": f"{LOCAL_PREFIX}:{link.id}", "subject": a,
                             "predicate": "biolink:same_as", "object": b,
                             "category": ["biolink:Association"],
                             "knowledge_level": "prediction",
                             "agent_type": "computational_model",
                             "primary_knowledge_source": INFORES,
                             "has_confidence_score": round(link.score, 4),
                             "medkg_method": link.method})
                report.edges += 1
    return report
