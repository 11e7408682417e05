"""Every kind of curator decision stays in force through everything automatic,
on a real workspace (builtin engine, seed vocabulary): a rebuild, a re-ingest
of the same files, new evidence for a decided triple, and a re-extraction of
every document after a vocabulary change that gives entities (and so triples)
new ids. One test per kind of decision; the workspace is decided and rebuilt
once for all of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from medkg.model import (
    EntityEdit,
    Layer,
    Link,
    LinkKind,
    Predicate,
    ReviewAction,
    ReviewState,
    StatementEdit,
    Triple,
)
from medkg.pipeline.review import Request
from medkg.workspace import Workspace
from tests.conftest import copy_workspace

pytestmark = pytest.mark.slow
KINDS = ("accept", "reject", "edit", "rename", "retype", "renormalise", "confirm", "split")
# A vocabulary that names something the seed vocabulary does not: after it is
# loaded and the documents extracted again, "insulin resistance" is normalised,
# so its entity and every triple it is in get new ids.
NEW_VOCABULARY = """format-version: 1.2
ontology: medkg-review-test

[Term]
id: MEDKGT:0000001
name: insulin resistance
def: "Reduced response of tissues to insulin." []
"""
NEW_EVIDENCE = ("Diarrhoea and nausea are common side effects of metformin, especially "
                "at high doses.\n")


def _spans(t: Triple) -> frozenset[tuple[str, int, int]]:
    return frozenset((e.chunk_id, e.start, e.end) for e in t.evidence)


@dataclass
class Target:
    """What a decision was about, found again without the ids medkg gives it:
    a triple by predicate and evidence, an entity by where it is mentioned."""

    kind: str
    layer: Layer
    predicate: Predicate | None = None
    spans: frozenset[tuple[str, int, int]] = frozenset()
    mentions: frozenset[tuple[str, int]] = frozenset()
    other: frozenset[tuple[str, int]] = frozenset()  # a merge's other entity, a tail
    value: object = None

    def triple(self, ws: Workspace) -> Triple:
        found = [t for t in ws.store.triples(self.layer) if t.predicate is self.predicate
                 and self.spans & _spans(t) and t.method != "curator"
                 and self.entity(ws) == t.head and self.entity(ws, self.other) == t.tail]
        assert len(found) == 1, found
        return found[0]

    def entity(self, ws: Workspace, where: frozenset[tuple[str, int]] | None = None) -> str:
        where = where or self.mentions
        found = [e.id for e in ws.store.entities(self.layer)
                 if where & {(m.chunk_id, m.start) for m in e.mentions}]
        assert len(found) == 1, found
        return found[0]


def holds(ws: Workspace, target: Target) -> bool:
    """Whether the decision about ``target`` is in force in the graph now."""
    kind = target.kind
    if kind in ("accept", "reject", "edit"):
        t = target.triple(ws)
        state = {"accept": ReviewState.ACCEPTED, "reject": ReviewState.REJECTED,
                 "edit": ReviewState.EDITED}[kind]
        if kind != "edit":
            return t.review is state
        versions = [v for v in ws.store.triples(target.layer) if v.revision_of == t.id]
        return t.review is state and [v.predicate for v in versions] == [target.value] \
            and versions[0].review is ReviewState.ACCEPTED
    eid = target.entity(ws)
    [brief] = ws.store.entity_briefs([eid])
    if kind == "rename":
        return brief.name == target.value
    if kind == "retype":
        return brief.type == target.value
    if kind == "renormalise":
        defined = {x.target for x in ws.store.links(source=eid, kind=LinkKind.DEFINITION_OF)}
        return brief.concept_ids == [target.value] and defined == {target.value}
    other = target.entity(ws, target.other)
    same = [x.target for x in ws.store.links(source=eid, kind=LinkKind.SAME_AS)]
    apart = [x.target for x in ws.store.links(source=eid, kind=LinkKind.DIFFERENT_FROM)]
    if kind == "confirm":
        return same == [other]
    return same == [] and apart == [other]


@dataclass
class Outcome:
    decided: dict[str, bool] = field(default_factory=dict)
    rebuilt: dict[str, bool] = field(default_factory=dict)
    reextracted: dict[str, bool] = field(default_factory=dict)
    new_ids: set[str] = field(default_factory=set)  # kinds whose target got a new id
    unresolved: int = -1


def _decide(ws: Workspace) -> dict[str, Target]:
    store = ws.store
    names = {e.id: e for layer in (Layer.USER, Layer.LITERATURE) for e in store.entities(layer)}

    def triple(head: str, predicate: Predicate, tail: str) -> Triple:
        return next(t for t in store.triples(Layer.LITERATURE) if t.predicate is predicate
                    and names[t.head].name == head and names[t.tail].name == tail)

    def spots(eid: str) -> frozenset[tuple[str, int]]:
        return frozenset((m.chunk_id, m.start) for m in names[eid].mentions)

    targets: dict[str, Target] = {}
    requests: list[Request] = []
    for kind, (h, p, tl) in {
            "accept": ("type 2 diabetes mellitus", Predicate.HAS_SYMPTOM, "insulin resistance"),
            "reject": ("metformin", Predicate.HAS_ADVERSE_EFFECT, "nausea"),
            "edit": ("hypertension", Predicate.ASSOCIATED_WITH, "stroke")}.items():
        t = triple(h, p, tl)
        targets[kind] = Target(kind, Layer.LITERATURE, p, _spans(t), spots(t.head),
                               spots(t.tail), Predicate.CAUSES if kind == "edit" else None)
        after = StatementEdit(head=t.head, predicate=Predicate.CAUSES, tail=t.tail) \
            if kind == "edit" else None
        requests.append(Request(ReviewAction(kind), t.id, f"{kind} by the test", after))
    by_name = {e.name: e for e in names.values() if e.layer is Layer.LITERATURE}
    for kind, name, edit, value in (
            ("rename", "insulin resistance", EntityEdit(name="insulin resistance (IR)"),
             "insulin resistance (IR)"),
            ("retype", "edema", EntityEdit(type="PHEN"), "PHEN"),
            ("renormalise", "fatigue", EntityEdit(concept_ids=["MEDKG:0000029"]),
             "MEDKG:0000029")):
        eid = by_name[name].id
        targets[kind] = Target(kind, Layer.LITERATURE, mentions=spots(eid), value=value)
        requests.append(Request(ReviewAction(kind), eid, f"{kind} by the test", edit))
    # Two merges, as entity resolution records them, to confirm one and split the other.
    pairs = {"confirm": ("hypokalemia", "hyperkalemia"), "split": ("angioedema", "edema")}
    for kind, (a, b) in pairs.items():
        source, target = by_name[a].id, by_name[b].id
        store.add_links([Link(kind=LinkKind.SAME_AS, source=source, target=target, score=0.86,
                              method="resolution:embedding+name")])
        targets[kind] = Target(kind, Layer.LITERATURE, mentions=spots(source),
                               other=spots(target))
        requests.append(Request(ReviewAction(kind), source, f"{kind} by the test"))
    ws.review_many(requests, "the test")
    return targets


@pytest.fixture(scope="module")
def outcome(built_workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    tmp = tmp_path_factory.mktemp("survives")
    root = copy_workspace(built_workspace, tmp / "ws")
    out = Outcome()
    with Workspace.open(root) as ws:
        targets = _decide(ws)
        out.decided = {k: holds(ws, t) for k, t in targets.items()}
        before = {k: (t.triple(ws).id if t.predicate else t.entity(ws))
                  for k, t in targets.items()}
        sources = {ws.store.document(d).source: ws.store.document(d).layer
                   for d in ws.store.document_ids()}
    # 1. A rebuild, a re-ingest of the very same files, and new evidence for the
    #    rejected triple (a new literature document stating it again).
    extra = tmp / "nausea.txt"
    extra.write_text(NEW_EVIDENCE, encoding="utf-8")
    with Workspace.open(root) as ws:
        for source, layer in sources.items():
            ws.ingest([Path(source)], layer)
        ws.ingest([extra], Layer.LITERATURE)
        ws.build()
        rejected = targets["reject"].triple(ws)
        assert any(e.document_id != next(iter(rejected.evidence)).document_id
                   for e in rejected.evidence), "the new document is evidence for it"
        out.rebuilt = {k: holds(ws, t) for k, t in targets.items()}
    # 2. A vocabulary change, then every document extracted again.
    vocab = tmp / "extra.obo"
    vocab.write_text(NEW_VOCABULARY, encoding="utf-8")
    with Workspace.open(root) as ws:
        ws.load_vocabulary(vocab)
        for doc_id in ws.store.document_ids():
            ws.delete_document(doc_id)
        for source, layer in sources.items():
            ws.ingest([Path(source)], layer)
        ws.ingest([extra], Layer.LITERATURE)
        report = ws.build()
        out.unresolved = report.review_unresolved
        out.reextracted = {k: holds(ws, t) for k, t in targets.items()}
        after = {k: (t.triple(ws).id if t.predicate else t.entity(ws))
                 for k, t in targets.items()}
        out.new_ids = {k for k in targets if before[k] != after[k]}
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_a_decision_survives_rebuild_and_reextraction(outcome: Outcome, kind: str) -> None:
    assert outcome.decided[kind], "in force once made"
    assert outcome.rebuilt[kind], "in force after a rebuild, a re-ingest and new evidence"
    assert outcome.reextracted[kind], "in force after a vocabulary change and re-extraction"


def test_the_vocabulary_change_gave_new_ids(outcome: Outcome) -> None:
    """The re-extraction is a real test of re-anchoring: decided statements and
    entities came back under new ids, and every decision found its target."""
    assert {"accept", "rename"} <= outcome.new_ids
    assert outcome.unresolved == 0
