"""The graph in typed tables: the workspace's source of truth (SQLite, one file in
the workspace, WAL; or PostgreSQL, shared: :mod:`medkg.store.sql`; the schema is in
:mod:`medkg.store.schema`, one SQL text for both).

Over 500 lines because one class serves one schema: the writer, the read
model and the revision share its engine, its transactions and the row <-> model
mapping; split, they would pass all three around.

Three parts, kept apart:

- the **writer**: each public write is one transaction; rows are upserts keyed by
  content ids, so nothing is read to decide what to write (a statement's
  confidence keeps the larger value in the upsert itself);
- the **read model**: point reads and the batched reads a question needs (briefs of
  given entities, statements touching given entities, links of given nodes), whole
  layers as iterators in key order, a batch at a time;
- the **projection** (:mod:`medkg.store.projection`): the tables as RDF quads,
  streamed, for SPARQL, SHACL and every RDF export.

A read-only open (another process writes) reads the last committed state: SQLite's
WAL, and PostgreSQL's snapshots, let readers and one writer work side by side.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medkg.errors import NotFoundError, StoreError
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
    ReviewAction,
    ReviewState,
    ReviewTarget,
    Triple,
    review_payload_types,
)
from medkg.store.base import Deletion, LayerCounts, StoreCounts
from medkg.store.schema import (
    MIGRATIONS,
    QUALIFIER_COLUMNS,
    READABLE_FROM,
    SCHEMA_VERSION,
    qualifier_values,
    qualifiers_of,
)
from medkg.store.sql import Connection, Engine, SQLiteEngine
from medkg.store.vocab import IRIs

if TYPE_CHECKING:
    from medkg.store.projection import Quad

BATCH = 500  # ids per IN (...) and rows per page of a whole-layer read
FILE_NAME = "graph.sqlite"
_Q = ", ".join(f"q_{n}" for n in QUALIFIER_COLUMNS)
_Q_MARKS = ", ".join("?" for _ in QUALIFIER_COLUMNS)
_STATEMENT_COLUMNS = f"id, layer, head, predicate, tail, {_Q}, confidence, level, review, " \
                     "method, revision_of"
_DATA_LAYERS = (Layer.USER, Layer.LITERATURE)


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def _batches(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), BATCH):
        yield items[start:start + BATCH]


class TableStore:
    """GraphStore over typed tables. Open it through
    :func:`medkg.store.registry.open_store` (``store.backend = "sqlite"`` or
    ``"postgres"``)."""

    def __init__(self, engine: Engine, *, base_iri: str, read_only: bool = False) -> None:
        self.iris = IRIs(base_iri)
        self.engine = engine
        self.read_only = read_only
        self.round_trips = 0  # statements sent to the engine (benchmarks count them)
        self._lock = threading.RLock()
        self._errors = engine.errors
        try:
            self._db = engine.connect(read_only)
        except (OSError, *engine.errors) as exc:  # type: ignore[misc]
            raise StoreError(f"cannot open the graph tables at {engine.where()}: {exc}",
                             hint="is the workspace writable and the disk not full (sqlite), "
                                  "the server reachable and the login right (postgres)?"
                             ) from exc
        if not read_only:
            self._migrate()
            with self._tx(counted=False) as db:
                engine.after_migrations(db)
        elif not READABLE_FROM <= (found := self._version()) <= SCHEMA_VERSION:
            self._db.close()
            raise StoreError(f"the graph tables at {engine.where()} are at schema version "
                             f"{found}, this medkg reads {READABLE_FROM} to {SCHEMA_VERSION}",
                             hint="run the command again when the process writing the "
                                  "workspace has finished (it brings the schema up to date)")

    @property
    def path(self) -> Path | None:
        """The file holding the tables (None on a server)."""
        return getattr(self.engine, "path", None)

    # -- engine ----------------------------------------------------------------------

    def _version(self) -> int:
        try:
            row = self._db.execute("SELECT max(version) FROM schema_version").fetchone()
        except self._errors:
            return 0
        return int(row[0] or 0) if row else 0

    def _migrate(self) -> None:
        with self._tx(counted=False) as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY,"
                       " applied_at TEXT NOT NULL)")
        for version, steps in enumerate(MIGRATIONS, start=1):
            if version <= self._version():
                continue
            with self._tx(counted=False) as db:
                for step in steps:
                    db.execute(self.engine.ddl(step))
                db.execute("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                           (version, datetime.now(UTC).isoformat()))

    @contextmanager
    def _tx(self, *, counted: bool = True) -> Iterator[Connection]:
        """One write transaction: all of it or none of it; ``counted``: it moves the
        tables' revision on (every write after the schema exists)."""
        if self.read_only:
            raise StoreError("this graph store was opened read-only (another process "
                             "writes it)", hint="run the command again when it has finished")
        with self._lock:
            self._db.execute(self.engine.begin)
            try:
                yield self._db
                if counted:
                    self._db.execute("UPDATE revision SET n = n + 1 WHERE one = 1")
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            self.round_trips += 1
            try:
                return self._db.execute(sql, tuple(params)).fetchall()
            except self._errors as exc:
                raise StoreError(f"the graph tables refused a read: {exc}") from exc

    def _many(self, db: Connection, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.round_trips += 1
        db.executemany(sql, rows)

    def revision(self) -> int:
        """How many write transactions the tables have taken (the projection's stamp)."""
        return int(self._rows("SELECT n FROM revision WHERE one = 1")[0][0])

    def close(self) -> None:
        with self._lock:
            if not self.read_only:
                with suppress(*self._errors):
                    self.engine.closing(self._db)
            self._db.close()

    # -- documents and chunks ----------------------------------------------------------

    def add_document(self, document: Document, chunks: list[Chunk]) -> None:
        """A document with its chunks, one transaction; the same text stored again
        keeps one title and one source (the new ones) and its stage marks."""
        with self._tx() as db:
            self._many(db, "INSERT INTO documents (id, layer, title, source, media_type, text) "
                       "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                       "title = excluded.title, source = excluded.source",
                       [(document.id, document.layer.value, document.title, document.source,
                         document.media_type, document.text)])
            self._many(db, "INSERT INTO document_revisions (document_id, earlier_id) "
                       "VALUES (?, ?) ON CONFLICT DO NOTHING",
                       [(document.id, earlier) for earlier in document.revision_of])
            self._many(db, "INSERT INTO chunks (id, document_id, layer, idx, start_at, end_at, "
                       "text) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       [(c.id, document.id, document.layer.value, c.index, c.start, c.end,
                         c.text) for c in chunks])

    def _require_document(self, document_id: str) -> None:
        if not self.has_document(document_id):
            raise NotFoundError("document", document_id)

    def mark_stage(self, document_id: str, stage: str) -> None:
        self._require_document(document_id)
        with self._tx() as db:
            self._many(db, "INSERT INTO stage_marks (document_id, stage) VALUES (?, ?) "
                       "ON CONFLICT DO NOTHING", [(document_id, stage)])

    def unmark_stage(self, document_id: str, stage: str) -> None:
        with self._tx() as db:
            self._many(db, "DELETE FROM stage_marks WHERE document_id = ? AND stage = ?",
                       [(document_id, stage)])

    def stages(self, document_id: str) -> set[str]:
        return {r[0] for r in self._rows(
            "SELECT stage FROM stage_marks WHERE document_id = ?", (document_id,))}

    def has_document(self, document_id: str) -> bool:
        return bool(self._rows("SELECT 1 FROM documents WHERE id = ?", (document_id,)))

    def document(self, document_id: str) -> Document:
        rows = self._rows("SELECT id, layer, title, source, media_type, text FROM documents "
                          "WHERE id = ?", (document_id,))
        if not rows:
            raise NotFoundError("document", document_id)
        d = rows[0]
        earlier = sorted(r[0] for r in self._rows(
            "SELECT earlier_id FROM document_revisions WHERE document_id = ?", (document_id,)))
        return Document(id=d[0], layer=Layer(d[1]), title=d[2], source=d[3], media_type=d[4],
                        text=d[5], revision_of=earlier)

    def document_ids(self, layer: Layer | None = None) -> list[str]:
        if layer is None:
            return [r[0] for r in self._rows("SELECT id FROM documents ORDER BY id")]
        return [r[0] for r in self._rows("SELECT id FROM documents WHERE layer = ? ORDER BY id",
                                         (layer.value,))]

    def document_sources(self, layer: Layer) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for source, doc_id in self._rows("SELECT source, id FROM documents WHERE layer = ? "
                                         "ORDER BY source, id", (layer.value,)):
            out[source].append(doc_id)
        return dict(out)

    @staticmethod
    def _chunk_from(r: tuple[Any, ...]) -> Chunk:
        return Chunk(id=r[0], document_id=r[1], layer=Layer(r[2]), index=r[3], start=r[4],
                     end=r[5], text=r[6])

    _CHUNK = "SELECT id, document_id, layer, idx, start_at, end_at, text FROM chunks"

    def chunk(self, chunk_id: str) -> Chunk:
        rows = self._rows(f"{self._CHUNK} WHERE id = ?", (chunk_id,))
        if not rows:
            raise NotFoundError("chunk", chunk_id)
        return self._chunk_from(rows[0])

    def chunks_by_id(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """The chunks these ids name (those that exist), a batch per query."""
        wanted = list(dict.fromkeys(chunk_ids))
        out: dict[str, Chunk] = {}
        for batch in _batches(wanted):
            for r in self._rows(f"{self._CHUNK} WHERE id IN ({_marks(len(batch))})", batch):
                out[r[0]] = self._chunk_from(r)
        return out

    def chunk_ids(self) -> set[str]:
        return {r[0] for r in self._rows("SELECT id FROM chunks")}

    def chunks(self, document_id: str) -> list[Chunk]:
        self._require_document(document_id)
        return [self._chunk_from(r) for r in self._rows(
            f"{self._CHUNK} WHERE document_id = ? ORDER BY idx", (document_id,))]

    # -- vocabulary ----------------------------------------------------------------------

    def add_concepts(self, concepts: Iterable[Concept], source: str,
                     loaded_at: datetime | None = None) -> int:
        """Concepts, each replacing what was stored under its id (the last of several
        with one id wins), and the vocabulary's load time, in one transaction."""
        latest = {c.id: c for c in concepts}
        with self._tx() as db:
            self._many(db, "INSERT INTO vocabulary_sources (name, loaded_at) VALUES (?, ?) "
                       "ON CONFLICT (name) DO UPDATE SET loaded_at = excluded.loaded_at",
                       [(source, (loaded_at or datetime.now(UTC)).isoformat())])
            self._many(db, "INSERT INTO concepts (id, name, synonyms, definition, semantic_type, "
                       "semantic_group, parents, xrefs, source, obsolete, replaced_by) VALUES "
                       "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                       "name = excluded.name, synonyms = excluded.synonyms, "
                       "definition = excluded.definition, semantic_type = excluded.semantic_type,"
                       " semantic_group = excluded.semantic_group, parents = excluded.parents, "
                       "xrefs = excluded.xrefs, source = excluded.source, "
                       "obsolete = excluded.obsolete, replaced_by = excluded.replaced_by",
                       [(c.id, c.name, json.dumps(sorted(set(c.synonyms))), c.definition or None,
                         c.semantic_type or None, c.semantic_group or None,
                         json.dumps(sorted(set(c.parents))), json.dumps(sorted(set(c.xrefs))),
                         c.source, int(c.obsolete), c.replaced_by) for c in latest.values()])
        return len(latest)

    _CONCEPT = ("SELECT id, name, synonyms, definition, semantic_type, semantic_group, parents, "
                "xrefs, source, obsolete, replaced_by FROM concepts")

    @staticmethod
    def _concept_from(r: tuple[Any, ...]) -> Concept:
        return Concept(id=r[0], name=r[1], synonyms=json.loads(r[2]), definition=r[3],
                       semantic_type=r[4], semantic_group=r[5], parents=json.loads(r[6]),
                       xrefs=json.loads(r[7]), source=r[8], obsolete=bool(r[9]),
                       replaced_by=r[10])

    def concept(self, concept_id: str) -> Concept:
        rows = self._rows(f"{self._CONCEPT} WHERE id = ?", (concept_id,))
        if not rows:
            raise NotFoundError("concept", concept_id)
        return self._concept_from(rows[0])

    def concepts(self) -> list[Concept]:
        return list(self.iter_concepts())

    def iter_concepts(self) -> Iterator[Concept]:
        for rows in self._pages(self._CONCEPT, "id"):
            yield from map(self._concept_from, rows)

    def vocabulary_sources(self) -> list[tuple[str, str]]:
        """(vocabulary, when it was last loaded) for every vocabulary loaded."""
        return [(r[0], r[1]) for r in self._rows(
            "SELECT name, loaded_at FROM vocabulary_sources ORDER BY name")]

    def _pages(self, select: str, key: str, where: str = "", params: Sequence[Any] = ()
               ) -> Iterator[list[tuple[Any, ...]]]:
        """A whole table (or its ``where`` part) a page at a time, by key: no list of
        every row is held, and no page costs more than the one before."""
        last = ""
        clause = f"{where} AND " if where else ""
        while True:
            rows = self._rows(f"{select} WHERE {clause}{key} > ? ORDER BY {key} LIMIT {BATCH}",
                              (*params, last))
            if not rows:
                return
            yield rows
            last = rows[-1][0]

    # -- entities --------------------------------------------------------------------------

    def add_entities(self, entities: Iterable[Entity]) -> None:
        """Entities (their fields as first written: a curator's edit stays) and their
        mentions, one transaction."""
        heads, concepts, mentions = [], [], []
        for e in entities:
            heads.append((e.id, e.layer.value, e.name, e.type, e.context))
            concepts += [(e.id, c) for c in e.concept_ids]
            mentions += [(m.id_in(e.id), e.id, m.chunk_id, m.document_id, m.start, m.end,
                          m.text, *qualifier_values(m.qualifiers)) for m in e.mentions]
        with self._tx() as db:
            self._many(db, "INSERT INTO entities (id, layer, name, type, context) "
                       "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", heads)
            self._many(db, "INSERT INTO entity_concepts (entity_id, concept_id) VALUES (?, ?) "
                       "ON CONFLICT DO NOTHING", concepts)
            self._many(db, f"INSERT INTO mentions (id, entity_id, chunk_id, document_id, "
                       f"start_at, end_at, text, {_Q}) VALUES (?, ?, ?, ?, ?, ?, ?, {_Q_MARKS}) "
                       "ON CONFLICT DO NOTHING", mentions)

    def _concept_ids_of(self, entity_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for batch in _batches(entity_ids):
            for eid, cid in self._rows("SELECT entity_id, concept_id FROM entity_concepts "
                                       f"WHERE entity_id IN ({_marks(len(batch))}) "
                                       "ORDER BY entity_id, concept_id", batch):
                out[eid].append(cid)
        return out

    def _mentions_of(self, entity_ids: Sequence[str]) -> dict[str, list[Mention]]:
        out: dict[str, list[Mention]] = defaultdict(list)
        for batch in _batches(entity_ids):
            for r in self._rows(f"SELECT entity_id, chunk_id, document_id, start_at, end_at, "
                                f"text, {_Q} FROM mentions WHERE entity_id IN "
                                f"({_marks(len(batch))}) ORDER BY entity_id, document_id, "
                                "start_at", batch):
                out[r[0]].append(Mention(chunk_id=r[1], document_id=r[2], start=r[3], end=r[4],
                                         text=r[5], qualifiers=qualifiers_of(r[6:])))
        return out

    def _entities(self, rows: list[tuple[Any, ...]]) -> list[Entity]:
        ids = [r[0] for r in rows]
        concepts, mentions = self._concept_ids_of(ids), self._mentions_of(ids)
        return [Entity(id=r[0], layer=Layer(r[1]), name=r[2], type=r[3], context=r[4],
                       concept_ids=concepts.get(r[0], []), mentions=mentions.get(r[0], []))
                for r in rows]

    _ENTITY = "SELECT id, layer, name, type, context FROM entities"

    def entity(self, entity_id: str) -> Entity:
        rows = self._rows(f"{self._ENTITY} WHERE id = ?", (entity_id,))
        if not rows:
            raise NotFoundError("entity", entity_id)
        return self._entities(rows)[0]

    def entity_ids(self) -> set[str]:
        return {r[0] for r in self._rows("SELECT id FROM entities")}

    def entities(self, layer: Layer) -> list[Entity]:
        return [e for batch in self.iter_full_entities(layer) for e in batch]

    def iter_full_entities(self, layer: Layer) -> Iterator[list[Entity]]:
        """The layer's entities with their mentions, a page at a time."""
        for rows in self._pages(self._ENTITY, "id", "layer = ?", (layer.value,)):
            yield self._entities(rows)

    def entity_heads(self, layer: Layer) -> list[Entity]:
        """The layer's entities without their mentions (name, type, context, concepts:
        what linking embeds and compares), a page at a time from the tables; no
        mention is read, so the list is small beside the layer's mentions."""
        out: list[Entity] = []
        for rows in self._pages(self._ENTITY, "id", "layer = ?", (layer.value,)):
            concepts = self._concept_ids_of([r[0] for r in rows])
            out += [Entity(id=r[0], layer=Layer(r[1]), name=r[2], type=r[3], context=r[4],
                           concept_ids=concepts.get(r[0], [])) for r in rows]
        return out

    def entities_mentioned_at(self, layer: Layer, places: Iterable[tuple[str, int]]
                              ) -> list[str]:
        """The ids of the layer's entities mentioned at any of these (chunk id, start)
        places, read by the places' documents."""
        wanted = set(places)
        documents = sorted({c.document_id for c in
                            self.chunks_by_id(sorted({c for c, _ in wanted})).values()})
        found: set[str] = set()
        for batch in _batches(documents):
            found.update(r[0] for r in self._rows(
                "SELECT m.entity_id, m.chunk_id, m.start_at FROM mentions m JOIN entities e "
                f"ON e.id = m.entity_id WHERE m.document_id IN ({_marks(len(batch))}) "
                "AND e.layer = ?", [*batch, layer.value]) if (r[1], r[2]) in wanted)
        return sorted(found)

    def chunk_graph(self, chunks: Sequence[Chunk]
                    ) -> tuple[dict[str, list[Entity]], dict[str, list[Triple]]]:
        """What these chunks hold: per chunk, the entities mentioned there (with only
        those mentions) and the statements in force with evidence there; read by the
        chunks' documents, never the whole layer."""
        wanted = {c.id for c in chunks}
        documents = sorted({c.document_id for c in chunks})
        mentions: dict[str, dict[str, list[Mention]]] = defaultdict(lambda: defaultdict(list))
        statement_ids: set[str] = set()
        for batch in _batches(documents):
            marks = _marks(len(batch))
            for r in self._rows(f"SELECT entity_id, chunk_id, document_id, start_at, end_at, "
                                f"text, {_Q} FROM mentions WHERE document_id IN ({marks}) "
                                "ORDER BY entity_id, document_id, start_at", batch):
                if r[1] in wanted:
                    mentions[r[1]][r[0]].append(Mention(
                        chunk_id=r[1], document_id=r[2], start=r[3], end=r[4], text=r[5],
                        qualifiers=qualifiers_of(r[6:])))
            statement_ids.update(r[0] for r in self._rows(
                f"SELECT DISTINCT statement_id FROM evidence WHERE document_id IN ({marks})",
                batch))
        heads = {r[0]: r for batch in _batches(sorted({e for m in mentions.values() for e in m}))
                 for r in self._rows(f"{self._ENTITY} WHERE id IN ({_marks(len(batch))})",
                                     batch)}
        concepts = self._concept_ids_of(sorted(heads))
        entities: dict[str, list[Entity]] = {}
        for chunk_id, found in mentions.items():
            entities[chunk_id] = [
                Entity(id=h[0], layer=Layer(h[1]), name=h[2], type=h[3], context=h[4],
                       concept_ids=concepts.get(h[0], []), mentions=found[eid])
                for eid in sorted(found) if (h := heads.get(eid)) is not None]
        triples: dict[str, list[Triple]] = {}
        ordered = sorted(statement_ids)
        for batch in _batches(ordered):
            for t in self._triples(self._rows(
                    f"{self._STATEMENT} WHERE id IN ({_marks(len(batch))}) ORDER BY id",
                    batch)):
                if not t.in_force:
                    continue
                for ev in t.evidence:  # as the contract's reading does: once a quote
                    if ev.chunk_id in wanted:
                        triples.setdefault(ev.chunk_id, []).append(t)
        return entities, triples

    def entities_of_concepts(self, concept_ids: Iterable[str]) -> list[EntityBrief]:
        wanted = list(dict.fromkeys(concept_ids))
        found: set[str] = set()
        for batch in _batches(wanted):
            found.update(r[0] for r in self._rows(
                "SELECT c.entity_id FROM entity_concepts c JOIN entities e ON e.id = c.entity_id"
                f" WHERE c.concept_id IN ({_marks(len(batch))})", batch))
        return self.entity_briefs(sorted(found))

    def entity_briefs(self, entity_ids: Iterable[str], *, mentions: bool = True
                      ) -> list[EntityBrief]:
        """What a question needs of these entities: fields and concepts, and (unless
        ``mentions=False``) the chunks and surface texts that mention them; a few
        queries per batch of ids, whatever the corpus."""
        wanted = list(dict.fromkeys(entity_ids))
        rows: list[tuple[Any, ...]] = []
        for batch in _batches(wanted):
            rows += self._rows("SELECT id, layer, name, type FROM entities WHERE id IN "
                               f"({_marks(len(batch))})", batch)
        ids = [r[0] for r in rows]
        concepts = self._concept_ids_of(ids)
        chunks: dict[str, set[str]] = defaultdict(set)
        surface: dict[str, set[str]] = defaultdict(set)
        if mentions:
            for batch in _batches(ids):
                for eid, chunk, text in self._rows(
                        "SELECT DISTINCT entity_id, chunk_id, text FROM mentions WHERE "
                        f"entity_id IN ({_marks(len(batch))})", batch):
                    chunks[eid].add(chunk)
                    surface[eid].add(text)
        return sorted((EntityBrief(id=r[0], layer=Layer(r[1]), name=r[2], type=r[3],
                                   concept_ids=concepts.get(r[0], []),
                                   chunk_ids=sorted(chunks[r[0]]), surface=sorted(surface[r[0]]))
                       for r in rows), key=lambda b: b.id)

    def iter_entities(self, layer: Layer) -> Iterator[EntityBrief]:
        """Briefs without mentions, a page at a time in id order."""
        for rows in self._pages("SELECT id, layer, name, type FROM entities", "id",
                                "layer = ?", (layer.value,)):
            concepts = self._concept_ids_of([r[0] for r in rows])
            yield from (EntityBrief(id=r[0], layer=Layer(r[1]), name=r[2], type=r[3],
                                    concept_ids=concepts.get(r[0], [])) for r in rows)

    def mention_counts(self, entity_ids: Iterable[str]) -> dict[str, int]:
        """How many times each of these entities is mentioned (0: never)."""
        wanted = list(dict.fromkeys(entity_ids))
        out = dict.fromkeys(wanted, 0)
        for batch in _batches(wanted):
            out.update((eid, int(n)) for eid, n in self._rows(
                "SELECT entity_id, count(*) FROM mentions WHERE entity_id IN "
                f"({_marks(len(batch))}) GROUP BY entity_id", batch))
        return out

    def update_entity(self, entity_id: str, edit: EntityEdit) -> bool:
        with self._tx() as db:
            if not db.execute("SELECT 1 FROM entities WHERE id = ?", (entity_id,)).fetchone():
                return False
            if edit.name is not None:
                db.execute("UPDATE entities SET name = ? WHERE id = ?", (edit.name, entity_id))
            if edit.type is not None:
                db.execute("UPDATE entities SET type = ? WHERE id = ?", (edit.type, entity_id))
            if edit.concept_ids is not None:
                db.execute("DELETE FROM entity_concepts WHERE entity_id = ?", (entity_id,))
                db.executemany("INSERT INTO entity_concepts (entity_id, concept_id) VALUES "
                               "(?, ?) ON CONFLICT DO NOTHING",
                               [(entity_id, c) for c in edit.concept_ids])
            self.round_trips += 1
        return True

    # -- statements ------------------------------------------------------------------------

    def add_triples(self, triples: Iterable[Triple]) -> None:
        """Statements and their evidence, one transaction; a statement written again
        keeps the larger confidence (in the upsert: nothing is read first)."""
        rows, evidence = [], []
        for t in triples:
            rows.append((t.id, t.layer.value, t.head, t.predicate.value, t.tail,
                         *qualifier_values(t.qualifiers), float(t.confidence), t.level,
                         t.review.value, t.method, t.revision_of))
            evidence += [(t.id, e.id, e.chunk_id, e.document_id, e.start, e.end, e.quote)
                         for e in t.evidence]
        with self._tx() as db:
            self._many(db, f"INSERT INTO statements ({_STATEMENT_COLUMNS}) VALUES "
                       f"(?, ?, ?, ?, ?, {_Q_MARKS}, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE "
                       "SET confidence = CASE WHEN excluded.confidence > statements.confidence "
                       "THEN excluded.confidence ELSE statements.confidence END", rows)
            self._many(db, "INSERT INTO evidence (statement_id, id, chunk_id, document_id, "
                       "start_at, end_at, quote) VALUES (?, ?, ?, ?, ?, ?, ?) "
                       "ON CONFLICT DO NOTHING", evidence)

    def _triples(self, rows: list[tuple[Any, ...]]) -> list[Triple]:
        ids = [r[0] for r in rows]
        evidence: dict[str, list[Evidence]] = defaultdict(list)
        for batch in _batches(ids):
            for r in self._rows("SELECT statement_id, chunk_id, document_id, start_at, end_at, "
                                f"quote FROM evidence WHERE statement_id IN "
                                f"({_marks(len(batch))}) ORDER BY statement_id, document_id, "
                                "start_at", batch):
                evidence[r[0]].append(Evidence(chunk_id=r[1], document_id=r[2], start=r[3],
                                               end=r[4], quote=r[5]))
        n = len(QUALIFIER_COLUMNS)
        return [Triple(id=r[0], layer=Layer(r[1]), head=r[2], predicate=Predicate(r[3]),
                       tail=r[4], qualifiers=qualifiers_of(r[5:5 + n]), confidence=r[5 + n],
                       level=r[6 + n], review=ReviewState(r[7 + n]), method=r[8 + n],
                       revision_of=r[9 + n], evidence=evidence.get(r[0], []))
                for r in rows]

    _STATEMENT = f"SELECT {_STATEMENT_COLUMNS} FROM statements"

    def triple(self, triple_id: str) -> Triple:
        rows = self._rows(f"{self._STATEMENT} WHERE id = ?", (triple_id,))
        if not rows:
            raise NotFoundError("statement", triple_id)
        return self._triples(rows)[0]

    def revisions_of(self, triple_id: str) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM statements WHERE revision_of = ? "
                                         "ORDER BY id", (triple_id,))]

    def triples(self, layer: Layer | None = None, entity_ids: Iterable[str] | None = None
                ) -> list[Triple]:
        if entity_ids is None:
            layers = [layer] if layer else list(_DATA_LAYERS)
            out = [t for lay in layers for t in self.iter_triples(lay)]
            return sorted(out, key=lambda t: t.id)
        wanted = list(dict.fromkeys(entity_ids))
        rows: dict[str, tuple[Any, ...]] = {}
        only = " AND layer = ?" if layer else ""
        for batch in _batches(wanted):
            marks = _marks(len(batch))
            params = [*batch, *([layer.value] if layer else [])]
            for column in ("head", "tail"):
                rows.update((r[0], r) for r in self._rows(
                    f"{self._STATEMENT} WHERE {column} IN ({marks}){only}", params))
        return sorted(self._triples(list(rows.values())), key=lambda t: t.id)

    def iter_triples(self, layer: Layer) -> Iterator[Triple]:
        for rows in self._pages(self._STATEMENT, "id", "layer = ?", (layer.value,)):
            yield from self._triples(rows)

    def statements(self, *, layer: Layer | None = None, review: ReviewState | None = None,
                   predicate: Predicate | None = None, offset: int = 0, limit: int = 50
                   ) -> list[Triple]:
        """A page of statements by filter, in id order."""
        where, params = [], []
        for column, value in (("layer", layer), ("review", review), ("predicate", predicate)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value.value)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        return self._triples(self._rows(
            f"{self._STATEMENT}{clause} ORDER BY id LIMIT ? OFFSET ?",
            (*params, int(limit), int(offset))))

    def set_review_state(self, triple_id: str, state: ReviewState) -> bool:
        with self._tx() as db:
            self.round_trips += 1
            done = db.execute("UPDATE statements SET review = ? WHERE id = ?",
                              (state.value, triple_id))
            return done.rowcount > 0

    def remove_triples(self, triple_ids: Iterable[str]) -> list[str]:
        """Remove statements with their evidence, one transaction; the ids that were there."""
        wanted = sorted(set(triple_ids))
        found: list[str] = []
        with self._tx() as db:
            for batch in _batches(wanted):
                marks = _marks(len(batch))
                found += [r[0] for r in db.execute(
                    f"SELECT id FROM statements WHERE id IN ({marks})", list(batch))]
                db.execute(f"DELETE FROM evidence WHERE statement_id IN ({marks})", list(batch))
                db.execute(f"DELETE FROM statements WHERE id IN ({marks})", list(batch))
                self.round_trips += 3
        return sorted(found)

    # -- review decisions ----------------------------------------------------------------------

    def add_decisions(self, decisions: Iterable[Decision]) -> None:
        with self._tx() as db:
            self._many(db, "INSERT INTO decisions (id, target_kind, target, action, reviewer, at, "
                       "reason, before, after, undoes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                       "ON CONFLICT DO NOTHING",
                       [(d.id, d.target_kind.value, d.target, d.action.value, d.reviewer,
                         d.at.isoformat(), d.reason,
                         d.before.model_dump_json() if d.before is not None else None,
                         d.after.model_dump_json() if d.after is not None else None, d.undoes)
                        for d in decisions])

    @staticmethod
    def _decision_from(r: tuple[Any, ...]) -> Decision:
        kind = ReviewTarget(r[1])
        snapshot, edit = review_payload_types(kind)
        return Decision(id=r[0], target_kind=kind, target=r[2], action=ReviewAction(r[3]),
                        reviewer=r[4], at=datetime.fromisoformat(r[5]), reason=r[6],
                        before=snapshot.model_validate_json(r[7]) if r[7] is not None else None,
                        after=edit.model_validate_json(r[8]) if r[8] is not None else None,
                        undoes=r[9])

    def decisions(self, target: str | None = None) -> list[Decision]:
        select = ("SELECT id, target_kind, target, action, reviewer, at, reason, before, after, "
                  "undoes FROM decisions")
        rows = (self._rows(select) if target is None
                else self._rows(f"{select} WHERE target = ?", (target,)))
        return sorted(map(self._decision_from, rows), key=lambda d: (d.at, d.id))

    # -- links -----------------------------------------------------------------------------

    def add_links(self, links: Iterable[Link]) -> None:
        with self._tx() as db:
            self._many(db, "INSERT INTO links (id, kind, source, target, score, method) VALUES "
                       "(?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       [(x.id, x.kind.value, x.source, x.target, float(x.score), x.method)
                        for x in links])

    @staticmethod
    def _link_from(r: tuple[Any, ...]) -> Link:
        return Link(kind=LinkKind(r[1]), source=r[2], target=r[3], score=r[4], method=r[5])

    _LINK = "SELECT id, kind, source, target, score, method FROM links"

    def links(self, *, source: str | None = None, target: str | None = None,
              kind: LinkKind | None = None) -> list[Link]:
        where, params = [], []
        for column, value in (("source", source), ("target", target),
                              ("kind", kind.value if kind is not None else None)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        out = map(self._link_from, self._rows(f"{self._LINK}{clause}", params))
        return sorted(out, key=lambda x: (x.kind.value, x.source, -x.score, x.target))

    def links_of(self, node_ids: Iterable[str], kinds: Iterable[LinkKind] | None = None
                 ) -> list[Link]:
        """Every link from or to one of these nodes (of these kinds), batched."""
        wanted = list(dict.fromkeys(node_ids))
        only = [k.value for k in kinds] if kinds is not None else None
        found: dict[str, Link] = {}
        for batch in _batches(wanted):
            marks = _marks(len(batch))
            kind_clause = f" AND kind IN ({_marks(len(only))})" if only else ""
            for column in ("source", "target"):
                for r in self._rows(f"{self._LINK} WHERE {column} IN ({marks}){kind_clause}",
                                    [*batch, *(only or [])]):
                    found[r[0]] = self._link_from(r)
        return sorted(found.values(), key=lambda x: (x.kind.value, x.source, -x.score, x.target))

    def iter_links(self, kind: LinkKind | None = None) -> Iterator[Link]:
        where, params = ("kind = ?", (kind.value,)) if kind is not None else ("", ())
        for rows in self._pages(self._LINK, "id", where, params):
            yield from map(self._link_from, rows)

    def remove_links(self, links: Iterable[Link]) -> int:
        ids = sorted({x.id for x in links})
        gone = 0
        with self._tx() as db:
            for batch in _batches(ids):
                gone += db.execute(f"DELETE FROM links WHERE id IN ({_marks(len(batch))})",
                                   list(batch)).rowcount
                self.round_trips += 1
        return gone

    # -- deletion --------------------------------------------------------------------------

    def _deletion_plan(self, db: Connection, document_id: str, keep_text: bool
                       ) -> tuple[Deletion, list[str], list[str]]:
        """What deleting the document's extraction (and, unless ``keep_text``, the
        document) removes: (the report, statements gone, links gone), read inside the
        deleting transaction."""
        out = Deletion()

        def ids(sql: str, *params: Any) -> list[str]:
            self.round_trips += 1
            return [r[0] for r in db.execute(sql, params)]

        if not keep_text:
            out.chunks = sorted(ids("SELECT id FROM chunks WHERE document_id = ?", document_id))
        out.mentions = len(ids("SELECT id FROM mentions WHERE document_id = ?", document_id))
        out.evidence = len(ids("SELECT DISTINCT id FROM evidence WHERE document_id = ?",
                               document_id))
        out.entities = sorted(ids(
            "SELECT DISTINCT m.entity_id FROM mentions m WHERE m.document_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM mentions o WHERE o.entity_id = m.entity_id AND o.document_id <> ?)",
            document_id, document_id))
        statements = set(ids(
            "SELECT DISTINCT v.statement_id FROM evidence v WHERE v.document_id = ? AND NOT "
            "EXISTS (SELECT 1 FROM evidence o WHERE o.statement_id = v.statement_id AND "
            "o.document_id <> ?)", document_id, document_id))
        links: set[str] = set()
        for batch in _batches(out.entities):
            marks = _marks(len(batch))
            statements.update(ids(f"SELECT id FROM statements WHERE head IN ({marks}) OR tail "
                                  f"IN ({marks})", *batch, *batch))
            links.update(ids(f"SELECT id FROM links WHERE source IN ({marks}) OR target IN "
                             f"({marks})", *batch, *batch))
        out.triples = sorted(statements)
        out.links = len(links)
        return out, out.triples, sorted(links)

    def _delete(self, db: Connection, document_id: str, out: Deletion,
                statements: list[str], links: list[str], keep_text: bool) -> None:
        for table, column in (("mentions", "document_id"), ("evidence", "document_id")):
            db.execute(f"DELETE FROM {table} WHERE {column} = ?", (document_id,))
        for batch in _batches(out.entities):
            marks = _marks(len(batch))
            db.execute(f"DELETE FROM entity_concepts WHERE entity_id IN ({marks})", list(batch))
            db.execute(f"DELETE FROM entities WHERE id IN ({marks})", list(batch))
        for batch in _batches(statements):
            marks = _marks(len(batch))
            db.execute(f"DELETE FROM evidence WHERE statement_id IN ({marks})", list(batch))
            db.execute(f"DELETE FROM statements WHERE id IN ({marks})", list(batch))
        for batch in _batches(links):
            db.execute(f"DELETE FROM links WHERE id IN ({_marks(len(batch))})", list(batch))
        if not keep_text:
            for table, column in (("chunks", "document_id"), ("stage_marks", "document_id"),
                                  ("document_revisions", "document_id"), ("documents", "id")):
                db.execute(f"DELETE FROM {table} WHERE {column} = ?", (document_id,))
        self.round_trips += 8

    def delete_extraction(self, document_id: str, marks: Iterable[str]) -> Deletion:
        """Remove what extraction wrote from a document (and these stage marks) in one
        transaction; its text and chunks stay."""
        with self._tx() as db:
            out, statements, links = self._deletion_plan(db, document_id, keep_text=True)
            self._delete(db, document_id, out, statements, links, keep_text=True)
            db.executemany("DELETE FROM stage_marks WHERE document_id = ? AND stage = ?",
                           [(document_id, m) for m in marks])
        return out

    def delete_document(self, document_id: str,
                        journal: Callable[[Deletion], None] | None = None) -> Deletion:
        """Remove a document and everything only it supports, in one transaction;
        ``journal`` hears what goes before anything does."""
        self._require_document(document_id)
        with self._tx() as db:
            out, statements, links = self._deletion_plan(db, document_id, keep_text=False)
            if journal is not None:
                journal(out)
            self._delete(db, document_id, out, statements, links, keep_text=False)
        return out

    # -- whole store -----------------------------------------------------------------------

    def migrate_concept_iris(self) -> int:
        """Concepts are keyed by CURIE here; their IRIs are made by the projection."""
        return 0

    def counts(self) -> StoreCounts:
        """Rows per kind and layer, a few aggregate queries; ``quads`` is what the RDF
        projection of them holds (:mod:`medkg.store.projection`)."""
        per: dict[tuple[str, str], int] = {}
        for table in ("documents", "chunks", "entities", "statements"):
            for name, n in self._rows(f"SELECT layer, count(*) FROM {table} GROUP BY layer"):
                per[(table, name)] = int(n)

        def layer(which: Layer) -> LayerCounts:
            return LayerCounts(*(per.get((t, which.value), 0)
                                 for t in ("documents", "chunks", "entities", "statements")))

        def total(table: str) -> int:
            return int(self._rows(f"SELECT count(*) FROM {table}")[0][0])

        from medkg.store.projection import count_quads

        return StoreCounts(quads=count_quads(self), user=layer(Layer.USER),
                           literature=layer(Layer.LITERATURE), concepts=total("concepts"),
                           links=total("links"), decisions=total("decisions"))

    def quads(self) -> Iterator[Quad]:
        """The graph as RDF (the projection), a batch of rows at a time."""
        from medkg.store.projection import project

        return project(self)

    def clear(self) -> None:
        """Remove every row (a copy into this store is started again)."""
        with self._tx() as db:
            for table in ("documents", "document_revisions", "stage_marks", "chunks",
                          "vocabulary_sources", "concepts", "entities", "entity_concepts",
                          "mentions", "statements", "evidence", "links", "decisions"):
                db.execute(f"DELETE FROM {table}")


def open_tables(directory: Path, *, base_iri: str, read_only: bool = False) -> TableStore:
    """The tables in one SQLite file in ``directory``."""
    return TableStore(SQLiteEngine(directory / FILE_NAME), base_iri=base_iri,
                      read_only=read_only)
