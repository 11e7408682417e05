"""Publish the graph's property-graph mapping to Neo4j, incrementally.

The same mapping as ``medkg export --format neo4j-csv``
(:func:`medkg.export.propertygraph.property_graph`: entities and concepts as
nodes, statements and cross-layer links as relationships; rejected and negated
statements left out) is sent to a Neo4j database with Cypher ``MERGE``, and
only what changed since the last publish there: new or changed nodes and
relationships, and the removal of those that are gone (a deleted document, a
statement a curator rejected).

- **What was sent** is kept in a journal in the workspace, one per target
  (``publish/<digest of the target>.sqlite``): the key and content digest of
  every node and relationship the server acknowledged. The mapping now is
  streamed into a scratch table beside it; the difference is what goes.
- **Resumable.** A batch enters (or leaves) the journal in one transaction
  after Neo4j committed it, so a publish killed at any point has a journal
  that is true or one batch behind; ``MERGE ... SET`` and ``DELETE`` of what is
  already gone are idempotent, so the next publish ends in the same place.
- **Verifiable.** Afterwards the database's nodes and relationships of this
  graph are counted and compared with the mapping's.

Every published node has the label ``MedkgNode`` and the property ``graph``
(the workspace's base IRI), unique with its ``id``: two workspaces publish to
one database side by side, and nothing else in it is touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from medkg.errors import ConfigError, StoreError
from medkg.export.propertygraph import PEdge, PNode, property_graph
from medkg.export.view import ExportReport, GraphView
from medkg.publish import PublishReport

LABEL = "MedkgNode"
BATCH = 1000  # nodes or relationships per transaction
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")  # labels and relationship types sent as text


def _name(name: str) -> str:
    """A label or relationship type that goes into a query's text: medkg's own
    (``Entity``, ``HAS_ADVERSE_EFFECT``), checked, never user text."""
    if not _NAME.match(name):
        raise StoreError(f"{name!r} cannot be a Neo4j label or relationship type")
    return name


def _row(item: PNode | PEdge) -> tuple[str, str, str, str]:
    """(key, kind, group, body): ``group`` is a node's labels or an edge's type
    (one query per group); ``body`` the canonical JSON of what is sent."""
    if isinstance(item, PNode):
        body = {"id": item.id, "props": item.props}
        return f"n\x1f{item.id}", "node", ":".join(_name(x) for x in item.labels), \
            json.dumps(body, sort_keys=True, ensure_ascii=False)
    body = {"id": item.id, "source": item.source, "target": item.target, "props": item.props}
    return f"e\x1f{item.id}", "edge", _name(item.type), \
        json.dumps(body, sort_keys=True, ensure_ascii=False)


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class Journal:
    """What the database acknowledged (``sent``: key, kind, group, content digest)
    and the scratch table of the mapping now."""

    def __init__(self, path: Path, target: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS sent (k TEXT PRIMARY KEY, kind TEXT NOT "
                        "NULL, grp TEXT NOT NULL, h BLOB NOT NULL)")
        self.db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('target', ?)", (target,))
        self.db.execute("DROP TABLE IF EXISTS temp.now")
        self.db.execute("CREATE TEMP TABLE now (k TEXT PRIMARY KEY, kind TEXT NOT NULL, "
                        "grp TEXT NOT NULL, h BLOB NOT NULL, body TEXT NOT NULL)")

    def load(self, items: Iterator[PNode | PEdge]) -> dict[str, int]:
        """The mapping into the scratch table; how many nodes and edges it holds."""
        counts = {"node": 0, "edge": 0}
        rows: list[tuple[str, str, str, bytes, str]] = []
        self.db.execute("BEGIN")
        for item in items:
            key, kind, group, body = _row(item)
            counts[kind] += 1
            rows.append((key, kind, group, _digest(f"{group}\x1f{body}"), body))
            if len(rows) >= 10_000:
                self.db.executemany("INSERT OR REPLACE INTO now VALUES (?, ?, ?, ?, ?)", rows)
                rows.clear()
        self.db.executemany("INSERT OR REPLACE INTO now VALUES (?, ?, ?, ?, ?)", rows)
        self.db.execute("COMMIT")
        return counts

    def upserts(self, kind: str, size: int) -> Iterator[tuple[str, list[tuple[str, bytes,
                                                                               str]]]]:
        """(group, [(key, digest, body)]) of ``kind`` new or changed since sent."""
        sql = ("SELECT now.k, now.h, now.body FROM now LEFT JOIN sent ON sent.k = now.k "
               "WHERE now.kind = ? AND now.grp = ? AND now.k > ? AND "
               "(sent.h IS NULL OR sent.h != now.h) ORDER BY now.k LIMIT ?")
        groups = [g for (g,) in self.db.execute(
            "SELECT DISTINCT grp FROM now WHERE kind = ? ORDER BY grp", (kind,))]
        for group in groups:
            last = ""
            while rows := self.db.execute(sql, (kind, group, last, size)).fetchall():
                yield group, rows
                last = rows[-1][0]

    def removals(self, kind: str, size: int) -> Iterator[tuple[str, list[str]]]:
        """(group, [key]) of ``kind`` sent and no longer in the mapping."""
        sql = ("SELECT k FROM sent WHERE kind = ? AND grp = ? AND k > ? AND "
               "k NOT IN (SELECT k FROM now) ORDER BY k LIMIT ?")
        groups = [g for (g,) in self.db.execute(
            "SELECT DISTINCT grp FROM sent WHERE kind = ? ORDER BY grp", (kind,))]
        for group in groups:
            last = ""
            while keys := [k for (k,) in self.db.execute(sql, (kind, group, last, size))]:
                yield group, keys
                last = keys[-1]

    def sent(self, kind: str, group: str, rows: list[tuple[str, bytes, str]]) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO sent VALUES (?, ?, ?, ?)",
                                [(k, kind, group, h) for k, h, _ in rows])

    def unsent(self, keys: list[str]) -> None:
        with self.db:
            self.db.executemany("DELETE FROM sent WHERE k = ?", [(k,) for k in keys])

    def forget(self) -> None:
        with self.db:
            self.db.execute("DELETE FROM sent")

    def close(self) -> None:
        self.db.close()


def _id(key: str) -> str:
    return key.split("\x1f", 1)[1]


class Neo4jTarget:
    """The Cypher publish sends, over a ``neo4j`` driver (or any object with its
    ``execute_query`` and ``session().execute_write``)."""

    def __init__(self, driver: Any, database: str, graph: str) -> None:
        self.driver, self.database, self.graph = driver, database, graph

    def schema(self) -> None:
        self.driver.execute_query(
            f"CREATE CONSTRAINT medkg_published_id IF NOT EXISTS FOR (n:{LABEL}) "
            "REQUIRE (n.graph, n.id) IS UNIQUE", {}, database_=self.database)

    def _write(self, query: str, params: dict[str, Any]) -> None:
        def work(tx: Any) -> None:
            tx.run(query, params).consume()

        with self.driver.session(database=self.database) as session:
            session.execute_write(work)

    def upsert_nodes(self, labels: str, bodies: list[dict[str, Any]]) -> None:
        self._write(f"UNWIND $rows AS r MERGE (n:{LABEL} {{graph: $graph, id: r.id}}) "
                    f"SET n = r.props, n.graph = $graph, n.id = r.id, n:{labels}",
                    {"rows": bodies, "graph": self.graph})

    def upsert_edges(self, rel: str, bodies: list[dict[str, Any]]) -> None:
        self._write(f"UNWIND $rows AS r MATCH (a:{LABEL} {{graph: $graph, id: r.source}}) "
                    f"MATCH (b:{LABEL} {{graph: $graph, id: r.target}}) "
                    f"MERGE (a)-[e:{rel} {{id: r.id}}]->(b) "
                    "SET e = r.props, e.id = r.id, e.graph = $graph",
                    {"rows": bodies, "graph": self.graph})

    def remove_edges(self, rel: str, ids: list[str]) -> None:
        self._write(f"UNWIND $ids AS id MATCH (:{LABEL} {{graph: $graph}})-[e:{rel} {{id: id}}]"
                    "->() DELETE e", {"ids": ids, "graph": self.graph})

    def remove_nodes(self, ids: list[str]) -> None:
        self._write(f"UNWIND $ids AS id MATCH (n:{LABEL} {{graph: $graph, id: id}}) "
                    "DETACH DELETE n", {"ids": ids, "graph": self.graph})

    def empty(self, size: int) -> None:
        """Every node (and relationship) of this graph, in batches."""
        while True:
            records, _, _ = self.driver.execute_query(
                f"MATCH (n:{LABEL} {{graph: $graph}}) WITH n LIMIT $size DETACH DELETE n "
                "RETURN count(*) AS n", {"graph": self.graph, "size": size},
                database_=self.database)
            if not records or not int(records[0]["n"]):
                return

    def count(self) -> tuple[int, int]:
        """This graph's nodes and relationships in the database."""
        def one(query: str) -> int:
            records, _, _ = self.driver.execute_query(query, {"graph": self.graph},
                                                      database_=self.database, routing_="r")
            return int(records[0]["n"]) if records else 0

        return (one(f"MATCH (n:{LABEL} {{graph: $graph}}) RETURN count(n) AS n"),
                one(f"MATCH (:{LABEL} {{graph: $graph}})-[e]->(:{LABEL} {{graph: $graph}}) "
                    "RETURN count(e) AS n"))


def connect(uri: str, user: str, password_env: str) -> Any:
    """A ``neo4j`` driver; the password only from the environment variable named."""
    try:
        import neo4j
    except ImportError as exc:
        raise ConfigError("publishing to Neo4j needs the 'neo4j' package",
                          hint="pip install neo4j") from exc
    auth = None
    if user:
        password = os.environ.get(password_env) if password_env else None
        if password is None:
            raise ConfigError(f"--user {user} is given but no password: name the environment "
                              "variable that holds it with --password-env")
        auth = (user, password)
    driver = neo4j.GraphDatabase.driver(uri, auth=auth)
    try:  # fails at once, where the first write would retry for half a minute
        driver.verify_connectivity()
    except (neo4j.exceptions.DriverError, neo4j.exceptions.Neo4jError) as exc:
        driver.close()
        raise StoreError(f"Neo4j at {uri}: {exc}",
                         hint="check the address, --user and the password in "
                              "--password-env") from exc
    return driver


def publish_neo4j(view: GraphView, target: Neo4jTarget, journal: Path, *, name: str,
                  batch_size: int = BATCH, verify: bool = True, replace: bool = False,
                  progress: Callable[[str, int], None] | None = None) -> PublishReport:
    """Send the property graph's changes since the last publish to ``target``;
    ``replace``: delete this graph's nodes there first and send all. The report
    counts nodes and relationships together (``quads`` is their total)."""
    report = PublishReport(target=name, unit="nodes and relationships")
    with closing(Journal(journal, name)) as book:
        counts = book.load(property_graph(view, ExportReport(name, "neo4j")))
        report.quads = counts["node"] + counts["edge"]
        target.schema()
        if replace:
            target.empty(batch_size)
            book.forget()

        def done(counter: str, n: int) -> None:
            setattr(report, counter, getattr(report, counter) + n)
            if progress is not None:
                progress(counter, getattr(report, counter))

        # relationships go before nodes, and nodes come before relationships
        for rel, keys in book.removals("edge", batch_size):
            target.remove_edges(rel, [_id(k) for k in keys])
            book.unsent(keys)
            done("removed", len(keys))
        for _labels, keys in book.removals("node", batch_size):
            target.remove_nodes([_id(k) for k in keys])
            book.unsent(keys)
            done("removed", len(keys))
        for kind in ("node", "edge"):
            upsert = target.upsert_nodes if kind == "node" else target.upsert_edges
            for group, rows in book.upserts(kind, batch_size):
                upsert(group, [json.loads(body) for _, _, body in rows])
                book.sent(kind, group, rows)
                done("added", len(rows))
        if verify:
            nodes, edges = target.count()
            report.on_server = nodes + edges
    return report
