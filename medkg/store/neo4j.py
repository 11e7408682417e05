"""The graph in Neo4j (5.x), through the official ``neo4j`` driver.

Over 500 lines because it is the whole store contract in Cypher for one
backend, kept only for workspaces that already live in Neo4j (new work publishes
there instead: :mod:`medkg.publish_neo4j`); it is not grown further.

The property-graph model (``../shared/DESIGN.md`` §6):

- ``(:Document)<-[:PART_OF]-(:Chunk)``; stage marks in ``Document.completed``;
- ``(:Concept)`` with ``[:BROADER]`` to its parents;
- ``(:Entity:User|:Literature)-[:HAS_MENTION]->(:Mention)-[:IN]->(:Chunk)``;
- a statement is a ``(:Statement)`` node, ``[:SUBJECT]``/``[:OBJECT]`` to its
  entities, ``[:SUPPORTED_BY]->(:Evidence)-[:IN]->(:Chunk)``, carrying its
  qualifiers, confidence, level, review state and method; and, when it is not
  negated, the plain fact as a relationship whose type is the predicate,
  ``(head)-[:TREATS {statement_ids}]->(tail)``, the edge Cypher and Bloom users
  traverse. Evidence and qualifiers live on nodes, not on that relationship:
  a statement has many pieces of evidence (a property cannot hold a list of
  maps), each must reach its chunk for citations and go with its document on
  delete, and a negated statement has no fact edge at all yet must keep them;
- cross-layer links: ``(:Entity)-[:SAME_AS|REFERENCE_OF|DIFFERENT_FROM]->(:Entity)``
  and ``(:Entity)-[:DEFINITION_OF]->(:Concept)``, with ``id``, ``score``, ``method``;
- curators' decisions: ``(:Decision)`` nodes holding the decision as JSON.

Every value goes as a query parameter; the only names spliced into Cypher are
relationship types from :class:`~medkg.model.Predicate` and
:class:`~medkg.model.LinkKind` (checked against ``[A-Z_]+``). Writes go in
``UNWIND $rows`` batches of ``batch_size``; a document with its chunks, and
every deletion, is one transaction (``execute_write``, which the driver
retries on transient errors). Uniqueness constraints on every node id and a
vector index on ``Entity.embedding`` are created when the store opens.

``quads()`` is the graph as RDF (the same mapping the RDF backends store), so
RDF export and ``medkg store copy`` work from Neo4j too.

No Neo4j server installs on the machines this is developed on: the contract
suite runs against one when ``MEDKG_TEST_NEO4J_URI`` is set.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

from rdflib import Literal, URIRef

from medkg.errors import ConfigError, NotFoundError, StoreError
from medkg.model import (
    Chunk,
    Concept,
    Decision,
    Document,
    Entity,
    EntityBrief,
    EntityEdit,
    Evidence,
    Layer,
    Link,
    LinkKind,
    Mention,
    Predicate,
    Qualifiers,
    ReviewState,
    Triple,
    stable_id,
)
from medkg.store import rdf_mapping as rm
from medkg.store.base import Deletion, LayerCounts, StoreCounts
from medkg.store.vocab import MKG, IRIs

LABELS = ("Document", "Chunk", "Entity", "Mention", "Concept", "Statement", "Evidence",
          "Decision")
EMBEDDING_DIMENSIONS = 384  # all-MiniLM-L6-v2, the default embedding model
_NAME = re.compile(r"^[A-Z_]+$")
_QUALIFIERS = ("negated", "uncertain", "hypothetical", "historical", "experiencer",
               "population")


def rel_type(name: str) -> str:
    """A relationship type from a predicate or link kind (never user text)."""
    value = name.upper()
    if not _NAME.match(value):
        raise StoreError(f"not a relationship type: {name!r}")
    return value


def _qualifier_props(q: Qualifiers) -> dict[str, Any]:
    return {f"q_{k}": getattr(q, k) for k in _QUALIFIERS}


def _qualifiers(props: dict[str, Any]) -> Qualifiers:
    return Qualifiers(**{k: props[f"q_{k}"] for k in _QUALIFIERS
                         if props.get(f"q_{k}") is not None})


def _mention_id(entity_id: str, m: Mention) -> str:
    return stable_id("mention", entity_id, m.chunk_id, str(m.start), str(m.end), m.text)


def _evidence_id(triple_id: str, e: Evidence) -> str:
    return stable_id("evidence", triple_id, e.chunk_id, str(e.start), str(e.end))


class Neo4jGraphStore:
    """GraphStore on a Neo4j database. Open it through
    :func:`medkg.store.registry.open_store` (``store.backend = "neo4j"``)."""

    backend = "neo4j"

    def __init__(self, uri: str, *, database: str = "neo4j", user: str = "",
                 password_env: str = "", base_iri: str, batch_size: int = 2000,
                 read_only: bool = False, driver: Any = None) -> None:
        self.iris = IRIs(base_iri)
        self.database = database
        self.batch_size = batch_size
        self.read_only = read_only
        if driver is None:
            import neo4j

            auth = None
            if user:
                password = os.environ.get(password_env) if password_env else None
                if password is None:
                    raise ConfigError("store.user is set but the password is not: name the "
                                      "environment variable holding it in store.password_env")
                auth = (user, password)
            driver = neo4j.GraphDatabase.driver(uri, auth=auth)
        self._driver = driver
        if not read_only:
            self._schema()

    # -- plumbing -----------------------------------------------------------------

    def _read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        records, _summary, _keys = self._driver.execute_query(
            query, params, database_=self.database, routing_="r")
        return [dict(r) for r in records]

    def _write(self, steps: list[tuple[str, dict[str, Any]]]) -> list[list[dict[str, Any]]]:
        """Run ``steps`` (query, parameters) in one write transaction."""
        if self.read_only:
            raise StoreError("this graph store was opened read-only (another process "
                             "writes it)", hint="run the command again when it has finished")

        def work(tx: Any) -> list[list[dict[str, Any]]]:
            return [[dict(r) for r in tx.run(query, params)] for query, params in steps]

        with self._driver.session(database=self.database) as session:
            result: list[list[dict[str, Any]]] = session.execute_write(work)
            return result

    def _batched(self, query: str, rows: list[dict[str, Any]], **params: Any) -> None:
        """``UNWIND $rows`` writes, ``batch_size`` rows per transaction."""
        for start in range(0, len(rows), self.batch_size):
            self._write([(query, {**params, "rows": rows[start:start + self.batch_size]})])

    def _schema(self) -> None:
        for label in LABELS:  # constants
            self._driver.execute_query(
                f"CREATE CONSTRAINT medkg_{label.lower()}_id IF NOT EXISTS "
                f"FOR (n:{label}) REQUIRE n.id IS UNIQUE", {}, database_=self.database)
        self._driver.execute_query(
            "CREATE VECTOR INDEX medkg_entity_embedding IF NOT EXISTS FOR (e:Entity) "
            "ON e.embedding OPTIONS {indexConfig: {`vector.dimensions`: $dims, "
            "`vector.similarity_function`: 'cosine'}}", {"dims": EMBEDDING_DIMENSIONS},
            database_=self.database)

    def close(self) -> None:
        self._driver.close()

    # -- documents and chunks ------------------------------------------------------

    def add_document(self, document: Document, chunks: list[Chunk]) -> None:
        self._write([(
            "MERGE (d:Document {id: $id}) "
            "SET d.layer = $layer, d.title = $title, d.source = $source, "
            "d.media_type = $media_type, d.text = $text, "
            "d.revision_of = [x IN coalesce(d.revision_of, []) WHERE NOT x IN $revision_of]"
            " + $revision_of, d.completed = coalesce(d.completed, []) "
            "WITH d UNWIND $chunks AS c MERGE (k:Chunk {id: c.id}) SET k += c "
            "MERGE (k)-[:PART_OF]->(d)",
            {"id": document.id, "layer": document.layer.value, "title": document.title,
             "source": document.source, "media_type": document.media_type,
             "text": document.text, "revision_of": list(document.revision_of),
             "chunks": [{**c.model_dump(mode="json")} for c in chunks]})])

    def mark_stage(self, document_id: str, stage: str) -> None:
        found = self._write([("MATCH (d:Document {id: $id}) SET d.completed = "
                              "[x IN d.completed WHERE x <> $stage] + $stage RETURN d.id AS id",
                              {"id": document_id, "stage": stage})])
        if not found[0]:
            raise NotFoundError("document", document_id)

    def unmark_stage(self, document_id: str, stage: str) -> None:
        self._write([("MATCH (d:Document {id: $id}) "
                      "SET d.completed = [x IN d.completed WHERE x <> $stage]",
                      {"id": document_id, "stage": stage})])

    def stages(self, document_id: str) -> set[str]:
        rows = self._read("MATCH (d:Document {id: $id}) RETURN d.completed AS c", id=document_id)
        return set(rows[0]["c"] or []) if rows else set()

    def has_document(self, document_id: str) -> bool:
        return bool(self._read("MATCH (d:Document {id: $id}) RETURN d.id AS id", id=document_id))

    def _document_from(self, d: dict[str, Any]) -> Document:
        return Document(id=d["id"], layer=Layer(d["layer"]), title=d["title"],
                        source=d["source"], media_type=d["media_type"], text=d.get("text", ""),
                        revision_of=sorted(d.get("revision_of") or []))

    def document(self, document_id: str) -> Document:
        rows = self._read("MATCH (d:Document {id: $id}) RETURN properties(d) AS d", id=document_id)
        if not rows:
            raise NotFoundError("document", document_id)
        return self._document_from(rows[0]["d"])

    def document_ids(self, layer: Layer | None = None) -> list[str]:
        rows = self._read("MATCH (d:Document) WHERE $layer IS NULL OR d.layer = $layer "
                          "RETURN d.id AS id ORDER BY id", layer=layer.value if layer else None)
        return [r["id"] for r in rows]

    def document_sources(self, layer: Layer) -> dict[str, list[str]]:
        rows = self._read("MATCH (d:Document {layer: $layer}) RETURN d.source AS s, "
                          "collect(d.id) AS ids", layer=layer.value)
        return {r["s"]: sorted(r["ids"]) for r in rows}

    def chunk(self, chunk_id: str) -> Chunk:
        rows = self._read("MATCH (k:Chunk {id: $id}) RETURN properties(k) AS k", id=chunk_id)
        if not rows:
            raise NotFoundError("chunk", chunk_id)
        return Chunk.model_validate(rows[0]["k"])

    def chunk_ids(self) -> set[str]:
        return {r["id"] for r in self._read("MATCH (k:Chunk) RETURN k.id AS id")}

    def chunks(self, document_id: str) -> list[Chunk]:
        if not self.has_document(document_id):
            raise NotFoundError("document", document_id)
        rows = self._read("MATCH (k:Chunk)-[:PART_OF]->(:Document {id: $id}) "
                          "RETURN properties(k) AS k ORDER BY k.index", id=document_id)
        return [Chunk.model_validate(r["k"]) for r in rows]

    # -- vocabulary ------------------------------------------------------------------

    def add_concepts(self, concepts: Iterable[Concept], source: str,
                     loaded_at: datetime | None = None) -> int:  # no load time is kept
        latest = {c.id: c for c in concepts}
        rows = [{**c.model_dump(mode="json", exclude={"parents"}), "parents": c.parents}
                for c in latest.values()]
        self._batched(
            "UNWIND $rows AS r MERGE (c:Concept {id: r.id}) "
            "SET c = r, c.loaded_from = $source "
            "WITH c, r OPTIONAL MATCH (c)-[old:BROADER]->() DELETE old "
            "WITH DISTINCT c, r UNWIND r.parents AS p MERGE (q:Concept {id: p}) "
            "MERGE (c)-[:BROADER]->(q)", rows, source=source)
        return len(latest)

    @staticmethod
    def _concept_from(c: dict[str, Any]) -> Concept:
        fields = set(Concept.model_fields)
        return Concept.model_validate({k: v for k, v in c.items() if k in fields})

    def concept(self, concept_id: str) -> Concept:
        rows = self._read("MATCH (c:Concept {id: $id}) WHERE c.name IS NOT NULL "
                          "RETURN properties(c) AS c", id=concept_id)
        if not rows:
            raise NotFoundError("concept", concept_id)
        return self._concept_from(rows[0]["c"])

    def concepts(self) -> list[Concept]:
        return list(self.iter_concepts())

    def iter_concepts(self) -> Iterator[Concept]:
        for batch in self._pages("MATCH (c:Concept) WHERE c.name IS NOT NULL AND c.id > $after "
                                 "RETURN c.id AS key, properties(c) AS props ORDER BY key "
                                 "LIMIT $n"):
            yield from (self._concept_from(r["props"]) for r in batch)

    def _pages(self, query: str, **params: Any) -> Iterator[list[dict[str, Any]]]:
        """Keyset pages (``$after``, ``$n``; rows carry ``key``): bounded memory."""
        after = ""
        while True:
            rows = self._read(query, after=after, n=self.batch_size, **params)
            if not rows:
                return
            yield rows
            after = rows[-1]["key"]

    # -- entities ------------------------------------------------------------------

    def add_entities(self, entities: Iterable[Entity]) -> None:
        rows = [{"id": e.id, "layer": e.layer.value, "label": e.layer.value.capitalize(),
                 "name": e.name, "type": e.type, "context": e.context,
                 "concept_ids": list(e.concept_ids),
                 "mentions": [{"id": _mention_id(e.id, m), "chunk_id": m.chunk_id,
                               "document_id": m.document_id, "start": m.start, "end": m.end,
                               "text": m.text, **_qualifier_props(m.qualifiers)}
                              for m in e.mentions]} for e in entities]
        for layer in (Layer.USER, Layer.LITERATURE):
            label = layer.value.capitalize()  # User, Literature: never user text
            self._batched(
                # The first write of an entity sets its fields (a node a link made
                # first has none yet); later writes add mentions only.
                f"UNWIND $rows AS r MERGE (e:Entity {{id: r.id}}) SET e:{label}, "
                "e.layer = coalesce(e.layer, r.layer), e.name = coalesce(e.name, r.name), "
                "e.type = coalesce(e.type, r.type), e.context = coalesce(e.context, r.context), "
                "e.concept_ids = coalesce(e.concept_ids, r.concept_ids) "
                "WITH e, r UNWIND r.mentions AS m MERGE (x:Mention {id: m.id}) SET x += m "
                "MERGE (e)-[:HAS_MENTION]->(x) "
                "WITH x, m OPTIONAL MATCH (k:Chunk {id: m.chunk_id}) "
                "FOREACH (_ IN CASE WHEN k IS NULL THEN [] ELSE [1] END | MERGE (x)-[:IN]->(k))",
                [r for r in rows if r["layer"] == layer.value])

    def _entity_rows(self, where: str, **params: Any) -> list[Entity]:
        rows = self._read(f"MATCH (e:Entity) WHERE e.name IS NOT NULL AND {where} "
                          "OPTIONAL MATCH (e)-[:HAS_MENTION]->(m:Mention) "
                          "RETURN properties(e) AS e, collect(properties(m)) AS ms "
                          "ORDER BY e.id", **params)
        return [self._entity_from(r["e"], r["ms"]) for r in rows]

    @staticmethod
    def _entity_from(e: dict[str, Any], ms: list[dict[str, Any]]) -> Entity:
        mentions = sorted((Mention(chunk_id=m["chunk_id"], document_id=m["document_id"],
                                   start=m["start"], end=m["end"], text=m["text"],
                                   qualifiers=_qualifiers(m)) for m in ms if m),
                          key=lambda m: (m.document_id, m.start))
        return Entity(id=e["id"], layer=Layer(e["layer"]), name=e["name"], type=e["type"],
                      context=e.get("context") or "",
                      concept_ids=sorted(e.get("concept_ids") or []), mentions=mentions)

    def entity(self, entity_id: str) -> Entity:
        found = self._entity_rows("e.id = $id", id=entity_id)
        if not found:
            raise NotFoundError("entity", entity_id)
        return found[0]

    def entity_ids(self) -> set[str]:
        return {r["id"] for r in self._read("MATCH (e:Entity) WHERE e.name IS NOT NULL "
                                            "RETURN e.id AS id")}

    def entities(self, layer: Layer) -> list[Entity]:
        return self._entity_rows("e.layer = $layer", layer=layer.value)

    def _briefs(self, where: str, mentions: bool = True, **params: Any) -> list[EntityBrief]:
        rows = self._read(
            f"MATCH (e:Entity) WHERE e.name IS NOT NULL AND {where} "
            + ("OPTIONAL MATCH (e)-[:HAS_MENTION]->(m:Mention) " if mentions else "")
            + "RETURN properties(e) AS e, "
            + ("collect(DISTINCT m.chunk_id) AS chunks, collect(DISTINCT m.text) AS surface "
               if mentions else "[] AS chunks, [] AS surface ")
            + "ORDER BY e.id", **params)
        return [EntityBrief(id=r["e"]["id"], layer=Layer(r["e"]["layer"]), name=r["e"]["name"],
                            type=r["e"]["type"], concept_ids=sorted(r["e"].get("concept_ids")
                                                                    or []),
                            chunk_ids=sorted(r["chunks"]), surface=sorted(r["surface"]))
                for r in rows]

    def entities_of_concepts(self, concept_ids: Iterable[str]) -> list[EntityBrief]:
        wanted = list(dict.fromkeys(concept_ids))
        if not wanted:
            return []
        return self._briefs("any(c IN e.concept_ids WHERE c IN $ids)", ids=wanted)

    def entity_briefs(self, entity_ids: Iterable[str], *, mentions: bool = True
                      ) -> list[EntityBrief]:
        wanted = list(dict.fromkeys(entity_ids))
        if not wanted:
            return []
        return self._briefs("e.id IN $ids", mentions, ids=wanted)

    def iter_entities(self, layer: Layer) -> Iterator[EntityBrief]:
        for batch in self._pages("MATCH (e:Entity {layer: $layer}) WHERE e.id > $after "
                                 "RETURN e.id AS key ORDER BY key LIMIT $n", layer=layer.value):
            yield from self._briefs("e.id IN $ids", False, ids=[r["key"] for r in batch])

    def add_entity_vectors(self, vectors: Iterable[tuple[str, list[float]]]) -> None:
        """Put entities' embeddings on their nodes, for the vector index
        (``db.index.vector.queryNodes('medkg_entity_embedding', k, $vector)``)."""
        rows = [{"id": entity_id, "v": [float(x) for x in vector]}
                for entity_id, vector in vectors]
        self._batched("UNWIND $rows AS r MATCH (e:Entity {id: r.id}) SET e.embedding = r.v",
                      rows)

    def update_entity(self, entity_id: str, edit: EntityEdit) -> bool:
        sets = {k: v for k, v in edit.model_dump().items() if v is not None}
        found = self._write([("MATCH (e:Entity {id: $id}) SET e += $sets RETURN e.id AS id",
                              {"id": entity_id, "sets": sets})])
        return bool(found[0])

    # -- statements ------------------------------------------------------------------

    def add_triples(self, triples: Iterable[Triple]) -> None:
        rows = [{"id": t.id, "layer": t.layer.value, "head": t.head, "tail": t.tail,
                 "predicate": t.predicate.value, "confidence": float(t.confidence),
                 "level": t.level, "review": t.review.value, "method": t.method,
                 "revision_of": t.revision_of, **_qualifier_props(t.qualifiers),
                 "factual": t.qualifiers.is_factual,
                 "evidence": [{"id": _evidence_id(t.id, e), **e.model_dump()}
                              for e in t.evidence]} for t in triples]
        for predicate in Predicate:
            chosen = [r for r in rows if r["predicate"] == predicate.value]
            fact = rel_type(predicate.value)
            self._batched(
                "UNWIND $rows AS r MERGE (h:Entity {id: r.head}) MERGE (t:Entity {id: r.tail}) "
                "MERGE (s:Statement {id: r.id}) "
                "ON CREATE SET s += apoc_free_props, s.confidence = r.confidence "
                "SET s.confidence = CASE WHEN r.confidence > s.confidence THEN r.confidence "
                "ELSE s.confidence END "
                "MERGE (s)-[:SUBJECT]->(h) MERGE (s)-[:OBJECT]->(t) "
                "WITH s, r, h, t CALL { WITH s, r, h, t WITH s, r, h, t WHERE r.factual "
                f"MERGE (h)-[f:{fact}]->(t) SET f.statement_ids = "
                "[x IN coalesce(f.statement_ids, []) WHERE x <> r.id] + r.id } "
                "WITH s, r UNWIND r.evidence AS ev MERGE (v:Evidence {id: ev.id}) SET v += ev "
                "MERGE (s)-[:SUPPORTED_BY]->(v) "
                "WITH v, ev OPTIONAL MATCH (k:Chunk {id: ev.chunk_id}) "
                "FOREACH (_ IN CASE WHEN k IS NULL THEN [] ELSE [1] END | MERGE (v)-[:IN]->(k))"
                .replace("apoc_free_props", "r { .layer, .head, .tail, .predicate, .level, "
                         ".review, .method, .revision_of, .q_negated, .q_uncertain, "
                         ".q_hypothetical, .q_historical, .q_experiencer, .q_population }"),
                chosen)

    _TRIPLE_RETURN = ("OPTIONAL MATCH (s)-[:SUPPORTED_BY]->(v:Evidence) "
                      "RETURN properties(s) AS s, collect(properties(v)) AS ev ORDER BY s.id")

    def _triple_rows(self, where: str, **params: Any) -> list[Triple]:
        rows = self._read(f"MATCH (s:Statement) WHERE {where} {self._TRIPLE_RETURN}", **params)
        return [self._triple_from(r["s"], r["ev"]) for r in rows]

    @staticmethod
    def _triple_from(s: dict[str, Any], ev: list[dict[str, Any]]) -> Triple:
        evidence = sorted((Evidence(chunk_id=e["chunk_id"], document_id=e["document_id"],
                                    start=e["start"], end=e["end"], quote=e["quote"])
                           for e in ev if e), key=lambda e: (e.document_id, e.start))
        return Triple(id=s["id"], layer=Layer(s["layer"]), head=s["head"],
                      predicate=Predicate(s["predicate"]), tail=s["tail"], evidence=evidence,
                      qualifiers=_qualifiers(s), confidence=float(s["confidence"]),
                      level=int(s.get("level") or 0), review=ReviewState(s["review"]),
                      method=s["method"], revision_of=s.get("revision_of"))

    def triple(self, triple_id: str) -> Triple:
        found = self._triple_rows("s.id = $id", id=triple_id)
        if not found:
            raise NotFoundError("statement", triple_id)
        return found[0]

    def revisions_of(self, triple_id: str) -> list[str]:
        rows = self._read("MATCH (s:Statement {revision_of: $id}) RETURN s.id AS id ORDER BY id",
                          id=triple_id)
        return [r["id"] for r in rows]

    def triples(self, layer: Layer | None = None, entity_ids: Iterable[str] | None = None
                ) -> list[Triple]:
        where = "($layer IS NULL OR s.layer = $layer)"
        params: dict[str, Any] = {"layer": layer.value if layer else None}
        if entity_ids is not None:
            where += " AND (s.head IN $ids OR s.tail IN $ids)"
            params["ids"] = list(entity_ids)
        return self._triple_rows(where, **params)

    def iter_triples(self, layer: Layer) -> Iterator[Triple]:
        for batch in self._pages("MATCH (s:Statement {layer: $layer}) WHERE s.id > $after "
                                 "RETURN s.id AS key ORDER BY key LIMIT $n", layer=layer.value):
            yield from self._triple_rows("s.id IN $ids", ids=[r["key"] for r in batch])

    def set_review_state(self, triple_id: str, state: ReviewState) -> bool:
        found = self._write([("MATCH (s:Statement {id: $id}) SET s.review = $state "
                              "RETURN s.id AS id", {"id": triple_id, "state": state.value})])
        return bool(found[0])

    def _statement_removal(self, ids: list[str]) -> list[tuple[str, dict[str, Any]]]:
        """The steps that remove statements, the evidence only they use, and their
        fact edges where no other positive statement asserts the fact."""
        steps: list[tuple[str, dict[str, Any]]] = [(
            "MATCH (s:Statement)-[:SUPPORTED_BY]->(v:Evidence) WHERE s.id IN $ids "
            "AND NOT EXISTS { MATCH (o:Statement)-[:SUPPORTED_BY]->(v) WHERE NOT o.id IN $ids } "
            "DETACH DELETE v", {"ids": ids})]
        for predicate in Predicate:
            steps.append((f"MATCH (h:Entity)-[f:{rel_type(predicate.value)}]->(t:Entity) "
                          "WHERE any(x IN f.statement_ids WHERE x IN $ids) "
                          "SET f.statement_ids = [x IN f.statement_ids WHERE NOT x IN $ids] "
                          "WITH f WHERE size(f.statement_ids) = 0 DELETE f", {"ids": ids}))
        steps.append(("MATCH (s:Statement) WHERE s.id IN $ids DETACH DELETE s", {"ids": ids}))
        return steps

    def remove_triples(self, triple_ids: Iterable[str]) -> list[str]:
        wanted = sorted(set(triple_ids))
        found = [r["id"] for r in self._read(
            "MATCH (s:Statement) WHERE s.id IN $ids RETURN s.id AS id ORDER BY id", ids=wanted)]
        if found:
            self._write(self._statement_removal(found))
        return found

    # -- review decisions -------------------------------------------------------------

    def add_decisions(self, decisions: Iterable[Decision]) -> None:
        rows = [{"id": d.id, "target": d.target, "at": d.at.isoformat(),
                 "json": d.model_dump_json()} for d in decisions]
        self._batched("UNWIND $rows AS r MERGE (d:Decision {id: r.id}) SET d += r", rows)

    def decisions(self, target: str | None = None) -> list[Decision]:
        rows = self._read("MATCH (d:Decision) WHERE $target IS NULL OR d.target = $target "
                          "RETURN d.json AS json", target=target)
        found = [Decision.model_validate_json(r["json"]) for r in rows]
        return sorted(found, key=lambda d: (d.at, d.id))

    # -- links -----------------------------------------------------------------------

    def add_links(self, links: Iterable[Link]) -> None:
        rows = [{"id": x.id, "kind": x.kind.value, "source": x.source, "target": x.target,
                 "score": float(x.score), "method": x.method} for x in links]
        for kind in LinkKind:
            target = "Concept" if kind is LinkKind.DEFINITION_OF else "Entity"
            self._batched(
                f"UNWIND $rows AS r MERGE (a:Entity {{id: r.source}}) "
                f"MERGE (b:{target} {{id: r.target}}) "
                f"MERGE (a)-[x:{rel_type(kind.value)} {{id: r.id}}]->(b) "
                "SET x.kind = r.kind, x.source = r.source, x.target = r.target, "
                "x.score = r.score, x.method = r.method",
                [r for r in rows if r["kind"] == kind.value])

    _LINK_MATCH = ("MATCH ()-[x]->() WHERE x.kind IS NOT NULL AND x.id IS NOT NULL "
                   "AND ($source IS NULL OR x.source = $source) "
                   "AND ($target IS NULL OR x.target = $target) "
                   "AND ($kind IS NULL OR x.kind = $kind) ")

    def links(self, *, source: str | None = None, target: str | None = None,
              kind: LinkKind | None = None) -> list[Link]:
        rows = self._read(self._LINK_MATCH + "RETURN properties(x) AS x", source=source,
                          target=target, kind=kind.value if kind else None)
        out = [Link(kind=LinkKind(r["x"]["kind"]), source=r["x"]["source"],
                    target=r["x"]["target"], score=float(r["x"]["score"]),
                    method=r["x"]["method"]) for r in rows]
        return sorted(out, key=lambda x: (x.kind.value, x.source, -x.score, x.target))

    def iter_links(self, kind: LinkKind | None = None) -> Iterator[Link]:
        yield from self.links(kind=kind)

    def remove_links(self, links: Iterable[Link]) -> int:
        ids = sorted({x.id for x in links})
        found = self._write([("MATCH ()-[x]->() WHERE x.id IN $ids AND x.kind IS NOT NULL "
                              "DELETE x RETURN count(*) AS n", {"ids": ids})])
        return int(found[0][0]["n"]) if found[0] else 0

    # -- deletion --------------------------------------------------------------------

    def _deletion_plan(self, document_id: str) -> tuple[Deletion, list[str], list[str]]:
        """What deleting the document's extraction removes: (report, mention ids,
        evidence ids); entities and statements in the report."""
        if not self.has_document(document_id):
            raise NotFoundError("document", document_id)
        out = Deletion()
        mentions = self._read("MATCH (e:Entity)-[:HAS_MENTION]->(m:Mention {document_id: $id}) "
                              "RETURN m.id AS m, e.id AS e", id=document_id)
        mention_ids = sorted({r["m"] for r in mentions})
        touched = sorted({r["e"] for r in mentions})
        gone_entities = [r["id"] for r in self._read(
            "MATCH (e:Entity) WHERE e.id IN $ids AND NOT EXISTS { MATCH (e)-[:HAS_MENTION]->"
            "(m:Mention) WHERE NOT m.id IN $mentions } RETURN e.id AS id ORDER BY id",
            ids=touched, mentions=mention_ids)]
        evidence = self._read("MATCH (s:Statement)-[:SUPPORTED_BY]->(v:Evidence {document_id: "
                              "$id}) RETURN v.id AS v, s.id AS s", id=document_id)
        evidence_ids = sorted({r["v"] for r in evidence})
        gone_statements = [r["id"] for r in self._read(
            "MATCH (s:Statement) WHERE (s.id IN $touched AND NOT EXISTS { MATCH (s)-"
            "[:SUPPORTED_BY]->(v:Evidence) WHERE NOT v.id IN $evidence }) "
            "OR s.head IN $gone OR s.tail IN $gone RETURN s.id AS id ORDER BY id",
            touched=sorted({r["s"] for r in evidence}), evidence=evidence_ids,
            gone=gone_entities)]
        out.links = len(self._read("MATCH ()-[x]->() WHERE x.kind IS NOT NULL AND "
                                   "(x.source IN $gone OR x.target IN $gone) RETURN x.id AS id",
                                   gone=gone_entities))
        out.mentions, out.evidence = len(mention_ids), len(evidence_ids)
        out.entities, out.triples = gone_entities, gone_statements
        return out, mention_ids, evidence_ids

    def _deletion_steps(self, out: Deletion, mention_ids: list[str], evidence_ids: list[str]
                        ) -> list[tuple[str, dict[str, Any]]]:
        return [
            ("MATCH ()-[x]->() WHERE x.kind IS NOT NULL AND (x.source IN $gone OR x.target IN "
             "$gone) DELETE x", {"gone": out.entities}),
            *self._statement_removal(out.triples),
            ("MATCH (v:Evidence) WHERE v.id IN $ids DETACH DELETE v", {"ids": evidence_ids}),
            ("MATCH (m:Mention) WHERE m.id IN $ids DETACH DELETE m", {"ids": mention_ids}),
            ("MATCH (e:Entity) WHERE e.id IN $ids DETACH DELETE e", {"ids": out.entities}),
        ]

    def delete_extraction(self, document_id: str, marks: Iterable[str]) -> Deletion:
        out, mention_ids, evidence_ids = self._deletion_plan(document_id)
        self._write([*self._deletion_steps(out, mention_ids, evidence_ids),
                     ("MATCH (d:Document {id: $id}) SET d.completed = "
                      "[x IN d.completed WHERE NOT x IN $marks]",
                      {"id": document_id, "marks": list(marks)})])
        return out

    def delete_document(self, document_id: str,
                        journal: Callable[[Deletion], None] | None = None) -> Deletion:
        out, mention_ids, evidence_ids = self._deletion_plan(document_id)
        out.chunks = [r["id"] for r in self._read(
            "MATCH (k:Chunk)-[:PART_OF]->(:Document {id: $id}) RETURN k.id AS id ORDER BY id",
            id=document_id)]
        if journal is not None:
            journal(out)
        self._write([*self._deletion_steps(out, mention_ids, evidence_ids),
                     ("MATCH (k:Chunk) WHERE k.id IN $ids DETACH DELETE k", {"ids": out.chunks}),
                     ("MATCH (d:Document {id: $id}) DETACH DELETE d", {"id": document_id})])
        return out

    # -- whole store -----------------------------------------------------------------

    def clear(self) -> None:
        """Remove every node medkg writes (and so every relationship between them),
        ten thousand per transaction."""
        while True:
            done = self._write([("MATCH (n) WHERE any(l IN labels(n) WHERE l IN $labels) "
                                 "WITH n LIMIT 10000 DETACH DELETE n RETURN count(*) AS n",
                                 {"labels": list(LABELS)})])
            if not done[0] or not done[0][0]["n"]:
                return

    def migrate_concept_iris(self) -> int:
        """Concepts are keyed by CURIE here, never by IRI: nothing ever needs moving."""
        return 0

    def counts(self) -> StoreCounts:
        found: dict[tuple[str, str | None], int] = {}
        for label in ("Document", "Chunk", "Entity", "Statement", "Decision"):  # constants
            for r in self._read(f"MATCH (n:{label}) RETURN n.layer AS layer, count(n) AS n"):
                found[(label, r["layer"])] = int(r["n"])

        def layer(which: Layer) -> LayerCounts:
            return LayerCounts(*(found.get((label, which.value), 0)
                                 for label in ("Document", "Chunk", "Entity", "Statement")))

        concepts = self._read("MATCH (c:Concept) WHERE c.name IS NOT NULL RETURN count(c) AS n")
        links = self._read("MATCH ()-[x]->() WHERE x.kind IS NOT NULL RETURN count(x) AS n")
        decisions = sum(v for (label, _), v in found.items() if label == "Decision")
        return StoreCounts(quads=sum(1 for _ in self.quads()), user=layer(Layer.USER),
                           literature=layer(Layer.LITERATURE), concepts=concepts[0]["n"],
                           links=links[0]["n"], decisions=decisions)

    def quads(self) -> Iterator[tuple[Any, Any, Any, URIRef]]:
        """The graph as the RDF backends store it (rdf_mapping), a batch at a time."""
        iris = self.iris
        for layer in (Layer.USER, Layer.LITERATURE):
            for doc_id in self.document_ids(layer):
                doc = self.document(doc_id)
                yield from rm.document_quads(iris, doc, self.chunks(doc_id))
                graph = iris.graph(layer)
                node = iris.node("doc", doc_id)
                yield from ((node, MKG.completed, Literal(s), graph)
                            for s in sorted(self.stages(doc_id)))
            for entity in self.entities(layer):
                yield from rm.entity_header_quads(iris, entity)
                for mention in entity.mentions:
                    yield from rm.mention_quads(iris, entity, mention)
            for triple in self.iter_triples(layer):
                yield from rm.triple_header_quads(iris, triple)
                yield (iris.node("statement", triple.id), MKG.confidence,
                       Literal(float(triple.confidence)), iris.graph(layer))
                for ev in triple.evidence:
                    yield from rm.evidence_quads(iris, triple, ev)
        for concept in self.iter_concepts():
            yield from rm.concept_quads(iris, concept)
        for link in self.iter_links():
            source = iris.node("entity", link.source)
            target = (iris.concept(link.target) if link.kind is LinkKind.DEFINITION_OF
                      else iris.node("entity", link.target))
            yield from rm.link_quads(iris, link, source, target)
        for decision in self.decisions():
            yield from rm.decision_quads(iris, decision)
