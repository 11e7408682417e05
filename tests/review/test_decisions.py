"""Review decisions over a store: what is in force, what apply() makes of it,
and decisions as files. Real stores (every backend), no model loads."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from medkg.errors import ReviewError
from medkg.model import (
    Chunk,
    Document,
    Entity,
    EntityEdit,
    Evidence,
    Layer,
    Link,
    LinkKind,
    Mention,
    Predicate,
    Qualifiers,
    ReviewAction,
    ReviewState,
    StatementEdit,
    Triple,
)
from medkg.review import exchange
from medkg.review.apply import apply
from medkg.review.decisions import (
    entity_snapshot,
    in_force,
    make,
    merge_snapshot,
    statement_snapshot,
    undoable,
)
from medkg.store.base import GraphStore
from medkg.store.registry import backend_names, open_store
from tests.conftest import store_config

TEXT = "Metformin treats type 2 diabetes. Metformin may cause lactic acidosis."
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(params=backend_names())
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    s = open_store(store_config(request.param, request), tmp_path / "graph")  # type: ignore[arg-type]
    yield s
    s.close()


def _entity(doc: Document, chunk: Chunk, name: str, group: str, concept: str | None) -> Entity:
    start = TEXT.index(name)
    return Entity(id=Entity.key_for(doc.layer, name, group, concept), layer=doc.layer,
                  name=name, type=group, context="", concept_ids=[concept] if concept else [],
                  mentions=[Mention(chunk_id=chunk.id, document_id=doc.id, start=start,
                                    end=start + len(name), text=name)])


def write_graph(store: GraphStore, concept: str | None = "MEDKG:1") -> dict[str, object]:
    """A document, three entities and two triples, as a build would write them;
    ``concept`` changes the drug's entity id, as a new vocabulary would."""
    doc = Document.create(layer=Layer.LITERATURE, title="P", source="p.txt",
                          media_type="text/plain", text=TEXT)
    chunk = Chunk.create(doc, 0, 0, len(TEXT))
    store.add_document(doc, [chunk])
    drug = _entity(doc, chunk, "Metformin", "CHEM", concept)
    t2d = _entity(doc, chunk, "type 2 diabetes", "DISO", None)
    acid = _entity(doc, chunk, "lactic acidosis", "DISO", None)
    store.add_entities([drug, t2d, acid])
    triples = {}
    for name, pred, tail, (s, e) in (("treats", Predicate.TREATS, t2d, (0, 33)),
                                      ("causes", Predicate.CAUSES, acid, (34, len(TEXT)))):
        ev = Evidence(chunk_id=chunk.id, document_id=doc.id, start=s, end=e, quote=TEXT[s:e])
        triples[name] = Triple(id=Triple.key_for(doc.layer, drug.id, pred, tail.id, Qualifiers()),
                               layer=doc.layer, head=drug.id, predicate=pred, tail=tail.id,
                               evidence=[ev], confidence=0.6)
    store.add_triples(triples.values())
    return {"doc": doc, "drug": drug, "t2d": t2d, "acid": acid, **triples}


def _snap(store: GraphStore, t: Triple) -> object:
    return statement_snapshot(t, store.entity(t.head), store.entity(t.tail))


def test_in_force_takes_the_latest_and_leaves_out_what_was_undone() -> None:
    a = make(ReviewAction.ACCEPT, "tri-1", "ann", at=T0)
    r = make(ReviewAction.REJECT, "tri-1", "bob", reason="wrong", at=T0 + timedelta(1))
    assert in_force([r, a]).statements["tri-1"] == r
    u = make(ReviewAction.UNDO, "", "ann", undoes=r, at=T0 + timedelta(2))
    assert u.target == "tri-1" and u.undoes == r.id
    assert in_force([a, r, u]).statements["tri-1"] == a
    with pytest.raises(ReviewError, match="undone already"):
        undoable([a, r, u], r.id)
    with pytest.raises(ReviewError, match="an undo itself"):
        undoable([a, r, u], u.id)
    with pytest.raises(ReviewError, match="no decision"):
        undoable([a], "rev-nope")


def test_decisions_are_checked() -> None:
    with pytest.raises(ReviewError, match="reviewer"):
        make(ReviewAction.ACCEPT, "tri-1", "  ")
    with pytest.raises(ReviewError, match="control"):
        make(ReviewAction.ACCEPT, "tri-1", "ann", reason="a\x00b")
    with pytest.raises(ReviewError, match="at most"):
        make(ReviewAction.ACCEPT, "tri-1", "ann", reason="x" * 3000)
    with pytest.raises(ReviewError, match="curator's version"):
        make(ReviewAction.EDIT, "tri-1", "ann")
    with pytest.raises(ReviewError, match="new value"):
        make(ReviewAction.RENAME, "ent-1", "ann")
    # The same decision made twice (an import run again) has one id.
    assert make(ReviewAction.ACCEPT, "tri-1", "ann", at=T0).id == \
        make(ReviewAction.ACCEPT, "tri-1", "ann", at=T0).id


def test_apply_sets_states_and_writes_the_curators_version(store: GraphStore) -> None:
    g = write_graph(store)
    treats, causes = g["treats"], g["causes"]
    assert isinstance(treats, Triple) and isinstance(causes, Triple)
    reject = make(ReviewAction.REJECT, causes.id, "ann", reason="no", before=_snap(store, causes),
                  at=T0)
    edit = make(ReviewAction.EDIT, treats.id, "ann", before=_snap(store, treats),
                after=StatementEdit(head=treats.head, predicate=Predicate.PREVENTS,
                                    tail=treats.tail), at=T0 + timedelta(1))
    store.add_decisions([reject, edit])
    done = apply(store)
    assert done.unresolved == [] and done.versions == 1
    by_id = {t.id: t for t in store.triples()}
    assert by_id[causes.id].review is ReviewState.REJECTED
    assert by_id[treats.id].review is ReviewState.EDITED
    [version] = [t for t in by_id.values() if t.revision_of == treats.id]
    assert (version.predicate, version.review, version.method) == \
        (Predicate.PREVENTS, ReviewState.ACCEPTED, "curator")
    assert version.evidence == treats.evidence
    assert apply(store).states == 0  # idempotent
    # Undo the edit: the original is proposed again and the curator's version goes.
    undo = make(ReviewAction.UNDO, "", "bob", undoes=edit, at=T0 + timedelta(2))
    store.add_decisions([undo])
    apply(store)
    by_id = {t.id: t for t in store.triples()}
    assert by_id[treats.id].review is ReviewState.PROPOSED and version.id not in by_id


def test_decisions_follow_their_statements_to_new_ids(store: GraphStore) -> None:
    """A re-extraction after a vocabulary change gives the drug a new entity id,
    so every triple id changes; the decisions find them by evidence and polarity."""
    g = write_graph(store, concept="MEDKG:1")
    treats, causes, drug = g["treats"], g["causes"], g["drug"]
    assert isinstance(treats, Triple) and isinstance(causes, Triple)
    assert isinstance(drug, Entity)
    store.add_decisions([
        make(ReviewAction.ACCEPT, treats.id, "ann", before=_snap(store, treats), at=T0),
        make(ReviewAction.REJECT, causes.id, "ann", before=_snap(store, causes), at=T0),
        make(ReviewAction.RENAME, drug.id, "ann", before=entity_snapshot(drug),
             after=EntityEdit(name="metformin hydrochloride"), at=T0)])
    apply(store)
    doc = g["doc"]
    assert isinstance(doc, Document)
    store.delete_document(doc.id)
    h = write_graph(store, concept="CHEBI:6801")  # new ids for the drug and both triples
    new_drug = h["drug"]
    assert isinstance(new_drug, Entity) and new_drug.id != drug.id
    done = apply(store)
    assert done.unresolved == []
    by_pred = {t.predicate: t for t in store.triples()}
    assert by_pred[Predicate.TREATS].review is ReviewState.ACCEPTED
    assert by_pred[Predicate.CAUSES].review is ReviewState.REJECTED
    assert store.entity(new_drug.id).name == "metformin hydrochloride"


def test_entity_and_merge_decisions_and_their_undo(store: GraphStore) -> None:
    g = write_graph(store)
    drug, t2d, acid = g["drug"], g["t2d"], g["acid"]
    assert isinstance(drug, Entity) and isinstance(t2d, Entity) and isinstance(acid, Entity)
    retype = make(ReviewAction.RETYPE, acid.id, "ann", before=entity_snapshot(acid),
                  after=EntityEdit(type="PHEN"), at=T0)
    store.add_decisions([retype])
    apply(store)
    assert store.entity(acid.id).type == "PHEN"
    store.add_decisions([make(ReviewAction.UNDO, "", "ann", undoes=retype, at=T0 + timedelta(1))])
    apply(store)
    assert store.entity(acid.id).type == "DISO"
    merge = Link(kind=LinkKind.SAME_AS, source=acid.id, target=t2d.id, score=0.86,
                 method="resolution:embedding+name")
    store.add_links([merge])
    split = make(ReviewAction.SPLIT, acid.id, "ann",
                 before=merge_snapshot(acid.id, t2d.id, 0.86, merge.method), at=T0)
    store.add_decisions([split])
    apply(store)
    assert store.links(source=acid.id, kind=LinkKind.SAME_AS) == []
    assert [x.target for x in store.links(source=acid.id, kind=LinkKind.DIFFERENT_FROM)] == \
        [t2d.id]
    store.add_links([merge])  # an automatic run merges them again: apply splits them again
    apply(store)
    assert store.links(source=acid.id, kind=LinkKind.SAME_AS) == []
    store.add_decisions([make(ReviewAction.UNDO, "", "ann", undoes=split, at=T0 + timedelta(1))])
    apply(store)
    assert [x.target for x in store.links(source=acid.id, kind=LinkKind.SAME_AS)] == [t2d.id]
    assert store.links(source=acid.id, kind=LinkKind.DIFFERENT_FROM) == []


@pytest.mark.parametrize("suffix", [".jsonl", ".tsv"])
def test_decisions_files_round_trip(tmp_path: Path, suffix: str) -> None:
    decisions = [
        make(ReviewAction.REJECT, "tri-1", "Dr\tTab", reason='line\nbreak "quoted"', at=T0),
        make(ReviewAction.EDIT, "tri-2", "ann", at=T0,
             after=StatementEdit(head="ent-a", predicate=Predicate.CAUSES, tail="ent-b")),
    ]
    path = tmp_path / f"decisions{suffix}"
    path.write_text(exchange.dumps(decisions, exchange.format_of(path)), encoding="utf-8")
    rows = exchange.read(path)
    assert [(r.id, r.reviewer, r.target, r.action, r.reason) for r in rows] == \
        [(d.id, d.reviewer, d.target, d.action, d.reason) for d in decisions]
    assert rows[1].after == decisions[1].after.model_dump(mode="json")  # type: ignore[union-attr]


def test_malformed_decision_files_are_refused_with_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "d.tsv"
    bad.write_text("reviewer\ttarget\taction\nann\ttri-1\taccept\nann\ttri-2\tapprove\n")
    with pytest.raises(ReviewError, match=r"d.tsv:3: unknown action"):
        exchange.read(bad)
    worse = tmp_path / "d.jsonl"
    worse.write_text('{"id": 1}\n')
    with pytest.raises(ReviewError, match=r"d.jsonl:1: not a decision"):
        exchange.read(worse)
    with pytest.raises(ReviewError, match="cannot tell the format"):
        exchange.format_of(tmp_path / "d.csv")
