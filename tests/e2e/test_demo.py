"""The demo path end to end: build from examples/, ask, check every citation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import rdflib
from typer.testing import CliRunner

from medkg.cli import DEFAULT_QUESTION, app
from medkg.model import Layer, LinkKind
from medkg.retrieval.answer import Answer
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.slow
runner = CliRunner()


@pytest.fixture(scope="module")
def demo_ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    path = tmp_path_factory.mktemp("demo") / "ws"
    result = runner.invoke(app, ["demo", "--dir", str(path), "--examples", str(EXAMPLES)])
    assert result.exit_code == 0, result.output
    assert "Metformin is the first-line treatment" in result.output
    ws = Workspace.open(path)
    # These tests check how facts are composed (layers, literature, definitions),
    # whatever their confidence; which are presented is test_facts_gate's.
    ws.settings.facts.min_precision = 0.0
    yield ws
    ws.close()


def assert_citations_hold(ws: Workspace, answer: Answer) -> None:
    assert answer.citations, "an answer from a non-empty workspace cites something"
    for c in answer.citations:
        doc = ws.store.document(c.document_id)
        assert doc.text[c.start : c.end] == c.quote
        chunk = ws.store.chunk(c.chunk_id)
        assert chunk.document_id == doc.id and chunk.start <= c.start and c.end <= chunk.end
    numbers = {c.n for c in answer.citations}
    for fact in answer.facts:
        assert set(fact.citations) <= numbers
    assert f"[{answer.citations[0].n}]" in answer.text


@pytest.mark.parametrize(("question", "expect_in_answer", "expect_definition"), [
    (DEFAULT_QUESTION, "lactic acidosis", "metformin"),
    ("What can cause a dry cough?", "lisinopril", "dry cough"),
    ("How is atrial fibrillation confirmed and how is stroke prevented?", "apixaban",
     "atrial fibrillation"),
    ("What are the symptoms of heart failure?", "shortness of breath", "heart failure"),
    ("Which drug is used to treat community-acquired pneumonia?", "amoxicillin", "pneumonia"),
])
def test_answers_cite_real_text_and_define_terms(
    demo_ws: Workspace, question: str, expect_in_answer: str, expect_definition: str
) -> None:
    answer = demo_ws.ask(question)
    assert_citations_hold(demo_ws, answer)
    said = " ".join([answer.text, *(f"{f.head} {f.tail}" for f in answer.facts)]).lower()
    assert expect_in_answer in said
    terms = [d.term.lower() for d in answer.definitions]
    assert any(expect_definition in t for t in terms), terms
    assert all(d.definition for d in answer.definitions)


def test_ask_json_from_the_cli(demo_ws: Workspace) -> None:
    demo_ws.close()  # one process holds the store; the CLI opens it itself
    result = runner.invoke(app, ["ask", "What treats hypertension?", "-w", str(demo_ws.root),
                                 "--json", "--show-proposed"])
    assert result.exit_code == 0, result.output
    answer = Answer.model_validate(json.loads(result.stdout))
    assert_citations_hold(demo_ws, answer)
    assert any(f.predicate.value == "treats" and f.tail == "hypertension"
               for f in [*answer.facts, *answer.proposed])


def test_every_user_fact_traces_to_source_and_definition(demo_ws: Workspace) -> None:
    store = demo_ws.store
    user = {e.name: e for e in store.entities(Layer.USER)}
    lisinopril = user["lisinopril"]
    [ref] = store.links(source=lisinopril.id, kind=LinkKind.REFERENCE_OF)
    literature = store.entity(ref.target)
    assert literature.layer is Layer.LITERATURE and literature.name == "lisinopril"
    [definition] = store.links(source=literature.id, kind=LinkKind.DEFINITION_OF)
    assert store.concept(definition.target).definition
    assert 0.0 < ref.score <= 1.0


def test_answer_is_grouped_by_layer_and_ties_user_facts_to_the_literature(
        demo_ws: Workspace) -> None:
    answer = demo_ws.ask("What are the side effects of lisinopril?")
    assert_citations_hold(demo_ws, answer)
    layer_of = {c.n: c.layer for c in answer.citations}
    assert answer.sentences and all(s.layer is layer_of[s.citation] for s in answer.sentences)
    assert {s.layer for s in answer.sentences} == {Layer.USER, Layer.LITERATURE}
    # the note's own statement of the side effect comes first among the user's sentences
    assert "dry cough" in next(s.text for s in answer.sentences if s.layer is Layer.USER)
    by_id = {f.triple_id: f for f in answer.facts}
    (user_fact,) = [f for f in answer.facts if f.layer is Layer.USER and f.tail == "dry cough"]
    (lit_id,) = user_fact.literature
    lit = by_id[lit_id]
    assert (lit.layer, lit.head, lit.predicate, lit.tail) == (
        Layer.LITERATURE, "lisinopril", user_fact.predicate, "dry cough")
    defined = {d.concept_id: d.term for d in answer.definitions}
    assert {defined[c] for c in user_fact.defined_by} == {"lisinopril", "dry cough"}
    text = answer.render()
    assert text.index("In your documents:") < text.index("In the literature:")
    assert "Facts from your documents:" in text and "      in the literature: lisinopril" in text
    # every sentence of the answer is about lisinopril or one of its side effects
    names = {"lisinopril", *(f.tail for f in answer.facts if f.head == "lisinopril")}
    assert all(any(n in s.text.lower() for n in names) for s in answer.sentences)


def test_rerun_duplicates_nothing(demo_ws: Workspace) -> None:
    before = demo_ws.store.counts()
    report = demo_ws.ingest([EXAMPLES / "user"], Layer.USER)
    assert (report.documents, report.skipped) == (0, 10)
    assert demo_ws.build().documents == 0
    assert demo_ws.store.counts() == before


def test_export_turtle_of_the_demo(demo_ws: Workspace, tmp_path: Path) -> None:
    out = tmp_path / "kg.ttl"
    demo_ws.close()
    result = runner.invoke(app, ["export", str(out), "-w", str(demo_ws.root)])
    assert result.exit_code == 0, result.output
    graph = rdflib.Graph().parse(out, format="turtle")
    assert len(graph) > 1000


def test_modes_and_explain(demo_ws: Workspace) -> None:
    question = "What are the side effects of lisinopril?"
    answers = {m: demo_ws.ask(question, mode=m) for m in ("u-retrieval", "local", "vector")}
    for mode, answer in answers.items():
        assert answer.mode == mode
        assert_citations_hold(demo_ws, answer)
        assert answer.trace.retrieved_chunks
    u = answers["u-retrieval"]
    assert u.trace.tree_path and (u.trace.scope_chunks or 0) >= 1
    assert u.trace.query_tags == {"medications_and_doses": ["lisinopril"]}
    assert not answers["vector"].facts  # plain vector RAG uses no graph
    demo_ws.close()
    result = runner.invoke(app, ["ask", question, "-w", str(demo_ws.root), "--explain"])
    assert result.exit_code == 0, result.output
    assert "Trace (u-retrieval)" in result.output and "tree level" in result.output
    assert "bottom-up" in result.output


def test_question_naming_an_unknown_drug(demo_ws: Workspace) -> None:
    # The NER model tags zolpidem, which the demo vocabulary does not hold: a
    # mention without a concept must not be looked up as one.
    answer = demo_ws.ask("Does zolpidem cause amnesia or hypertension?")
    assert answer.mode == "u-retrieval"
    assert all(d.concept_id for d in answer.definitions)
