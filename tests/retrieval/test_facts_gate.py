"""An answer states as facts only what a curator accepted or what is calibrated
to be right at least ``facts.min_precision`` of the time; the rest stay proposed,
listed only on request, never as facts and never as conditions."""

from __future__ import annotations

from pathlib import Path

import pytest

from medkg.model import Layer, ReviewAction, ReviewState, Triple
from medkg.pipeline.review import Request
from medkg.retrieval.answer import presents_as_fact
from medkg.workspace import Workspace
from tests.retrieval.conftest import workspace_of

pytestmark = pytest.mark.slow

TEXT = ("Lisinopril can cause a dry cough. Lisinopril is used to treat hypertension. "
        "Lisinopril is contraindicated in angioedema.\n")
QUESTION = "What does lisinopril do?"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return workspace_of(tmp_path_factory, {"lisinopril.txt": TEXT}, Layer.LITERATURE)


def _triple(confidence: float, review: ReviewState = ReviewState.PROPOSED) -> Triple:
    from medkg.model import Predicate

    return Triple(id="tri-x", layer=Layer.USER, head="a", predicate=Predicate.TREATS,
                  tail="b", confidence=confidence, review=review)


def test_the_bar() -> None:
    assert presents_as_fact(_triple(0.8), 0.8) and not presents_as_fact(_triple(0.79), 0.8)
    assert presents_as_fact(_triple(0.1, ReviewState.ACCEPTED), 0.8)  # a curator's word
    assert not presents_as_fact(_triple(0.99, ReviewState.REJECTED), 0.8)
    assert not presents_as_fact(_triple(0.99, ReviewState.EDITED), 0.8)  # replaced


def test_low_confidence_statements_are_proposed_not_facts(built: Path) -> None:
    with Workspace.open(built, access="read") as ws:
        triples = {t.id: t for t in ws.store.triples(Layer.LITERATURE)}
        assert any(t.confidence < ws.settings.facts.min_precision for t in triples.values())
        plain = ws.ask(QUESTION, mode="hybrid")
        shown = ws.ask(QUESTION, mode="hybrid", show_proposed=True)
    assert plain.proposed == []  # listed only on request
    assert shown.proposed, "the graph holds statements below the bar about lisinopril"
    bar = 0.8
    for f in shown.facts:
        assert triples[f.triple_id].confidence >= bar
    for f in shown.proposed:
        assert triples[f.triple_id].confidence < bar
    assert not {f.triple_id for f in shown.facts} & {f.triple_id for f in shown.proposed}
    for cond in shown.conditions:  # a caution drawn from proposed statements says so
        from_facts = any(triples[t].confidence >= bar for t in cond.triple_ids)
        assert cond.unreviewed is not from_facts
    text = shown.render()
    assert "Unreviewed, low confidence" in text
    assert "Unreviewed" not in plain.render()
    assert shown.model_dump(mode="json")["proposed"][0]["confidence"] < bar


def test_a_curators_accept_makes_a_fact_and_a_reject_unmakes_one(built: Path,
                                                                  tmp_path: Path) -> None:
    import shutil

    root = shutil.copytree(built, tmp_path / "ws")
    with Workspace.open(root) as ws:
        low = next(f for f in ws.ask(QUESTION, mode="hybrid", show_proposed=True).proposed)
        ws.review(Request(ReviewAction.ACCEPT, low.triple_id, "checked the label"), "Dr Ada")
        after = ws.ask(QUESTION, mode="hybrid", show_proposed=True)
        assert low.triple_id in {f.triple_id for f in after.facts}
        assert low.triple_id not in {f.triple_id for f in after.proposed}
        ws.review(Request(ReviewAction.REJECT, low.triple_id, "wrong"), "Dr Ada")
        again = ws.ask(QUESTION, mode="hybrid", show_proposed=True)
        assert low.triple_id not in {f.triple_id for f in [*again.facts, *again.proposed]}


def test_the_bar_is_a_setting(built: Path) -> None:
    with Workspace.open(built, access="read") as ws:
        ws.settings.facts.min_precision = 0.0
        everything = ws.ask(QUESTION, mode="hybrid", show_proposed=True)
    assert everything.facts and everything.proposed == []


def test_a_caution_below_the_bar_is_shown_and_says_so(built: Path) -> None:
    with Workspace.open(built, access="read") as ws:
        answer = ws.ask("What is lisinopril used to treat, and when should it be avoided?",
                        mode="hybrid")
        facts = {t.id for t in ws.store.triples(Layer.LITERATURE)
                 if presents_as_fact(t, ws.settings.facts.min_precision)}
    assert answer.conditions
    for cond in answer.conditions:
        assert cond.unreviewed == (not set(cond.triple_ids) & facts)
    if any(c.unreviewed for c in answer.conditions):
        assert "(unreviewed, low confidence):" in answer.render()
