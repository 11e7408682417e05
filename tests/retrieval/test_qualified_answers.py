"""Answers carry the qualifiers of what they cite: a family history, a negated,
hedged or hypothetical mention is flagged where the reader sees the quote (the
answer text, the sources, ``--json``), and set apart in a question about patients."""

from __future__ import annotations

from pathlib import Path

import pytest

from medkg.model import Layer, Qualifiers
from medkg.retrieval.intent import about_patients
from medkg.workspace import Workspace
from tests.retrieval.conftest import workspace_of

pytestmark = pytest.mark.slow

NOTES = {
    "n1.txt": "Clinic note, Mrs A.\nFamily history of stroke in her father.\n"
              "She has atrial fibrillation and takes apixaban.\n",
    "n2.txt": "Clinic note, Mr B.\nAdmitted with an acute ischemic stroke last month. "
              "He had a stroke after stopping warfarin.\n",
    "n3.txt": "Clinic note, Mr C.\nCough and fever; chest X-ray shows possibly pneumonia. "
              "Started amoxicillin.\n",
    "n4.txt": "Clinic note, Ms D.\nNo history of stroke. Blood pressure is well controlled "
              "on lisinopril.\n",
}


@pytest.fixture(scope="module")
def notes_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return workspace_of(tmp_path_factory, NOTES, Layer.USER)


def test_a_question_about_patients_sets_family_history_and_negation_apart(
        notes_ws: Path) -> None:
    with Workspace.open(notes_ws, access="read") as ws:
        answer = ws.ask("Which of my patients had a stroke?", mode="hybrid")
    by_n = {c.n: c for c in answer.citations}
    cited = [by_n[s.citation] for s in answer.sentences]
    family = [c for c in cited if "family history" in c.quote.lower()]
    assert family and all("stroke: family history" in c.flags for c in family)
    affirmed = [i for i, c in enumerate(cited) if not c.flags]
    apart = [i for i, c in enumerate(cited) if any(
        f.endswith(("family history", "negated")) for f in c.flags)]
    assert affirmed and apart and max(affirmed) < min(apart)
    assert "(stroke: family history)" in answer.text  # the answer's own words say so
    rendered = answer.render()
    assert "stroke: family history" in rendered
    assert answer.model_dump(mode="json")["citations"][0]["flags"] is not None


def test_a_hedge_is_flagged(notes_ws: Path) -> None:
    with Workspace.open(notes_ws, access="read") as ws:
        answer = ws.ask("Which patients have pneumonia?", mode="hybrid")
    hedged = [c for c in answer.citations if "possibly pneumonia" in c.quote]
    assert hedged and hedged[0].flags == ["pneumonia: hedged"]


def test_flags_in_the_readers_words() -> None:
    assert Qualifiers(experiencer="family", historical=True).flags() == ["family history"]
    assert Qualifiers(negated=True, uncertain=True).flags() == ["negated", "hedged"]
    assert Qualifiers().flags() == []
    assert Qualifiers(historical=True).flags() == ["historical"]


@pytest.mark.parametrize(("question", "expected"), [
    ("Which of my patients had a stroke?", True),
    ("Which patients have pneumonia?", True),
    ("Who has had a stroke?", True),
    ("What treats hypertension?", False),
    ("What are the adverse effects of metformin?", False),
])
def test_questions_about_patients(question: str, expected: bool) -> None:
    assert about_patients(question) is expected


def test_a_question_about_what_no_document_mentions_is_not_answered(notes_ws: Path) -> None:
    with Workspace.open(notes_ws, access="read") as ws:
        answer = ws.ask("What is the recommended dose of dupilumab for atopic dermatitis?")
        partly = ws.ask("Does warfarin or dupilumab prevent stroke?", mode="hybrid")
        known = ws.ask("Which of my patients had a stroke?")
    assert not answer.answerable and "dupilumab" in answer.not_found
    assert answer.text.startswith("No document in this workspace mentions dupilumab")
    assert answer.citations == [] and answer.facts == [] and answer.sentences == []
    assert answer.trace.ranking  # what was searched is still shown by --explain
    as_json = answer.model_dump(mode="json")
    assert as_json["answerable"] is False and "dupilumab" in as_json["not_found"]
    assert partly.answerable and partly.not_found == ["dupilumab"]
    assert partly.text.startswith("No document in this workspace mentions dupilumab.")
    assert partly.citations
    assert known.answerable and known.not_found == []
