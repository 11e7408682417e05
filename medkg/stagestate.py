"""Fingerprints of the whole-workspace build stages, in ``state.sqlite``: what
inputs and settings each stage last finished with (see :mod:`medkg.pipeline.state`)."""

from __future__ import annotations

import hashlib
import json
import time

from medkg.sqlitefile import SQLiteFile


def fingerprint(*parts: object) -> str:
    """A stable digest of a stage's inputs and settings (JSON-able parts)."""
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class StageState(SQLiteFile):
    """Fingerprints of the whole-workspace stages (``state.sqlite``)."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS stages (
        stage TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, at REAL NOT NULL);
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

    def recorded(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT stage, fingerprint FROM stages").fetchall())
