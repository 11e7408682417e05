"""Publish the graph's RDF projection to a SPARQL 1.1 server, incrementally.

The tables are the workspace's truth; a SPARQL server (Virtuoso, GraphDB, Fuseki,
...) is fed a copy to query where users already work. ``medkg publish`` sends only
what changed since the last publish to that server: new quads, and the removal
of quads that are gone (a deleted document, a curator's decision that changed a
statement's review state).

- **What was sent** is kept in a journal in the workspace, one per target
  (``publish/<digest of the target>.sqlite``): the canonical N-Quads line of
  every quad the server acknowledged. The projection now is streamed into a
  scratch table beside it; the difference both ways is what goes.
- **Resumable.** Each request's quads enter (or leave) the journal in one
  transaction after the server acknowledged the request, so a publish killed
  at any point has a journal that is true or one request behind; SPARQL's
  ``INSERT DATA`` and ``DELETE DATA`` are idempotent, so the next publish sends
  that request again and ends in the same place.
- **Verifiable.** Afterwards the server's quads in the graph's named graphs are
  counted and compared with the projection's (``verified``). They differ when
  something else wrote those graphs (another workspace with the same base IRI,
  or a journal lost): ``replace`` empties them and sends everything.

The server is written only under the workspace's named graphs
(:class:`medkg.store.sparql.SPARQLProtocolStore` refuses any other), so other
data on it is never touched.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from rdflib import URIRef

from medkg.errors import StoreError
from medkg.store.projection import Quad, project
from medkg.store.sparql import MAX_REQUEST_BYTES, Endpoint, SPARQLProtocolStore, sparql_term
from medkg.store.tables import TableStore

BATCH = 2000  # quads per request


@dataclass
class PublishReport:
    target: str
    added: int = 0
    removed: int = 0
    quads: int = 0  # what the projection holds
    on_server: int = -1  # counted after the publish (-1: not counted)
    unit: str = "quads"  # what the counts count

    @property
    def verified(self) -> bool:
        return self.on_server == self.quads


def _line(quad: Quad) -> str:
    """A quad's canonical N-Quads line (the journal's key)."""
    s, p, o, g = quad
    return f"{sparql_term(s)} {sparql_term(p)} {sparql_term(o)} {sparql_term(g)}"


def _split(line: str) -> list[str]:
    """The four terms of a line :func:`_line` wrote (IRIs have no spaces; a literal
    is the one term that may, and it is the object)."""
    s, p, rest = line.split(" ", 2)
    o, g = rest.rsplit(" ", 1)
    return [s, p, o, g]


def _digest(line: str) -> bytes:
    return hashlib.blake2b(line.encode("utf-8"), digest_size=16).digest()


def journal_path(root: Path, target: str, base_iri: str) -> Path:
    key = hashlib.sha256(f"{target}\x1f{base_iri}".encode()).hexdigest()[:16]
    return root / f"{key}.sqlite"


class Journal:
    """What the target acknowledged, and the scratch table of the projection now."""

    def __init__(self, path: Path, target: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS sent (h BLOB PRIMARY KEY, line TEXT "
                        "NOT NULL)")
        self.db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('target', ?)", (target,))
        self.db.execute("DROP TABLE IF EXISTS temp.now")
        self.db.execute("CREATE TEMP TABLE now (h BLOB PRIMARY KEY, line TEXT NOT NULL)")

    def load(self, quads: Iterator[Quad]) -> tuple[int, set[URIRef]]:
        """The projection into the scratch table; (how many quads, their graphs)."""
        graphs: set[URIRef] = set()
        rows: list[tuple[bytes, str]] = []
        n = 0
        self.db.execute("BEGIN")
        for quad in quads:
            graphs.add(quad[3])
            line = _line(quad)
            rows.append((_digest(line), line))
            if len(rows) >= 10_000:
                n += self._put(rows)
        n += self._put(rows)
        self.db.execute("COMMIT")
        return n, graphs

    def _put(self, rows: list[tuple[bytes, str]]) -> int:
        self.db.executemany("INSERT OR IGNORE INTO now VALUES (?, ?)", rows)
        n = len(rows)
        rows.clear()
        return n

    def pending(self, which: str, size: int) -> Iterator[list[tuple[bytes, str]]]:
        """``add``: in the projection, not sent; ``remove``: sent, no longer in it;
        a request's worth at a time (each re-read: the journal moves as it goes)."""
        sql = ("SELECT h, line FROM now WHERE h > ? AND h NOT IN (SELECT h FROM sent) "
               "ORDER BY h LIMIT ?" if which == "add" else
               "SELECT h, line FROM sent WHERE h > ? AND h NOT IN (SELECT h FROM now) "
               "ORDER BY h LIMIT ?")
        last = b""  # by key: each page starts where the last ended, never rescans
        while rows := self.db.execute(sql, (last, size)).fetchall():
            yield rows
            last = rows[-1][0]

    def sent(self, rows: list[tuple[bytes, str]]) -> None:
        with self.db:
            self.db.executemany("INSERT OR IGNORE INTO sent VALUES (?, ?)", rows)

    def unsent(self, rows: list[tuple[bytes, str]]) -> None:
        with self.db:
            self.db.executemany("DELETE FROM sent WHERE h = ?", [(h,) for h, _ in rows])

    def forget(self) -> None:
        with self.db:
            self.db.execute("DELETE FROM sent")

    def graphs(self) -> set[URIRef]:
        """Every named graph a sent quad is in."""
        return {URIRef(_split(line)[3][1:-1])
                for (line,) in self.db.execute("SELECT line FROM sent")}

    def close(self) -> None:
        self.db.close()


def _send(server: SPARQLProtocolStore, verb: str, lines: list[str]) -> None:
    """``INSERT DATA`` / ``DELETE DATA`` of journal lines (already SPARQL terms: no
    term is parsed and written again), in requests of bounded size; inserts go
    through the Graph Store Protocol where the endpoint names one."""
    batch: dict[str, list[str]] = {}
    size = 0

    def flush() -> None:
        nonlocal batch, size
        if not batch:
            return
        if verb == "INSERT DATA" and server.endpoint.graph_store_url:
            for graph, triples in batch.items():
                server.post_ntriples(URIRef(graph[1:-1]), "\n".join(triples) + "\n")
        else:
            body = " ".join(f"GRAPH {g} {{ {' '.join(t)} }}" for g, t in batch.items())
            server.run_update(f"{verb} {{ {body} }}")
        batch, size = {}, 0

    for line in lines:
        s, p, o, g = _split(line)
        if URIRef(g[1:-1]) not in server.graphs:
            raise StoreError(f"{g} is not one of this workspace's graphs")
        triple = f"{s} {p} {o} ."
        batch.setdefault(g, []).append(triple)
        size += len(triple)
        if size >= MAX_REQUEST_BYTES:
            flush()
    flush()


def publish_sparql(tables: TableStore, endpoint: Endpoint, journal: Path, *,
                   target: str, batch_size: int = BATCH, verify: bool = True,
                   replace: bool = False,
                   progress: Callable[[str, int], None] | None = None) -> PublishReport:
    """Send the projection's changes since the last publish to ``endpoint``;
    ``replace``: empty the graph's named graphs on the server first and send all
    (the server holds quads the journal does not know: another copy published
    there, or a journal lost)."""
    report = PublishReport(target=target)
    with closing(Journal(journal, target)) as book:
        report.quads, graphs = book.load(project(tables))
        graphs |= book.graphs()
        server = SPARQLProtocolStore(endpoint, sorted(graphs), batch_size=batch_size)
        try:
            if replace:
                for graph in sorted(graphs):
                    server.run_update(f"DROP SILENT GRAPH {sparql_term(graph)}")
                book.forget()
            steps = (("remove", "DELETE DATA", book.unsent, "removed"),
                     ("add", "INSERT DATA", book.sent, "added"))
            for which, verb, record, counter in steps:  # removals first
                for rows in book.pending(which, batch_size):
                    _send(server, verb, [line for _, line in rows])
                    record(rows)  # acknowledged: into (out of) the journal
                    setattr(report, counter, getattr(report, counter) + len(rows))
                    if progress is not None:
                        progress(counter, getattr(report, counter))
            if verify and graphs:
                values = " ".join(sparql_term(g) for g in sorted(graphs))
                _, found = server.select("SELECT (COUNT(*) AS ?n) WHERE { VALUES ?g { "
                                         f"{values} }} GRAPH ?g {{ ?s ?p ?o }} }}")
                report.on_server = int(str(found[0][0])) if found and found[0][0] else 0
            elif verify:
                report.on_server = 0
        finally:
            server.close()
    return report
