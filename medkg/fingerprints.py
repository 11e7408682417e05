"""Fingerprints of the whole-workspace build stages, in ``state.sqlite``: what
inputs and settings each stage last finished with (see :mod:`medkg.pipeline.marks`
for the per-document marks); also the workspace's own facts kept there (the
vocabulary's version, the store and encoder it was made with) and the journal
of deletes cut short."""

from __future__ import annotations

import hashlib
import json
import time
import uuid

from medkg.sqlitefile import SQLiteFile

# the whole-workspace build stages, each with its fingerprint here
GROW, LINK, SUMMARISE = "grow", "link", "summarise"
VOCABULARY = "vocabulary"  # the version of the vocabulary graph, new with every load
STORE_BACKEND = "store.backend"  # the graph store the workspace was made with
STORE_BASE_IRI = "store.base_iri"  # ... and the base IRI its graph's IRIs start with
STORE_TABLES = "store.tables"  # set once the workspace's graph has met the typed tables
ENCODER = "embedding.encoder"  # the encoder every vector of the workspace comes from
IRI_SCHEME = "store.iri_scheme"  # how its concept IRIs are minted (medkg.identifiers.SCHEME)


def fingerprint(*parts: object) -> str:
    """A stable digest of a stage's inputs and settings (JSON-able parts)."""
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class StageFingerprints(SQLiteFile):
    """Fingerprints of the whole-workspace stages (``state.sqlite``)."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS stages (
        stage TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, at REAL NOT NULL);
    CREATE TABLE IF NOT EXISTS deletes (
        document_id TEXT PRIMARY KEY, plan TEXT NOT NULL, at REAL NOT NULL);
    """

    def current(self, stage: str, fp: str) -> bool:
        """Whether ``stage`` last finished with these inputs and settings."""
        row = self._db.execute("SELECT fingerprint FROM stages WHERE stage = ?",
                               (stage,)).fetchone()
        return row is not None and row[0] == fp

    def record(self, stage: str, fp: str) -> None:
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO stages VALUES (?, ?, ?)",
                             (stage, fp, time.time()))

    def forget(self, stage: str) -> None:
        """Make ``stage`` run again at the next build (e.g. links after a vocabulary load)."""
        with self._db:
            self._db.execute("DELETE FROM stages WHERE stage = ?", (stage,))

    def version(self, name: str) -> str | None:
        """The recorded version of ``name`` (e.g. the vocabulary), or None."""
        row = self._db.execute("SELECT fingerprint FROM stages WHERE stage = ?",
                               (name,)).fetchone()
        return None if row is None else str(row[0])

    def new_version(self, name: str) -> str:
        """Record and return a new version of ``name``: what was derived from the
        old one is stale from now on."""
        version = uuid.uuid4().hex
        self.record(name, version)
        return version

    def recorded(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT stage, fingerprint FROM stages").fetchall())

    # -- the delete journal: a delete is recorded before anything is removed and
    # forgotten once the graph, the corpus and every index are done with it.

    def begin_delete(self, document_id: str, plan: dict[str, object]) -> None:
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO deletes VALUES (?, ?, ?)",
                             (document_id, json.dumps(plan), time.time()))

    def pending_deletes(self) -> dict[str, dict[str, object]]:
        """Deletes begun and not finished (a crash in between), by document id."""
        rows = self._db.execute("SELECT document_id, plan FROM deletes ORDER BY at").fetchall()
        return {doc_id: json.loads(plan) for doc_id, plan in rows}

    def end_delete(self, document_id: str) -> None:
        with self._db:
            self._db.execute("DELETE FROM deletes WHERE document_id = ?", (document_id,))
