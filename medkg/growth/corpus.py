"""The domain corpus the SAC-KG generator reads: sentences, who they mention, and
the relation candidates the extractor found in them.

Extraction writes every chunk's sentences here with the entities they mention
(as *nodes*: a concept id, or type and name for an entity without a concept, so
one node stands for the same thing in every layer) and the triples the builtin
extractor stated in them. The generator then asks, for one head entity, for the
sentences that mention it most, up to a fixed length of text.

Kept in ``construction/corpus.sqlite``; a document's rows are replaced when it
is extracted again and removed with it, so reruns never duplicate anything.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from medkg.model import Entity, Layer, Triple
from medkg.ontology.index import normalize_term
from medkg.sqlitefile import SQLiteFile

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sentences (
    id INTEGER PRIMARY KEY,
    document_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    layer TEXT NOT NULL,
    start INTEGER NOT NULL,
    end_ INTEGER NOT NULL,
    text TEXT NOT NULL,
    UNIQUE (document_id, start)
);
CREATE TABLE IF NOT EXISTS mentions (
    sentence_id INTEGER NOT NULL,
    node TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    count INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS mentions_node ON mentions (node);
CREATE TABLE IF NOT EXISTS candidates (
    sentence_id INTEGER NOT NULL,
    triple TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS candidates_sentence ON candidates (sentence_id);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('version', 0);
"""


def node_of(entity: Entity) -> str:
    """What an entity stands for across layers: its concept, else its type and name."""
    if entity.concept_ids:
        return entity.concept_ids[0]
    return f"{entity.type}:{normalize_term(entity.name)}"


@dataclass(frozen=True)
class Sentence:
    id: int
    document_id: str
    chunk_id: str
    layer: Layer
    start: int
    end: int
    text: str
    count: int  # mentions of the node it was retrieved for


class SentenceCorpus(SQLiteFile):
    SCHEMA = _SCHEMA

    def replace_document(
        self, document_id: str, layer: Layer,
        sentences: Sequence[tuple[str, int, int, str]],
        entities: Iterable[Entity], triples: Iterable[Triple],
    ) -> None:
        """Store one document's sentences ``(chunk_id, start, end, text)``, the
        entities they mention and the candidate triples whose evidence lies in them;
        whatever the document had before is replaced, in one transaction."""
        with self._db:
            self._delete(document_id)
            ids: list[tuple[int, int, int]] = []
            for chunk_id, start, end, text in sentences:
                cur = self._db.execute(
                    "INSERT INTO sentences (document_id, chunk_id, layer, start, end_, text) "
                    "VALUES (?, ?, ?, ?, ?, ?)", (document_id, chunk_id, layer.value, start,
                                                  end, text))
                ids.append((start, end, int(cur.lastrowid or 0)))

            def within(start: int, end: int) -> list[int]:
                return [sid for s, e, sid in ids if s <= start and end <= e]

            rows: dict[tuple[int, str, str], int] = {}
            for entity in entities:
                node = node_of(entity)
                for m in entity.mentions:
                    if m.document_id != document_id:
                        continue
                    for sid in within(m.start, m.end):
                        key = (sid, node, entity.id)
                        rows[key] = rows.get(key, 0) + 1
            self._db.executemany("INSERT INTO mentions VALUES (?, ?, ?, ?)",
                                 [(*k, n) for k, n in rows.items()])
            cands = []
            for t in triples:
                for ev in t.evidence:
                    if ev.document_id != document_id:
                        continue
                    # Evidence may span two sentences; it belongs to the first.
                    first = [sid for s, e, sid in ids if s <= ev.start < e]
                    if first:
                        one = t.model_copy(update={"evidence": [ev]})
                        cands.append((first[0], one.model_dump_json()))
            self._db.executemany("INSERT INTO candidates VALUES (?, ?)", cands)

    def delete_document(self, document_id: str) -> None:
        with self._db:
            self._delete(document_id)

    def _delete(self, document_id: str) -> None:
        self._db.execute("UPDATE meta SET value = value + 1 WHERE key = 'version'")
        sub = "SELECT id FROM sentences WHERE document_id = ?"
        self._db.execute(f"DELETE FROM mentions WHERE sentence_id IN ({sub})", (document_id,))
        self._db.execute(f"DELETE FROM candidates WHERE sentence_id IN ({sub})", (document_id,))
        self._db.execute("DELETE FROM sentences WHERE document_id = ?", (document_id,))

    def sentences_for(self, node: str, max_chars: int) -> list[Sentence]:
        """The sentences that mention ``node`` most, best first (ties in corpus
        order), until their text reaches ``max_chars`` (at least one sentence)."""
        rows = self._db.execute(
            "SELECT s.id, s.document_id, s.chunk_id, s.layer, s.start, s.end_, s.text, "
            "SUM(m.count) AS n FROM mentions m JOIN sentences s ON s.id = m.sentence_id "
            "WHERE m.node = ? GROUP BY s.id ORDER BY n DESC, s.id",
            (node,)).fetchall()
        out: list[Sentence] = []
        used = 0
        for r in rows:
            if out and used + len(r[6]) > max_chars:
                break
            out.append(Sentence(r[0], r[1], r[2], Layer(r[3]), r[4], r[5], r[6], r[7]))
            used += len(r[6]) + 1
        return out

    def candidates(self, sentence_ids: Sequence[int]) -> list[Triple]:
        """The triples the extractor stated in these sentences, one per evidence."""
        if not sentence_ids:
            return []
        marks = ",".join("?" * len(sentence_ids))
        rows = self._db.execute(
            f"SELECT triple FROM candidates WHERE sentence_id IN ({marks}) ORDER BY rowid",
            list(sentence_ids)).fetchall()
        return [Triple.model_validate_json(r[0]) for r in rows]

    def entity_ids(self, node: str) -> set[str]:
        rows = self._db.execute("SELECT DISTINCT entity_id FROM mentions WHERE node = ?",
                                (node,)).fetchall()
        return {r[0] for r in rows}

    def entity_ids_in(self, sentence_id: int) -> list[str]:
        rows = self._db.execute("SELECT entity_id FROM mentions WHERE sentence_id = ?",
                                (sentence_id,)).fetchall()
        return [r[0] for r in rows]

    def fingerprint(self) -> str:
        """A digest of what the corpus holds (sentences, mentions, candidate triples,
        by document and offset): it changes whenever a document is added, removed or
        re-extracted to something else, and two workspaces that hold the same corpus
        get the same one, however they got there (a build resumed after a crash
        records what an uninterrupted one records)."""
        digest = hashlib.sha256()
        queries = (
            "SELECT s.document_id, s.start, s.end_, s.chunk_id, s.layer, m.node, m.entity_id, "
            "m.count FROM sentences s LEFT JOIN mentions m ON m.sentence_id = s.id "
            "ORDER BY s.document_id, s.start, m.node, m.entity_id",
            "SELECT s.document_id, s.start, c.triple FROM candidates c "
            "JOIN sentences s ON s.id = c.sentence_id ORDER BY s.document_id, s.start, c.triple",
        )
        for query in queries:
            for row in self._db.execute(query):
                digest.update(json.dumps(row).encode("utf-8"))
            digest.update(b"|")
        return f"corpus-{digest.hexdigest()[:32]}"

    def candidate_count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM candidates").fetchone()[0])

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM sentences").fetchone()[0])
