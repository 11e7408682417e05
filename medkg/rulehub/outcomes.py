"""What the RuleHub did to extracted statements, kept in a log of its own
(``rulehub/outcomes.sqlite``): each statement it rejected (a hard rule broken)
or restated (evidence that states another predicate, the treated population, a
negation), with the rules and their reasons. ``medkg stats`` counts them and
``medkg rules log`` lists them; a rebuild appends, so the log is the history."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from medkg.sqlitefile import SQLiteFile

Outcome = Literal["rejected", "restated"]


class RuleOutcome(BaseModel):
    at: float
    triple_id: str
    outcome: Outcome
    reason: str  # "RULE message (detail); ..." of every hard rule it broke


class RuleLog(SQLiteFile):
    SCHEMA = """
    CREATE TABLE IF NOT EXISTS outcomes (
        id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, triple_id TEXT NOT NULL,
        outcome TEXT NOT NULL, reason TEXT NOT NULL);
    """

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._lock = threading.Lock()

    def record(self, triple_id: str, outcome: Outcome, reason: str) -> None:
        with self._lock:
            self._db.execute("INSERT INTO outcomes (at, triple_id, outcome, reason) "
                             "VALUES (?, ?, ?, ?)", (time.time(), triple_id, outcome, reason))
            self._db.commit()

    def counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute(
                "SELECT outcome, COUNT(*) FROM outcomes GROUP BY outcome").fetchall()
        return {outcome: n for outcome, n in rows}

    def latest(self, limit: int = 100) -> list[RuleOutcome]:
        with self._lock:
            rows = self._db.execute(
                "SELECT at, triple_id, outcome, reason FROM outcomes ORDER BY id DESC LIMIT ?",
                (limit,)).fetchall()
        return [RuleOutcome(at=a, triple_id=t, outcome=o, reason=r) for a, t, o, r in rows]
