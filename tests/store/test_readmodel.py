"""The tables' read model answers what the whole-layer reads answered, reading
only what it is asked about (the build's link, tag-tree and re-anchoring reads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from medkg.config import StoreConfig
from medkg.model import Entity, Layer, Triple
from medkg.store.registry import open_store
from medkg.store.tables import TableStore
from tests.store.test_projection import _fill


@pytest.fixture
def tables(tables_config: StoreConfig, tmp_path: Path) -> TableStore:
    """Filled tables on each engine."""
    store = open_store(tables_config, tmp_path / "graph")
    assert isinstance(store, TableStore)
    _fill(store)
    return store


def test_entity_heads_are_the_entities_without_their_mentions(tables: TableStore) -> None:
    store = tables
    for layer in (Layer.USER, Layer.LITERATURE):
        whole = store.entities(layer)
        assert store.entity_heads(layer) == [e.model_copy(update={"mentions": []})
                                             for e in whole]
        assert store.mention_counts([e.id for e in whole] + ["ent-none"]) == {
            **{e.id: len(e.mentions) for e in whole}, "ent-none": 0}
    store.close()


def test_the_chunk_graph_is_what_the_whole_layer_read_gave(tables: TableStore) -> None:
    store = tables
    doc_id = store.document_ids(Layer.LITERATURE)[0]
    for chunks in (store.chunks(doc_id), store.chunks(doc_id)[:1]):
        wanted = {c.id for c in chunks}
        expected: dict[str, list[Entity]] = {}
        for e in store.entities(Layer.LITERATURE):
            for cid in sorted({m.chunk_id for m in e.mentions} & wanted):
                expected.setdefault(cid, []).append(e.model_copy(update={
                    "mentions": [m for m in e.mentions if m.chunk_id == cid]}))
        triples: dict[str, list[Triple]] = {}
        for t in store.triples():
            for ev in t.evidence:
                if t.in_force and ev.chunk_id in wanted:
                    triples.setdefault(ev.chunk_id, []).append(t)
        assert store.chunk_graph(chunks) == (expected, triples)
    store.close()


def test_entities_are_found_by_where_they_are_mentioned(tables: TableStore) -> None:
    store = tables
    entity = store.entities(Layer.LITERATURE)[0]
    place = (entity.mentions[0].chunk_id, entity.mentions[0].start)
    assert store.entities_mentioned_at(Layer.LITERATURE, [place]) == [entity.id]
    assert store.entities_mentioned_at(Layer.USER, [place]) == []
    assert store.entities_mentioned_at(Layer.LITERATURE, [(place[0], -1)]) == []
    store.close()


def test_tables_of_an_older_schema_are_read_as_they_are_and_brought_up_by_a_writer(
        tmp_path: Path) -> None:
    """A reader cannot migrate: tables a writer of the previous release left (schema
    1, without the writer's name) are read as they are; the next writer migrates."""
    import sqlite3

    from medkg.store.schema import SCHEMA_VERSION

    store = open_store(StoreConfig(backend="sqlite", base_iri="https://example.org/kg/"),
                       tmp_path / "graph")
    _fill(store)
    counts = store.counts()
    store.close()
    path = tmp_path / "tables" / "graph.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE writer")
        db.execute("DELETE FROM schema_version WHERE version > 1")
    reader = open_store(StoreConfig(backend="sqlite", base_iri="https://example.org/kg/"),
                        tmp_path / "graph", read_only=True)
    assert reader.counts() == counts
    reader.close()
    writer = open_store(StoreConfig(backend="sqlite", base_iri="https://example.org/kg/"),
                        tmp_path / "graph")
    assert isinstance(writer, TableStore) and writer._version() == SCHEMA_VERSION
    writer.close()
