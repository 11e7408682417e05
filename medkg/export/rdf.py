"""The whole graph as an RDF file, from any store's quads, written as it is read.

``ttl`` is the union of all graphs (Turtle has no named graphs); ``trig``,
``nq`` and ``jsonld`` keep the named graphs (one per layer, plus links and
review). Nothing is copied into memory: quads stream from the store to
Oxigraph's serialisers (``ttl``, ``trig``, ``nq``) or to a compact JSON-LD
writer with medkg's published context (``data/context.jsonld``: prefixes and
typed terms, so a node reads ``"skos:prefLabel": "metformin"``).

The filter (:class:`medkg.export.view.ExportFilter`) drops the statement
nodes it does not keep, with the evidence nodes only they used. A plain Biolink
edge (``entity biolink:treats entity``) is written only for a kept statement
that is not negated, hedged, hypothetical or about someone other than the
patient: the statement node carries those, and a plain edge would state them as
fact. What the filter drops is held as a set of IRIs (small for the review and
confidence filters people use); everything else streams.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import IO, Any

from rdflib import BNode, Literal, URIRef
from rdflib.namespace import DCTERMS, OWL, PROV, RDF, RDFS, SKOS, XSD
from rdflib.term import Node

from medkg.config import StoreConfig
from medkg.errors import StoreError
from medkg.export.biolink import is_factual
from medkg.export.files import atomic_file
from medkg.export.view import ExportFilter, ExportReport, GraphView, Reviewed
from medkg.model import Layer
from medkg.review.decisions import in_force
from medkg.store.base import GraphStore
from medkg.store.vocab import BIOLINK, MKG, IRIs, predicate_iri

DEFAULT_BASE = StoreConfig().base_iri
EXPORT_FORMATS = {"ttl": "turtle", "trig": "trig", "nq": "nquads", "jsonld": "json-ld"}
PREFIXES = {"mkg": str(MKG), "biolink": str(BIOLINK), "skos": str(SKOS), "prov": str(PROV),
            "dcterms": str(DCTERMS), "owl": str(OWL), "rdf": str(RDF), "rdfs": str(RDFS),
            "xsd": str(XSD)}
CONTEXT_URL = "https://w3id.org/medkg/context.jsonld"

Quad = tuple[Node, Node, Node, URIRef]


def context() -> dict[str, Any]:
    """medkg's JSON-LD context (``medkg/export/data/context.jsonld``)."""
    text = resources.files("medkg.export").joinpath("data/context.jsonld").read_text("utf-8")
    value: dict[str, Any] = json.loads(text)["@context"]
    return value


def _dropped(view: GraphView) -> tuple[set[URIRef], set[URIRef]]:
    """Statement nodes the filter drops, and the evidence nodes only they used."""
    iris = view.iris
    statements: set[URIRef] = set()
    evidence: set[URIRef] = set()
    for layer in (Layer.USER, Layer.LITERATURE):
        for t in view.store.iter_triples(layer):
            if not view.filter.keeps(t):
                statements.add(iris.node("statement", t.id))
                evidence.update(iris.node("evidence", e.id) for e in t.evidence)
    if evidence:  # evidence shared with a statement that stays, stays
        for layer in (Layer.USER, Layer.LITERATURE):
            for t in view.store.iter_triples(layer):
                if iris.node("statement", t.id) not in statements:
                    evidence.difference_update(iris.node("evidence", e.id) for e in t.evidence)
    return statements, evidence


def filtered_quads(view: GraphView, report: ExportReport) -> Iterator[Quad]:
    """Every quad the filter keeps, graph by graph as the store yields them, then
    the plain edges of the kept factual statements and the review decisions in force."""
    iris = view.iris
    drop_statements, drop_evidence = _dropped(view)
    report.statements_left_out = len(drop_statements)
    excluded = {iris.graph(layer) for layer in Layer if layer not in view.filter.layers}
    data_graphs = {iris.graph(Layer.USER), iris.graph(Layer.LITERATURE)}
    biolink = str(BIOLINK)
    for s, p, o, g in view.store.quads():
        if g in excluded or s in drop_statements or s in drop_evidence:
            continue
        if g in data_graphs and str(p).startswith(biolink):
            continue  # plain edges: written below from the statements that assert them
        yield s, p, o, g
    for t in view.triples():
        if is_factual(t.qualifiers):
            yield (iris.node("entity", t.head), predicate_iri(t.predicate),
                   iris.node("entity", t.tail), iris.graph(t.layer))
            report.edges += 1
    review = iris.graph("review")
    force = in_force(view.store.decisions())
    for target, decision in sorted(force.statements.items()):
        node = iris.node("statement", target)
        if node not in drop_statements:
            yield node, MKG.reviewDecision, iris.node("review", decision.id), review


def _ox(term: Node) -> Any:
    from oxrdflib._converter import to_ox

    return to_ox(term)


def _serialise(quads: Iterable[Quad], out: IO[bytes], fmt: str) -> None:
    import pyoxigraph as ox

    if fmt == "ttl":
        triples = (ox.Triple(_ox(s), _ox(p), _ox(o)) for s, p, o, _g in quads)
        ox.serialize(triples, out, ox.RdfFormat.TURTLE, prefixes=PREFIXES)
    else:
        stream = (ox.Quad(_ox(s), _ox(p), _ox(o), ox.NamedNode(str(g))) for s, p, o, g in quads)
        ox.serialize(stream, out, ox.RdfFormat.TRIG if fmt == "trig" else ox.RdfFormat.N_QUADS,
                     prefixes=PREFIXES if fmt == "trig" else None)


# -- compact JSON-LD ------------------------------------------------------------

class _Compactor:
    """Terms of the context: IRIs as prefixed names, literals as plain JSON
    where the context (or JSON) types them, else ``{"@value", "@type"}``."""

    def __init__(self, ctx: dict[str, Any]) -> None:
        self.prefixes = sorted(((v, k) for k, v in ctx.items() if isinstance(v, str)
                                and v.endswith(("/", "#", "_"))), key=lambda x: -len(x[0]))
        self.typed = {self.iri(self._expand(ctx, v["@id"])): v.get("@type")
                      for v in ctx.values() if isinstance(v, dict) and "@id" in v}

    @staticmethod
    def _expand(ctx: dict[str, Any], curie: str) -> str:
        prefix, _, local = curie.partition(":")
        base = ctx.get(prefix)
        return base + local if isinstance(base, str) else curie

    def iri(self, value: str) -> str:
        for base, prefix in self.prefixes:
            if value.startswith(base) and len(value) > len(base):
                local = value[len(base):]
                if all(ch.isalnum() or ch in "-_." for ch in local):
                    return f"{prefix}:{local}"
        return value

    def node_ref(self, term: Node) -> dict[str, str]:
        return {"@id": f"_:{term}" if isinstance(term, BNode) else self.iri(str(term))}

    def value(self, predicate: str, term: Node) -> Any:
        if not isinstance(term, Literal):
            return self.node_ref(term)
        lexical, datatype = str(term), term.datatype
        if term.language:
            return {"@value": lexical, "@language": term.language}
        if datatype is None or datatype == XSD.string:
            return lexical
        typed = self.typed.get(predicate)
        if datatype == XSD.boolean and lexical in ("true", "false"):
            return lexical == "true"
        if typed and self.iri(str(datatype)) == typed:
            return {"@value": lexical, "@type": typed}
        if datatype == XSD.integer and lexical.lstrip("-").isdigit():
            return int(lexical)
        return {"@value": lexical, "@type": self.iri(str(datatype))}


def _write_jsonld(quads: Iterable[Quad], out: IO[str]) -> None:
    ctx = context()
    comp = _Compactor(ctx)
    out.write('{\n  "@context": ' + json.dumps(ctx, ensure_ascii=False) + ',\n  "@graph": [')
    graph: URIRef | None = None
    subject: Node | None = None
    node: dict[str, Any] = {}
    first_graph = first_node = True

    def flush() -> None:
        nonlocal first_node
        if node:
            out.write(("" if first_node else ",") + "\n      "
                      + json.dumps(node, ensure_ascii=False))
            first_node = False

    for s, p, o, g in quads:
        if g != graph:
            flush()
            node = {}
            if graph is not None:
                out.write("\n    ]}")
            out.write(("" if first_graph else ",") + "\n    {"
                      f'"@id": {json.dumps(comp.iri(str(g)))}, "@graph": [')
            first_graph, first_node, graph, subject = False, True, g, None
        if s != subject:
            flush()
            node, subject = comp.node_ref(s), s
        if p == RDF.type:
            node.setdefault("@type", []).append(comp.iri(str(o)))
        else:
            node.setdefault(comp.iri(str(p)), []).append(comp.value(comp.iri(str(p)), o))
    flush()
    if graph is not None:
        out.write("\n    ]}")
    out.write("\n  ]\n}\n")


def export_rdf(store: GraphStore, path: Path, fmt: str, *, overwrite: bool = False,
               reviewed: Reviewed = "all", base_iri: str = DEFAULT_BASE,
               flt: ExportFilter | None = None) -> ExportReport:
    """Write the quads of ``store`` the filter keeps to ``path`` in ``fmt`` (a key
    of EXPORT_FORMATS); an existing file is replaced only with ``overwrite``.
    ``reviewed`` (when no filter is given): every statement (``all``), those no
    curator rejected or replaced (``not-rejected``), or only those a curator
    accepted (``accepted``). The ``review`` graph (every decision, as PROV-O) is
    always written, and each decided statement names the decision in force
    (``mkg:reviewDecision``)."""
    if fmt not in EXPORT_FORMATS:
        raise StoreError(
            f"unknown export format {fmt!r}", hint=f"use one of {', '.join(EXPORT_FORMATS)}")
    flt = flt or ExportFilter(reviewed=reviewed, include_negated=True)
    view = GraphView(store, IRIs(base_iri), flt)
    report = ExportReport(str(path), fmt)
    with atomic_file(path, overwrite=overwrite) as tmp:
        quads = filtered_quads(view, report)
        if fmt == "jsonld":
            with tmp.open("w", encoding="utf-8") as text:
                _write_jsonld(quads, text)
        else:
            with tmp.open("wb") as binary:
                _serialise(quads, binary, fmt)
    return report
