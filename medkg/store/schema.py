"""The tables that hold the graph: one schema, versioned, in standard SQL (upserts
by ``ON CONFLICT``, no engine's own functions), run verbatim by SQLite and
PostgreSQL (:mod:`medkg.store.sql`; PostgreSQL's text columns get byte-order
collation, as SQLite compares).

Every row is keyed by a content-derived id (:mod:`medkg.model`), so a write is an
idempotent upsert and never reads first. Qualifier flags and offsets are columns;
lists that nothing queries by (a concept's synonyms) are JSON text. The indexes are
the read model's questions: entity → chunks (mentions by entity), concept →
entities, statements by head, tail, layer and the statement a curator's version
replaces, links by source and target, decisions by target.

Migrations are a numbered list of SQL steps recorded in ``schema_version``: no
Alembic (a dependency and an ``env.py`` for one linear history, which the two
engines share verbatim); a step is one transaction, so a crash leaves the schema at
the step before, and the next open runs what is left.
"""

from __future__ import annotations

from medkg.model import Qualifiers

# The qualifier columns, from the model (never restated): a statement's and a
# mention's flags are the model's fields, in the model's order.
QUALIFIER_COLUMNS: tuple[str, ...] = tuple(Qualifiers.model_fields)


def _qualifier_ddl() -> str:
    def ddl(name: str) -> str:
        field = Qualifiers.model_fields[name]
        if field.annotation is bool:
            return "INTEGER NOT NULL"
        return "TEXT NOT NULL" if field.is_required() or field.default is not None else "TEXT"

    return ", ".join(f"q_{name} {ddl(name)}" for name in QUALIFIER_COLUMNS)


MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: the graph
    (
        "CREATE TABLE documents (id TEXT PRIMARY KEY, layer TEXT NOT NULL, "
        "title TEXT NOT NULL, source TEXT NOT NULL, media_type TEXT NOT NULL, "
        "text TEXT NOT NULL)",
        "CREATE INDEX documents_layer ON documents (layer, source)",
        "CREATE TABLE document_revisions (document_id TEXT NOT NULL, earlier_id TEXT NOT NULL, "
        "PRIMARY KEY (document_id, earlier_id))",
        "CREATE TABLE stage_marks (document_id TEXT NOT NULL, stage TEXT NOT NULL, "
        "PRIMARY KEY (document_id, stage))",
        "CREATE TABLE chunks (id TEXT PRIMARY KEY, document_id TEXT NOT NULL, "
        "layer TEXT NOT NULL, idx INTEGER NOT NULL, start_at INTEGER NOT NULL, "
        "end_at INTEGER NOT NULL, text TEXT NOT NULL)",
        "CREATE INDEX chunks_document ON chunks (document_id, idx)",
        "CREATE TABLE vocabulary_sources (name TEXT PRIMARY KEY, loaded_at TEXT NOT NULL)",
        "CREATE TABLE concepts (id TEXT PRIMARY KEY, name TEXT NOT NULL, "
        "synonyms TEXT NOT NULL, definition TEXT, semantic_type TEXT, semantic_group TEXT, "
        "parents TEXT NOT NULL, xrefs TEXT NOT NULL, source TEXT NOT NULL, "
        "obsolete INTEGER NOT NULL, replaced_by TEXT)",
        "CREATE TABLE entities (id TEXT PRIMARY KEY, layer TEXT NOT NULL, name TEXT NOT NULL, "
        "type TEXT NOT NULL, context TEXT NOT NULL)",
        "CREATE INDEX entities_layer ON entities (layer, id)",
        "CREATE TABLE entity_concepts (entity_id TEXT NOT NULL, concept_id TEXT NOT NULL, "
        "PRIMARY KEY (entity_id, concept_id))",
        "CREATE INDEX entity_concepts_concept ON entity_concepts (concept_id)",
        "CREATE TABLE mentions (id TEXT PRIMARY KEY, entity_id TEXT NOT NULL, "
        "chunk_id TEXT NOT NULL, document_id TEXT NOT NULL, start_at INTEGER NOT NULL, "
        f"end_at INTEGER NOT NULL, text TEXT NOT NULL, {_qualifier_ddl()})",
        "CREATE INDEX mentions_entity ON mentions (entity_id, chunk_id)",
        "CREATE INDEX mentions_document ON mentions (document_id)",
        "CREATE TABLE statements (id TEXT PRIMARY KEY, layer TEXT NOT NULL, "
        "head TEXT NOT NULL, predicate TEXT NOT NULL, tail TEXT NOT NULL, "
        f"{_qualifier_ddl()}, confidence DOUBLE PRECISION NOT NULL, level INTEGER NOT NULL, "
        "review TEXT NOT NULL, method TEXT NOT NULL, revision_of TEXT)",
        "CREATE INDEX statements_head ON statements (head)",
        "CREATE INDEX statements_tail ON statements (tail)",
        "CREATE INDEX statements_layer ON statements (layer, id)",
        "CREATE INDEX statements_revision ON statements (revision_of)",
        "CREATE TABLE evidence (statement_id TEXT NOT NULL, id TEXT NOT NULL, "
        "chunk_id TEXT NOT NULL, document_id TEXT NOT NULL, start_at INTEGER NOT NULL, "
        "end_at INTEGER NOT NULL, quote TEXT NOT NULL, PRIMARY KEY (statement_id, id))",
        "CREATE INDEX evidence_document ON evidence (document_id)",
        "CREATE TABLE links (id TEXT PRIMARY KEY, kind TEXT NOT NULL, source TEXT NOT NULL, "
        "target TEXT NOT NULL, score DOUBLE PRECISION NOT NULL, method TEXT NOT NULL)",
        "CREATE INDEX links_source ON links (source)",
        "CREATE INDEX links_target ON links (target)",
        "CREATE INDEX links_kind ON links (kind, id)",
        "CREATE TABLE decisions (id TEXT PRIMARY KEY, target_kind TEXT NOT NULL, "
        "target TEXT NOT NULL, action TEXT NOT NULL, reviewer TEXT NOT NULL, at TEXT NOT NULL, "
        "reason TEXT NOT NULL, before TEXT, after TEXT, undoes TEXT)",
        "CREATE INDEX decisions_target ON decisions (target)",
        # How many write transactions the tables have taken: what the RDF
        # projection was made from is recorded against it.
        "CREATE TABLE revision (one INTEGER PRIMARY KEY, n INTEGER NOT NULL)",
        "INSERT INTO revision (one, n) VALUES (1, 0)",
    ),
    # 2: who writes (a shared store's second writer is told who holds it)
    (
        "CREATE TABLE writer (one INTEGER PRIMARY KEY, holder TEXT NOT NULL, "
        "since TEXT NOT NULL)",
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)
# The oldest version a read-only open reads as it is (a reader cannot migrate):
# version 2 added only the writer's name, which no read uses.
READABLE_FROM = 1


def qualifier_values(q: Qualifiers) -> tuple[object, ...]:
    """A Qualifiers as its columns' values (booleans as 0/1)."""
    return tuple(int(v) if isinstance(v, bool) else v
                 for v in (getattr(q, name) for name in QUALIFIER_COLUMNS))


def qualifiers_of(values: tuple[object, ...] | list[object]) -> Qualifiers:
    """The Qualifiers whose columns hold ``values`` (in :data:`QUALIFIER_COLUMNS` order)."""
    return Qualifiers(**{name: (bool(v) if name in _FLAGS else v)
                         for name, v in zip(QUALIFIER_COLUMNS, values, strict=True)})


_FLAGS = frozenset(name for name, f in Qualifiers.model_fields.items() if f.annotation is bool)
