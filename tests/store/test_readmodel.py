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
