"""The graph as a property graph: GraphML and CSV files for ``neo4j-admin import``.

Unlike KGX, a property graph keeps medkg's layers apart: each entity is its own
node (label ``Entity`` plus ``User`` or ``Literature``), each concept one node
(``Concept``), each statement one relationship whose type is its predicate, and
the cross-layer links (``definition_of``, ``reference_of``, ``same_as``,
``different_from``) relationships of their own. Attributes: layer, Biolink
category, semantic group, confidence, qualifiers, review state, evidence quotes
and offsets, IRIs. Only edges whose two ends were written are written.

Both formats stream: nodes first (an id set of the written nodes is all that is
kept), then edges.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from medkg.export.biolink import knowledge_level
from medkg.export.files import atomic_dir, atomic_file
from medkg.export.view import ExportReport, GraphView
from medkg.model import Layer, Triple
from medkg.text import clean_text


@dataclass(frozen=True)
class PNode:
    id: str
    labels: tuple[str, ...]
    props: dict[str, Any]


@dataclass(frozen=True)
class PEdge:
    id: str
    source: str
    target: str
    type: str
    props: dict[str, Any]


def rel_type(name: str) -> str:
    """A relationship type from a predicate or link kind: ``has_adverse_effect`` ->
    ``HAS_ADVERSE_EFFECT``."""
    return name.upper()


def _statement_props(view: GraphView, t: Triple) -> dict[str, Any]:
    q = t.qualifiers
    return {
        "statement": t.id, "predicate": t.predicate.value,
        "biolink_predicate": f"biolink:{t.predicate.biolink}", "layer": t.layer.value,
        "confidence": t.confidence, "negated": q.negated, "uncertain": q.uncertain,
        "hypothetical": q.hypothetical, "historical": q.historical,
        "experiencer": q.experiencer, "population": q.population or "",
        "review_state": t.review.value, "method": t.method, "level": t.level,
        "knowledge_level": knowledge_level(t), "agent_type": view.biolink.agent_type(t),
        "evidence": [e.quote for e in t.evidence],
        "evidence_offsets": [f"{e.document_id}:{e.start}-{e.end}" for e in t.evidence],
        "iri": str(view.iris.node("statement", t.id)),
    }


def property_graph(view: GraphView, report: ExportReport) -> Iterator[PNode | PEdge]:
    """Nodes, then edges, of the filtered graph."""
    written: set[str] = set()
    concepts_named: set[str] = set()
    for e in view.entities():
        layer = "User" if e.layer is Layer.USER else "Literature"
        written.add(e.id)
        concepts_named.update(e.concept_ids)
        report.nodes += 1
        yield PNode(e.id, ("Entity", layer), {
            "kind": "entity", "name": e.name, "layer": e.layer.value, "group": e.type,
            "category": view.entity_category(e), "concepts": list(e.concept_ids),
            "iri": str(view.iris.node("entity", e.id))})
    for c in view.store.iter_concepts():
        if not (view.with_vocabulary or c.id in concepts_named):
            continue
        written.add(c.id)
        report.nodes += 1
        yield PNode(c.id, ("Concept",), {
            "kind": "concept", "name": c.name, "layer": "vocabulary",
            "group": c.semantic_group or "", "category": view.concept_category(c),
            "definition": c.definition or "", "synonyms": list(c.synonyms),
            "iri": str(view.iris.concept(c.id))})
    for t in view.triples(report):
        if t.head in written and t.tail in written:
            report.edges += 1
            yield PEdge(t.id, t.head, t.tail, rel_type(t.predicate.value),
                        _statement_props(view, t))
        else:
            report.leave_out("statement about an entity left out")
    for link in view.links():
        if link.source in written and link.target in written:
            report.edges += 1
            yield PEdge(link.id, link.source, link.target, rel_type(link.kind.value),
                        {"score": link.score, "method": link.method,
                         "link": link.kind.value})


# -- GraphML ------------------------------------------------------------------

_GRAPHML_KEYS: dict[str, tuple[str, str]] = {  # attribute -> (for, attr.type)
    "kind": ("node", "string"), "labels": ("node", "string"), "name": ("node", "string"),
    "layer": ("all", "string"), "group": ("node", "string"), "category": ("node", "string"),
    "concepts": ("node", "string"), "definition": ("node", "string"),
    "synonyms": ("node", "string"), "iri": ("all", "string"), "type": ("edge", "string"),
    "statement": ("edge", "string"), "predicate": ("edge", "string"),
    "biolink_predicate": ("edge", "string"), "confidence": ("edge", "double"),
    "negated": ("edge", "boolean"), "uncertain": ("edge", "boolean"),
    "hypothetical": ("edge", "boolean"), "historical": ("edge", "boolean"),
    "experiencer": ("edge", "string"), "population": ("edge", "string"),
    "review_state": ("edge", "string"), "method": ("edge", "string"),
    "level": ("edge", "int"), "knowledge_level": ("edge", "string"),
    "agent_type": ("edge", "string"), "evidence": ("edge", "string"),
    "evidence_offsets": ("edge", "string"), "score": ("edge", "double"),
    "link": ("edge", "string"),
}


def _xml_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        value = " | ".join(str(v) for v in value)
    return escape(clean_text(str(value)))  # XML 1.0's characters only (medkg.text)


def write_graphml(view: GraphView, path: Path, *, overwrite: bool = False) -> ExportReport:
    """One GraphML file (``networkx.read_graphml`` reads it; lists are ``" | "``-joined)."""
    report = ExportReport(str(path), "graphml")
    with atomic_file(path, overwrite=overwrite) as tmp, tmp.open("w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n'
                  '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n')
        for name, (scope, kind) in _GRAPHML_KEYS.items():
            out.write(f'  <key id="{name}" for="{scope}" attr.name="{name}" '
                      f'attr.type="{kind}"/>\n')
        out.write('  <graph id="medkg" edgedefault="directed">\n')
        for item in property_graph(view, report):
            if isinstance(item, PNode):
                out.write(f"    <node id={quoteattr(item.id)}>")
                attrs = {"labels": ":".join(item.labels), **item.props}
            else:
                out.write(f"    <edge id={quoteattr(item.id)} source={quoteattr(item.source)} "
                          f"target={quoteattr(item.target)}>")
                attrs = {"type": item.type, **item.props}
            for key, value in attrs.items():
                if value not in (None, "", []):
                    out.write(f'<data key="{key}">{_xml_text(value)}</data>')
            out.write("</node>\n" if isinstance(item, PNode) else "</edge>\n")
        out.write("  </graph>\n</graphml>\n")
    return report


# -- neo4j-admin import CSV -----------------------------------------------------

ARRAY_DELIMITER = "|"
_NEO4J_TYPES = {"confidence": "float", "score": "float", "level": "int", "negated": "boolean",
                "uncertain": "boolean", "hypothetical": "boolean", "historical": "boolean",
                "concepts": "string[]", "synonyms": "string[]", "evidence": "string[]",
                "evidence_offsets": "string[]"}
ENTITY_FIELDS = ("kind", "name", "layer", "group", "category", "concepts", "iri")
CONCEPT_FIELDS = ("kind", "name", "layer", "group", "category", "definition", "synonyms", "iri")
STATEMENT_FIELDS = ("statement", "predicate", "biolink_predicate", "layer", "confidence",
                    "negated", "uncertain", "hypothetical", "historical", "experiencer",
                    "population", "review_state", "method", "level", "knowledge_level",
                    "agent_type", "evidence", "evidence_offsets", "iri")
LINK_FIELDS = ("link", "score", "method")
FILES = {"entities.csv": ENTITY_FIELDS, "concepts.csv": CONCEPT_FIELDS,
         "statements.csv": STATEMENT_FIELDS, "links.csv": LINK_FIELDS}


def _header(fields: tuple[str, ...], *, nodes: bool) -> list[str]:
    typed = [f"{f}:{_NEO4J_TYPES[f]}" if f in _NEO4J_TYPES else f for f in fields]
    return ["id:ID", *typed, ":LABEL"] if nodes else [":START_ID", ":END_ID", ":TYPE", *typed]


def _csv_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ARRAY_DELIMITER.join(str(v).replace(ARRAY_DELIMITER, "/") for v in value)
    return "" if value is None else str(value)


def import_command(database: str = "neo4j") -> str:
    return ("neo4j-admin database import full --nodes=entities.csv --nodes=concepts.csv "
            "--relationships=statements.csv --relationships=links.csv "
            f"--array-delimiter='{ARRAY_DELIMITER}' --multiline-fields=true {database}")


_README = """# medkg graph for `neo4j-admin database import`

Written by `medkg export --format neo4j-csv`. Neo4j 5: stop the database, copy
these files into its `import` directory (or run from here), then:

```
{command}
```

- `entities.csv`: one node per entity, labels `Entity` and `User` or `Literature`.
- `concepts.csv`: one node per vocabulary concept, label `Concept`.
- `statements.csv`: one relationship per statement; its type is the predicate
  (`TREATS`, `CAUSES`, ...); qualifiers, confidence, review state, evidence quotes
  and offsets are properties.
- `links.csv`: `DEFINITION_OF` (entity -> concept), `REFERENCE_OF` (user ->
  literature entity), `SAME_AS`, `DIFFERENT_FROM`, with score and method.

Lists are `{delimiter}`-separated (a `{delimiter}` inside a value became `/`). Values may
hold line breaks, hence `--multiline-fields=true`. Then, in Cypher:

```
CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (e:Entity) REQUIRE e.id IS UNIQUE;
CREATE CONSTRAINT concept_id IF NOT EXISTS FOR (c:Concept) REQUIRE c.id IS UNIQUE;
```

No Neo4j server could be installed where medkg is tested (none is in the PyPI,
Debian or npm registries); `tests/export/test_propertygraph.py` reads these files
back and checks the headers against neo4j-admin's syntax and every relationship's
ends against the node ids.
"""


def write_neo4j_csv(view: GraphView, target: Path, *, overwrite: bool = False) -> ExportReport:
    report = ExportReport(str(target), "neo4j-csv")
    with atomic_dir(target, overwrite=overwrite) as tmp:
        handles = {name: (tmp / name).open("w", encoding="utf-8", newline="")
                   for name in FILES}
        try:
            writers = {name: csv.writer(h) for name, h in handles.items()}
            for name, fields in FILES.items():
                writers[name].writerow(_header(fields, nodes=name in ("entities.csv",
                                                                       "concepts.csv")))
            for item in property_graph(view, report):
                if isinstance(item, PNode):
                    name = "entities.csv" if "Entity" in item.labels else "concepts.csv"
                    row = [item.id, *(_csv_value(item.props.get(f)) for f in FILES[name]),
                           ARRAY_DELIMITER.join(item.labels)]
                else:
                    name = "links.csv" if "link" in item.props else "statements.csv"
                    row = [item.source, item.target, item.type,
                           *(_csv_value(item.props.get(f)) for f in FILES[name])]
                writers[name].writerow(row)
        finally:
            for h in handles.values():
                h.close()
        (tmp / "README.md").write_text(
            _README.format(command=import_command(), delimiter=ARRAY_DELIMITER),
            encoding="utf-8")
    return report

