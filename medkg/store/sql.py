"""The two SQL engines under the graph's tables: SQLite (one file in the workspace,
the default) and PostgreSQL (a shared server: many readers, one writer per
workspace).

:class:`medkg.store.tables.TableStore` writes its SQL once, in standard SQL with
``?`` placeholders; an engine only says how to connect, how a write transaction
begins, how its driver spells a placeholder and the few expressions the standard
leaves to each engine. Nothing here knows the schema.

PostgreSQL keeps each workspace's tables in a schema of their own
(``store.schema_name``), so one database holds many workspaces. The one writer holds a
session advisory lock on that schema for as long as its connection lives (the
server frees it when the process dies, however it dies), and writes who it is into
the ``writer`` table, which the second writer's error quotes.

Credentials never come from ``medkg.toml``: a URL holding a password is refused;
the password comes from the environment variable ``store.password_env`` names, a
file ``store.password_file`` names (readable by its owner only), or libpq's own
``PGPASSWORD`` and ``~/.pgpass``.
"""

from __future__ import annotations

import os
import re
import socket
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from medkg.config import password_in_url
from medkg.errors import ConfigError, StoreError


class Cursor(Protocol):
    rowcount: int

    def fetchall(self) -> list[tuple[Any, ...]]: ...
    def fetchone(self) -> tuple[Any, ...] | None: ...
    def __iter__(self) -> Any: ...


class Connection:
    """A DB-API connection that takes the tables' SQL as written (``?``
    placeholders) whatever the driver's own paramstyle (the tables' SQL has no ``?``
    or ``%`` of its own: values always travel as parameters)."""

    def __init__(self, raw: Any, placeholder: str) -> None:
        self.raw = raw
        self._placeholder = placeholder

    def _sql(self, sql: str) -> str:
        return sql if self._placeholder == "?" else sql.replace("?", self._placeholder)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        if not params and self._placeholder != "?":
            return self.raw.execute(sql)  # type: ignore[no-any-return]
        return self.raw.execute(self._sql(sql), tuple(params))  # type: ignore[no-any-return]

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if not rows:
            return
        if self._placeholder == "?":
            self.raw.executemany(sql, rows)
        else:
            with self.raw.cursor() as cursor:
                cursor.executemany(self._sql(sql), rows)

    def close(self) -> None:
        self.raw.close()


class Engine(Protocol):
    name: str
    begin: str  # the statement that opens a write transaction
    errors: tuple[type[BaseException], ...]  # what the driver raises

    def where(self) -> str:
        """Where the tables are, for messages (a path, or a URL without secrets)."""
        ...

    def connect(self, read_only: bool) -> Connection: ...

    def after_migrations(self, db: Connection) -> None:
        """Run once the schema is current, before the first write (the writer's
        claim on a shared store)."""
        ...

    def ddl(self, statement: str) -> str:
        """A migration step as this engine wants it."""
        ...

    def json_length(self, column: str) -> str:
        """The SQL for the length of the JSON array in a TEXT column."""
        ...

    def closing(self, db: Connection) -> None:
        """What to do before the writer's connection closes."""
        ...


# -- SQLite ------------------------------------------------------------------------------


@dataclass
class SQLiteEngine:
    """One file, WAL: readers and one writer side by side on one machine (the
    workspace's lock keeps writers apart)."""

    path: Path
    name: str = "sqlite"
    begin: str = "BEGIN IMMEDIATE"

    def __post_init__(self) -> None:
        import sqlite3

        self.errors: tuple[type[BaseException], ...] = (sqlite3.Error,)

    def where(self) -> str:
        return str(self.path)

    def connect(self, read_only: bool) -> Connection:
        import sqlite3

        if read_only:
            if not self.path.exists():
                raise OSError(f"{self.path} does not exist yet")
            raw = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True,
                                  check_same_thread=False, isolation_level=None)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            raw = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            raw.execute("PRAGMA journal_mode=WAL")
            raw.execute("PRAGMA synchronous=NORMAL")
        raw.execute("PRAGMA busy_timeout=30000")
        raw.execute("PRAGMA cache_size=-65536")  # 64 MB of pages
        return Connection(raw, "?")

    def after_migrations(self, db: Connection) -> None:
        return None

    def ddl(self, statement: str) -> str:
        return statement

    def json_length(self, column: str) -> str:
        return f"json_array_length({column})"

    def closing(self, db: Connection) -> None:
        db.execute("PRAGMA wal_checkpoint(PASSIVE)")


# -- PostgreSQL --------------------------------------------------------------------------

SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def read_password_file(path: Path) -> str:
    """The password in ``path`` (its first line), refusing a file others can read."""
    try:
        mode = path.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ConfigError(f"the password file {path} can be read by others",
                              hint=f"chmod 600 {path}")
        return path.read_text(encoding="utf-8").splitlines()[0].strip()
    except (OSError, IndexError) as exc:
        raise ConfigError(f"cannot read the password file {path}: {exc}") from exc


@dataclass
class PostgresEngine:
    """A PostgreSQL database; this workspace's tables in ``schema``."""

    url: str
    schema: str = "medkg"
    password_env: str = ""
    password_file: str = ""
    connect_timeout: float = 30.0
    name: str = "postgres"
    begin: str = "BEGIN"

    def __post_init__(self) -> None:
        if password_in_url(self.url):
            raise ConfigError("store.url holds a password, which medkg never keeps in a file",
                              hint="take it out of the URL; name an environment variable in "
                                   "store.password_env, a file (chmod 600) in "
                                   "store.password_file, or use libpq's ~/.pgpass")
        if not self.url.startswith(("postgresql://", "postgres://")):
            raise ConfigError(f"store.url {self.url!r} is not a PostgreSQL URL",
                              hint="e.g. postgresql://medkg@db.example.org:5432/medkg")
        if not SCHEMA_NAME.match(self.schema):
            raise ConfigError(f"store.schema {self.schema!r} is not a plain schema name",
                              hint="lower-case letters, digits and _, at most 63")
        try:
            import psycopg
        except ImportError as exc:
            raise ConfigError("store.backend is \"postgres\" but psycopg is not installed",
                              hint="pip install 'medkg[postgres]'") from exc
        self.errors: tuple[type[BaseException], ...] = (psycopg.Error,)

    def where(self) -> str:
        return f"{self.url} (schema {self.schema})"

    def _password(self) -> str | None:
        if self.password_env:
            value = os.environ.get(self.password_env)
            if value is None:
                raise ConfigError(f"store.password_env names {self.password_env}, which is "
                                  "not set", hint=f"export {self.password_env}=...")
            return value
        if self.password_file:
            return read_password_file(Path(self.password_file).expanduser())
        return None  # libpq: PGPASSWORD, ~/.pgpass, or a method without one

    def connect(self, read_only: bool) -> Connection:
        import psycopg

        extra: dict[str, Any] = {"autocommit": True,
                                 "connect_timeout": max(1, int(self.connect_timeout)),
                                 "application_name": "medkg reader" if read_only
                                 else "medkg writer"}
        password = self._password()
        if password is not None:
            extra["password"] = password
        raw = psycopg.connect(self.url, **extra)
        try:
            if read_only:
                found = raw.execute("SELECT 1 FROM information_schema.schemata "
                                    "WHERE schema_name = %s", (self.schema,)).fetchone()
                if found is None:
                    raise StoreError(f"no medkg tables in schema {self.schema} at {self.url} "
                                     "yet", hint="a writer makes them on its first open")
                raw.execute("SET default_transaction_read_only = on")
            else:
                self._claim(raw)
                raw.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
            raw.execute(f'SET search_path TO "{self.schema}"')
        except BaseException:
            raw.close()
            raise
        return Connection(raw, "%s")

    def _claim(self, raw: Any) -> None:
        """The one writer of this schema: a session advisory lock, held until the
        connection closes (or the process dies); else an error naming the holder."""
        got = raw.execute("SELECT pg_try_advisory_lock(hashtext(%s))",
                          (f"medkg:{self.schema}",)).fetchone()[0]
        if got:
            return
        holder = "another process"
        try:
            row = raw.execute(f'SELECT holder, since FROM "{self.schema}".writer '
                              "WHERE one = 1").fetchone()
            if row is not None:
                holder = f"{row[0]} (since {row[1]})"
        except Exception:
            pass
        raw.close()
        raise StoreError(f"the graph tables at {self.where()} are being written by {holder}",
                         hint="one writer per workspace: run the command again when it has "
                              "finished; reading (ask, serve --read-only) works meanwhile")

    def after_migrations(self, db: Connection) -> None:
        holder = f"medkg pid {os.getpid()} on {socket.gethostname()}"
        db.execute("INSERT INTO writer (one, holder, since) VALUES (1, ?, ?) ON CONFLICT "
                   "(one) DO UPDATE SET holder = excluded.holder, since = excluded.since",
                   (holder, datetime.now(UTC).isoformat(timespec="seconds")))

    def ddl(self, statement: str) -> str:
        # Text in byte order, as SQLite (and Python's sorted) compare it: key-paged
        # reads and every ORDER BY id come out the same on both engines.
        return re.sub(r"\bTEXT\b", 'TEXT COLLATE "C"', statement)

    def json_length(self, column: str) -> str:
        return f"json_array_length({column}::json)"

    def closing(self, db: Connection) -> None:
        return None
