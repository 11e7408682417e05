"""The RuleHub's rules as SHACL shapes, and validation of a whole graph with pySHACL.

Every rule marked ``shacl = true`` becomes a node shape on ``mkg:Assertion``
(the statement node of each triple) with one SPARQL-based constraint, its
message, and severity ``sh:Violation`` (hard) or ``sh:Warning`` (soft). The
data graph is made from the store's triples and entities with the RDF store's
own mapping, so any backend can be validated.
Rules about text (numbers, dates, names, the requested head, counts per
generation) are checked by the verifier during construction only.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rdflib import RDF, BNode, Graph, Literal, Namespace, URIRef
from rdflib.namespace import PROV, SH

from medkg.config import StoreConfig
from medkg.model import Layer, Predicate
from medkg.rulehub.rules import Rule, RuleSet, load_rules
from medkg.store import rdf_mapping as rm
from medkg.store.base import GraphStore
from medkg.store.vocab import MKG, IRIs, predicate_iri

SHAPES = Namespace("https://w3id.org/medkg/shapes#")
DEFAULT_BASE = StoreConfig().base_iri
_PREFIXES = f"""PREFIX rdf: <{RDF}>
PREFIX mkg: <{MKG}>
PREFIX prov: <{PROV}>
"""


def _group_test(var: str, other: str, allowed: list[str]) -> str:
    # Stored literals are typed xsd:string: compare with STR() so plain literals match.
    tests = []
    for entry in allowed:
        if entry == "*":
            return "true"
        if entry == "=":
            tests.append(f"STR({var}) = STR({other})")
        elif entry.startswith("!"):
            tests.append(f'STR({var}) != "{entry[1:]}"')
        else:
            tests.append(f'STR({var}) = "{entry}"')
    return " || ".join(tests) if tests else "false"


def _is(node: str, predicate: str, n: int) -> str:
    """``node`` is a statement with ``predicate`` (typed or plain literal)."""
    return f'{node} mkg:predicate ?pn{n} . FILTER (STR(?pn{n}) = "{predicate}") '


def _select(rule: Rule) -> str | None:
    """The SPARQL SELECT that finds the statements breaking ``rule`` ($this)."""
    if rule.kind == "type" and rule.predicate is not None:
        ok = (f"({_group_test('?hg', '?tg', rule.head)}) && "
              f"({_group_test('?tg', '?hg', rule.tail)})")
        return (f"SELECT $this WHERE {{ {_is('$this', rule.predicate.value, 0)} "
                f"$this rdf:subject/mkg:semanticGroup ?hg ; rdf:object/mkg:semanticGroup ?tg . "
                f"FILTER (!({ok})) }}")
    pair = "$this rdf:subject ?h ; rdf:object ?t . ?o rdf:subject ?h ; rdf:object ?t ."
    is_a, located = predicate_iri(Predicate.IS_A), predicate_iri(Predicate.LOCATION_OF)
    queries = {
        "S001": "SELECT $this WHERE { FILTER NOT EXISTS { $this rdf:subject ?h ; "
                "rdf:object ?t ; mkg:predicate ?p . ?h a mkg:Entity . ?t a mkg:Entity } }",
        "S003": "SELECT $this WHERE { $this rdf:subject ?x ; rdf:object ?x }",
        "S005": "SELECT $this WHERE { FILTER NOT EXISTS { $this prov:wasDerivedFrom ?e . "
                "?e mkg:quote ?q FILTER (STRLEN(STR(?q)) > 0) } }",
        "S007": "SELECT $this WHERE { $this mkg:confidence ?c FILTER (?c < 0 || ?c > 1) }",
        "C001": f"SELECT $this WHERE {{ {_is('$this', 'contraindicated_in', 0)} {pair} "
                f"{_is('?o', 'treats', 1)} FILTER NOT EXISTS {{ $this mkg:population ?p1 }} "
                f"FILTER NOT EXISTS {{ ?o mkg:population ?p2 }} }}",
        "C002": "SELECT $this WHERE { $this mkg:negated true ; rdf:predicate ?p ; "
                "prov:wasDerivedFrom/mkg:document ?d . " + pair + " ?o mkg:negated false ; "
                "rdf:predicate ?p ; prov:wasDerivedFrom/mkg:document ?d . }",
        "C003": f"SELECT $this WHERE {{ {_is('$this', 'is_a', 0)} $this rdf:subject ?h ; "
                f"rdf:object ?t . ?t <{is_a}>+ ?h }}",
        "C004": f"SELECT $this WHERE {{ {_is('$this', 'location_of', 0)} $this rdf:subject ?h ; "
                f"rdf:object ?t . ?t <{located}>+ ?h }}",
        "C005": f"SELECT $this WHERE {{ {_is('$this', 'prevents', 0)} {pair} "
                f"{_is('?o', 'causes', 1)} }}",
        "C006": f"SELECT $this WHERE {{ {_is('$this', 'has_adverse_effect', 0)} {pair} "
                f"{_is('?o', 'treats', 1)} }}",
    }
    return queries.get(rule.id)


def shapes_graph(rules: RuleSet | None = None) -> Graph:
    rules = rules or load_rules()
    g = Graph()
    g.bind("sh", SH)
    g.bind("mkg", MKG)
    g.bind("shape", SHAPES)
    for rule in rules.rules:
        query = _select(rule) if rule.shacl else None
        if query is None:
            continue
        shape, constraint = SHAPES[rule.id], BNode()
        g.add((shape, RDF.type, SH.NodeShape))
        g.add((shape, SH.targetClass, MKG.Assertion))
        g.add((shape, SH.severity, SH.Violation if rule.severity == "hard" else SH.Warning))
        g.add((shape, SH.message, Literal(f"{rule.id}: {rule.message}")))
        g.add((shape, SH.sparql, constraint))
        g.add((constraint, RDF.type, SH.SPARQLConstraint))
        g.add((constraint, SH.message, Literal(f"{rule.id}: {rule.message}")))
        g.add((constraint, SH.select, Literal(_PREFIXES + query)))
    return g


@dataclass
class ValidationReport:
    conforms: bool
    by_rule: Counter[str] = field(default_factory=Counter)
    hard_violations: int = 0
    warnings: int = 0
    report: Graph = field(default_factory=Graph)


def data_graph(store: GraphStore, base_iri: str = DEFAULT_BASE) -> Graph:
    """What the shapes read: every statement node with its evidence, confidence and
    qualifiers, the plain facts, and the entities the statements name (type and
    group), made with the RDF store's own mapping from the store's triples and
    entities. Chunks, texts, mentions and the vocabulary stay out: on a corpus
    they are most of the graph and only slow every constraint down."""
    iris = IRIs(base_iri)
    triples = store.triples()
    named = {e for t in triples for e in (t.head, t.tail)}
    data = Graph()
    for t in triples:
        for s, p, o, _g in rm.triple_header_quads(iris, t):
            data.add((s, p, o))
        data.add((iris.node("statement", t.id), MKG.confidence, Literal(float(t.confidence))))
        for ev in t.evidence:
            for s, p, o, _g in rm.evidence_quads(iris, t, ev):
                data.add((s, p, o))
    for layer in (Layer.USER, Layer.LITERATURE):
        for e in store.entities(layer):
            if e.id in named:
                for s, p, o, _g in rm.entity_header_quads(iris, e):
                    data.add((s, p, o))
    return data


def validate(store: GraphStore, rules: RuleSet | None = None,
             base_iri: str = DEFAULT_BASE) -> ValidationReport:
    """Validate the graph's statements against the SHACL shapes (pySHACL)."""
    from pyshacl import validate as run

    rules = rules or load_rules()
    data = data_graph(store, base_iri)
    conforms, report, _text = run(data, shacl_graph=shapes_graph(rules), inference="none",
                                  advanced=True)
    assert isinstance(report, Graph)
    out = ValidationReport(conforms=bool(conforms), report=report)
    for result in report.subjects(RDF.type, SH.ValidationResult):
        shape = report.value(result, SH.sourceShape)
        rule_id = str(shape).rsplit("#", 1)[-1] if isinstance(shape, URIRef) else "?"
        out.by_rule[rule_id] += 1
        if report.value(result, SH.resultSeverity) == SH.Violation:
            out.hard_violations += 1
        else:
            out.warnings += 1
    return out
