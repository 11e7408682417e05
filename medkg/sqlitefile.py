"""A small SQLite file with its schema, for the stores kept beside the graph
(the SAC-KG corpus and its progress)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


class SQLiteFile:
    SCHEMA = ""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Used from one thread at a time (the HTTP API's worker threads take a lock).
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.executescript(self.SCHEMA)

    def close(self) -> None:
        self._db.close()
