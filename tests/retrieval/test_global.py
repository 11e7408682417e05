"""Global questions (the tag tree's summaries) and the auto mode's choice."""

from __future__ import annotations

import pytest

from medkg.retrieval.globalsearch import asked_category, choose_mode
from medkg.workspace import Workspace

pytestmark = pytest.mark.slow


def test_a_category_question_over_my_notes_counts_and_cites(small_ws: Workspace) -> None:
    answer = small_ws.ask("What adverse effects come up across my notes?", mode="global")
    assert answer.mode == "global" and answer.text.startswith("Adverse events across your")
    assert answer.citations and all(c.layer.value == "user" for c in answer.citations)
    for c in answer.citations:
        assert small_ws.store.document(c.document_id).text[c.start:c.end] == c.quote
    assert "user layer only" in (answer.trace.note or "")


def test_a_themes_question_gets_the_top_groups(small_ws: Workspace) -> None:
    answer = small_ws.ask("What are the main themes of this literature?", mode="global")
    assert answer.text.startswith("Main themes of the collection")
    assert answer.citations


def test_auto_says_why_it_chose(small_ws: Workspace) -> None:
    nlp = small_ws.nlp()
    assert choose_mode("What are the main themes across these documents?", nlp).mode == "global"
    assert choose_mode("What are the side effects of lisinopril?", nlp).mode == "u-retrieval"
    answer = small_ws.ask("What are the main themes across these documents?", mode="auto")
    assert answer.mode == "global" and (answer.trace.note or "").startswith("auto chose global")
    assert asked_category("Which symptoms recur?") == "symptoms_and_signs"
    assert answer.trace.keywords == {"low": [], "high": ["main themes"]}
    both = choose_mode("What adverse effects of lisinopril come up across my notes?", nlp)
    assert both.mode == "u-retrieval" and both.keywords.low == ("lisinopril",)
    assert both.keywords.high == ("come up", "adverse events", "my notes")
    assert "keywords: low (entities): none" in answer.render_trace()
