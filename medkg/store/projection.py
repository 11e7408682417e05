"""The graph's RDF: a pure projection of the tables, streamed, and the Oxigraph
copy of it that SPARQL, SHACL and the RDF exports read.

:func:`project` turns the tables' rows into quads through the one mapping
(:mod:`medkg.store.rdf_mapping`; a plain fact only where ``Qualifiers.is_factual``)
a page of rows at a time. :class:`RDFProjection` keeps an Oxigraph store of those
quads beside the tables, stamped with the tables' revision it was made from: when
the stamp differs the projection is stale and is made again (``medkg rdf rebuild``,
and before any SPARQL query), so a crash between the tables and the projection is
found by its stamp, never read.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rdflib import Literal, URIRef
from rdflib.namespace import DCTERMS, PROV, RDF
from rdflib.term import Node

from medkg.errors import StoreError
from medkg.files import atomic_text
from medkg.model import Layer, LinkKind, stable_id
from medkg.store import rdf_mapping as rm
from medkg.store.vocab import BIOLINK, MKG

if TYPE_CHECKING:
    from medkg.store.tables import TableStore

Quad = tuple[Node, Node, Node, URIRef]


def project(store: TableStore) -> Iterator[Quad]:
    """Every quad of the graph, once, made from the tables a page at a time (what
    several rows share, an evidence node, a plain fact, a curator, is remembered
    by key so that it comes once: memory in the number of statements, never in
    the number of mentions)."""
    shared: set[tuple[str, ...]] = set()
    for quad in _rows_as_quads(store):
        s, p, _o, _g = quad
        if _SHARED_SUBJECTS.search(str(s)) or str(p).startswith(_BIOLINK):
            key = tuple(map(str, quad))
            if key in shared:
                continue
            shared.add(key)
        yield quad


_BIOLINK = str(BIOLINK)
_SHARED_SUBJECTS = re.compile(r"/(evidence|reviewer)/[^/]*$")


def _rows_as_quads(store: TableStore) -> Iterator[Quad]:
    iris = store.iris
    for layer in (Layer.USER, Layer.LITERATURE):
        graph = iris.graph(layer)
        for doc_id in store.document_ids(layer):
            yield from rm.document_quads(iris, store.document(doc_id), store.chunks(doc_id))
            node = iris.node("doc", doc_id)
            yield from ((node, MKG.completed, Literal(s), graph)
                        for s in sorted(store.stages(doc_id)))
        for entities in store.iter_full_entities(layer):
            for entity in entities:
                yield from rm.entity_header_quads(iris, entity)
                for mention in entity.mentions:
                    yield from rm.mention_quads(iris, entity, mention)
        for triple in store.iter_triples(layer):
            yield from rm.triple_header_quads(iris, triple)
            yield (iris.node("statement", triple.id), MKG.confidence,
                   Literal(float(triple.confidence)), graph)
            for ev in triple.evidence:
                yield from rm.evidence_quads(iris, triple, ev)
    vocabulary = iris.graph(Layer.VOCABULARY)
    for name, loaded_at in store.vocabulary_sources():
        src = iris.node("source", stable_id("src", name))
        yield from ((src, RDF.type, PROV.Entity, vocabulary),
                    (src, DCTERMS.title, Literal(name), vocabulary),
                    (src, PROV.generatedAtTime, Literal(datetime.fromisoformat(loaded_at)),
                     vocabulary))
    for concept in store.iter_concepts():
        yield from rm.concept_quads(iris, concept)
    for link in store.iter_links():
        source = iris.node("entity", link.source)
        target = (iris.concept(link.target) if link.kind is LinkKind.DEFINITION_OF
                  else iris.node("entity", link.target))
        yield from rm.link_quads(iris, link, source, target)
    for decision in store.decisions():
        yield from rm.decision_quads(iris, decision)


def count_quads(store: TableStore) -> int:
    """How many distinct quads :func:`project` makes, counted by aggregate queries
    over the tables (no row is read into Python); the store contract checks it
    against the projection itself."""
    from medkg.store.schema import QUALIFIER_COLUMNS

    def one(condition: str) -> str:  # a condition as 0/1, in SQL both engines take
        return f"(CASE WHEN {condition} THEN 1 ELSE 0 END)"

    length = store.engine.json_length
    not_patient, has_reason = one("q_experiencer <> 'patient'"), one("reason <> ''")
    flags = [f"q_{n}" for n in QUALIFIER_COLUMNS if n not in ("experiencer", "population")]
    mention_flags = " + ".join(f"{f}" for f in flags)
    statement_flags = len(flags) + 1  # every flag and the experiencer, always written
    factual = ("q_negated = 0 AND q_uncertain = 0 AND q_hypothetical = 0 "
               "AND q_experiencer = 'patient'")
    parts = [
        "SELECT 8 * count(*) FROM documents",
        "SELECT count(*) FROM document_revisions",
        "SELECT count(*) FROM stage_marks",
        "SELECT 8 * count(*) FROM chunks",
        "SELECT 3 * count(*) FROM vocabulary_sources",
        f"SELECT coalesce(sum(4 + {length('synonyms')} + {length('parents')} + {length('xrefs')} "
        f"+ {one('definition IS NOT NULL')} + {one('semantic_type IS NOT NULL')} "
        f"+ {one('semantic_group IS NOT NULL')} + obsolete "
        f"+ {one('replaced_by IS NOT NULL')}), 0) FROM concepts",
        "SELECT 6 * count(*) FROM entities",
        "SELECT count(*) FROM entity_concepts",
        f"SELECT coalesce(sum(7 + {mention_flags} + {not_patient} "
        f"+ {one('q_population IS NOT NULL')}), 0) FROM mentions",
        f"SELECT coalesce(sum({12 + statement_flags} + {one('q_population IS NOT NULL')} "
        f"+ {one('revision_of IS NOT NULL')}), 0) FROM statements",
        "SELECT count(*) FROM (SELECT DISTINCT layer, head, predicate, tail FROM statements "
        f"WHERE {factual}) facts",
        "SELECT count(*) FROM evidence",
        "SELECT 6 * count(*) FROM (SELECT DISTINCT s.layer, v.id FROM evidence v "
        "JOIN statements s ON s.id = v.statement_id) nodes",
        "SELECT 9 * count(*) FROM links",
        f"SELECT coalesce(sum(11 + {has_reason} + {one('before IS NOT NULL')} "
        f"+ {one('after IS NOT NULL')} + {one('undoes IS NOT NULL')}), 0) FROM decisions",
        "SELECT 2 * count(DISTINCT reviewer) FROM decisions",
    ]
    return sum(int(store._rows(sql)[0][0] or 0) for sql in parts)


class RDFProjection:
    """The Oxigraph copy of the projection, at ``directory`` (derived data: deleting
    it is always safe), with the tables' revision it was made from in ``stamp.json``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.stamp_file = directory.with_name(directory.name + ".stamp.json")

    def stamp(self) -> dict[str, Any] | None:
        try:
            return dict(json.loads(self.stamp_file.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None

    def fresh(self, tables: TableStore) -> bool:
        stamp = self.stamp()
        return (stamp is not None and self.directory.is_dir()
                and stamp.get("revision") == tables.revision()
                and stamp.get("base_iri") == tables.iris.base)

    def rebuild(self, tables: TableStore, *, batch: int = 50_000) -> int:
        """Make the projection again from the tables; how many quads it holds. The new
        store is written beside the old and takes its place only when complete."""
        import pyoxigraph as ox
        from oxrdflib._converter import to_ox

        revision = tables.revision()
        building = self.directory.with_name(self.directory.name + ".building")
        shutil.rmtree(building, ignore_errors=True)
        self.stamp_file.unlink(missing_ok=True)  # stale from here until the rename
        store = ox.Store(str(building))
        pending: list[Any] = []
        for s, p, o, g in project(tables):
            pending.append(ox.Quad(to_ox(s), to_ox(p), to_ox(o),  # type: ignore[arg-type]
                                   ox.NamedNode(str(g))))
            if len(pending) >= batch:
                store.bulk_extend(pending)
                pending = []
        store.bulk_extend(pending)
        store.flush()
        total = len(store)
        del store
        shutil.rmtree(self.directory, ignore_errors=True)
        building.rename(self.directory)
        with atomic_text(self.stamp_file) as f:
            json.dump({"revision": revision, "base_iri": tables.iris.base, "quads": total}, f)
        return total

    def open(self, tables: TableStore, *, may_rebuild: bool = True) -> Any:
        """The projection as a read-only pyoxigraph Store, made again first if stale
        (unless ``may_rebuild`` is false: a stale one is then an error)."""
        import pyoxigraph as ox

        if not self.fresh(tables):
            if not may_rebuild:
                raise StoreError("the RDF projection is older than the graph's tables",
                                 hint="run medkg rdf rebuild when the build has finished")
            self.rebuild(tables)
        return ox.Store.read_only(str(self.directory))


# What a query's answer can be written as: (name, media type), the first the default.
SOLUTION_FORMATS = {"json": "application/sparql-results+json",
                    "xml": "application/sparql-results+xml",
                    "csv": "text/csv", "tsv": "text/tab-separated-values"}
GRAPH_FORMATS = {"nt": "application/n-triples", "ttl": "text/turtle"}


def run_query(store: Any, query: str, fmt: str | None = None) -> tuple[str, bytes]:
    """A SPARQL 1.1 query (SELECT, ASK, CONSTRUCT or DESCRIBE; an update is refused
    as not a query) on a read-only pyoxigraph store: (media type, the answer)."""
    import pyoxigraph as ox

    try:
        result = store.query(query, use_default_graph_as_union=True)
    except SyntaxError as exc:
        raise StoreError(f"not a SPARQL query: {exc}",
                         hint="SELECT, ASK, CONSTRUCT or DESCRIBE; updates are refused "
                              "(the graph changes through medkg)") from exc
    except OSError as exc:
        raise StoreError(f"the query failed: {exc}") from exc
    if isinstance(result, ox.QueryTriples):
        name = fmt if fmt in GRAPH_FORMATS else "nt"
        rdf = ox.RdfFormat.from_media_type(GRAPH_FORMATS[name])
        return GRAPH_FORMATS[name], bytes(result.serialize(format=rdf) or b"")
    name = fmt if fmt in SOLUTION_FORMATS else "json"
    media = SOLUTION_FORMATS[name]
    answer = result.serialize(format=ox.QueryResultsFormat.from_media_type(media))
    return media, bytes(answer or b"")
