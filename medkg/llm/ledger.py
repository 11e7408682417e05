"""The response cache and the ledger of calls, in one SQLite file per workspace.

Cache: every answer keyed by a hash of (backend, model, messages, schema,
generation parameters); a repeat of the same call is answered from disk and
costs nothing. Ledger: one row per call (cached or not) with its stage, token
counts, whether the first answer parsed, whether it was repaired, and the
failure reason if any; :meth:`Ledger.summary` adds it up per stage with the
estimated cost. Failed items (an answer that stayed unusable, a chunk with no
entities) are recorded apart, so nothing fails silently.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from medkg.llm.port import Completion, GenerationParams, Message, Usage

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY, text TEXT NOT NULL, model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, stage TEXT NOT NULL,
    backend TEXT NOT NULL, model TEXT NOT NULL, cached INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
    first_parsed INTEGER NOT NULL, repaired INTEGER NOT NULL, ok INTEGER NOT NULL,
    error TEXT NOT NULL DEFAULT '', seconds REAL NOT NULL);
CREATE TABLE IF NOT EXISTS failures (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, stage TEXT NOT NULL,
    item TEXT NOT NULL, reason TEXT NOT NULL);
"""


def cache_key(backend: str, model: str, messages: list[Message],
              schema: dict[str, Any] | None, params: GenerationParams) -> str:
    payload = json.dumps({
        "backend": backend, "model": model,
        "messages": [m.model_dump() for m in messages],
        "schema": schema, "params": params.model_dump(),
    }, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CallRecord(BaseModel):
    stage: str
    backend: str
    model: str
    cached: bool
    usage: Usage
    first_parsed: bool
    repaired: bool
    ok: bool
    error: str = ""
    seconds: float = 0.0


class StageSummary(BaseModel):
    stage: str
    calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    first_parsed: int
    repaired: int
    failed: int
    cost_usd: float


class Ledger:
    """Cache, call log and failed items; safe to share between threads."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.executescript(_SCHEMA)
        self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- cache -------------------------------------------------------------------------

    def cached(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, model, prompt_tokens, completion_tokens FROM cache WHERE key = ?",
                (key,)).fetchone()
        if row is None:
            return None
        return Completion(text=row[0], model=row[1],
                          usage=Usage(prompt_tokens=row[2], completion_tokens=row[3]))

    def store(self, key: str, completion: Completion) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO cache VALUES (?, ?, ?, ?, ?, ?)",
                (key, completion.text, completion.model, completion.usage.prompt_tokens,
                 completion.usage.completion_tokens, time.time()))
            self._db.commit()

    # -- ledger ------------------------------------------------------------------------

    def record(self, call: CallRecord) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO calls (at, stage, backend, model, cached, prompt_tokens, "
                "completion_tokens, first_parsed, repaired, ok, error, seconds) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (time.time(), call.stage, call.backend, call.model, int(call.cached),
                 call.usage.prompt_tokens, call.usage.completion_tokens,
                 int(call.first_parsed), int(call.repaired), int(call.ok), call.error,
                 call.seconds))
            self._db.commit()

    def fail(self, stage: str, item: str, reason: str) -> None:
        with self._lock:
            self._db.execute("INSERT INTO failures (at, stage, item, reason) VALUES (?, ?, ?, ?)",
                             (time.time(), stage, item, reason))
            self._db.commit()

    def failure_count(self, stage: str | None = None) -> int:
        with self._lock:
            if stage is None:
                row = self._db.execute("SELECT COUNT(*) FROM failures").fetchone()
            else:
                row = self._db.execute("SELECT COUNT(*) FROM failures WHERE stage = ?",
                                       (stage,)).fetchone()
        return int(row[0])

    def failures(self, limit: int = 100) -> list[tuple[str, str, str]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT stage, item, reason FROM failures ORDER BY id DESC LIMIT ?",
                (limit,)).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def summary(self, price_in_per_mtok: float = 0.0, price_out_per_mtok: float = 0.0
                ) -> list[StageSummary]:
        """Per stage: calls, cache hits, tokens billed (cache hits cost nothing),
        answers that parsed first time, repaired ones, failures, estimated cost."""
        with self._lock:
            rows = self._db.execute(
                "SELECT stage, COUNT(*), SUM(cached), "
                "SUM(CASE WHEN cached = 0 THEN prompt_tokens ELSE 0 END), "
                "SUM(CASE WHEN cached = 0 THEN completion_tokens ELSE 0 END), "
                "SUM(first_parsed), SUM(repaired), SUM(1 - ok) "
                "FROM calls GROUP BY stage ORDER BY stage").fetchall()
        return [StageSummary(
            stage=r[0], calls=r[1], cache_hits=r[2], prompt_tokens=r[3], completion_tokens=r[4],
            first_parsed=r[5], repaired=r[6], failed=r[7],
            cost_usd=round((r[3] * price_in_per_mtok + r[4] * price_out_per_mtok) / 1e6, 6),
        ) for r in rows]
