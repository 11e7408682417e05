"""QA benchmark readers and metrics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from medkg.evaluation.qa import (
    QAFormatError,
    read_bioasq,
    read_pubmedqa,
    score_ranking,
    yes_or_no,
)
from medkg.retrieval.answer import Answer
from tests.conftest import shared_path


def test_metrics_of_one_ranking() -> None:
    gold = frozenset({"a", "b"})
    recall, rr, ndcg = score_ranking(["x", "a", "a", "y", "b"], gold)
    assert recall == 1.0 and rr == 0.5
    assert ndcg == pytest.approx((1 / math.log2(3) + 1 / math.log2(5))
                                 / (1 + 1 / math.log2(3)))
    assert score_ranking(["x"], gold) == (0.0, 0.0, 0.0)


def test_bioasq_pools_and_dedups_snippets(tmp_path: Path) -> None:
    snippet = {"text": "Aspirin  inhibits COX-1.", "document": "http://x/pubmed/1"}
    data = {"questions": [
        {"id": "q1", "body": "Does aspirin inhibit COX-1?", "type": "yesno",
         "exact_answer": "yes", "snippets": [snippet]},
        {"id": "q2", "body": "What does aspirin inhibit?", "type": "factoid",
         "snippets": [dict(snippet, text="Aspirin inhibits COX-1."),
                      {"text": "Other text.", "document": "http://x/pubmed/2"}]},
        {"id": "q3", "body": "No snippets", "type": "summary", "snippets": []},
    ]}
    path = tmp_path / "b.json"
    path.write_text(json.dumps(data))
    ds = read_bioasq(path)
    assert len(ds.documents) == 2 and len(ds.items) == 2
    assert ds.items[0].yesno == "yes" and ds.items[0].gold < ds.items[1].gold
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(QAFormatError):
        read_bioasq(bad)


def test_real_files_read() -> None:
    bioasq = read_bioasq(shared_path("eval", "bioasq", "Task7BGoldenEnriched",
                                     "7B1_golden.json"))
    assert len(bioasq.items) == 100 and len(bioasq.documents) > 400
    pubmedqa = read_pubmedqa(shared_path("eval", "pubmedqa", "pqal_dev.json"))
    assert len(pubmedqa.items) == 500
    assert {i.yesno for i in pubmedqa.items} <= {"yes", "no", "maybe"}


def test_only_a_generated_answer_says_yes_or_no() -> None:
    def answer(text: str, mode: str) -> Answer:
        return Answer(question="q", mode=mode, text=text, citations=[], facts=[],
                      definitions=[], trace={})

    assert yes_or_no(answer("No significant difference was found. [1]", "vector")) is None
    assert yes_or_no(answer("No, it does not. [1]", "local+llm")) == "no"
    assert yes_or_no(answer("Yes. [2]", "u-retrieval+llm")) == "yes"
    assert yes_or_no(answer("Probably. [2]", "u-retrieval+llm")) is None


def test_ideal_and_exact_answers_are_read_and_scored(tmp_path: Path) -> None:
    from medkg.evaluation.qa import answer_text, exact_hit, rouge
    from medkg.model import Layer
    from medkg.retrieval.answer import Citation

    snippet = {"text": "Metformin can cause lactic acidosis.", "document": "http://x/pubmed/1"}
    data = {"questions": [
        {"id": "f", "body": "What can metformin cause?", "type": "factoid",
         "exact_answer": [["lactic acidosis", "lactacidosis"]],
         "ideal_answer": ["Metformin can cause lactic acidosis."], "snippets": [snippet]},
        {"id": "l", "body": "List effects of metformin.", "type": "list",
         "exact_answer": [["nausea"], ["lactic acidosis"]],
         "ideal_answer": "Nausea and lactic acidosis.", "snippets": [snippet]},
    ]}
    path = tmp_path / "b.json"
    path.write_text(json.dumps(data))
    factoid, listed = read_bioasq(path).items
    assert factoid.exact == (("lactic acidosis", "lactacidosis"),)
    assert listed.exact == (("nausea",), ("lactic acidosis",)) and listed.ideal
    cite = Citation(n=1, document_id="d", title="t", source="s", layer=Layer.LITERATURE,
                    chunk_id="c", start=0, end=36, quote=snippet["text"])
    answer = Answer(question="q", mode="vector", text=f"{snippet['text']} [1]",
                    citations=[cite], facts=[], definitions=[])
    assert answer_text(answer) == snippet["text"]
    assert exact_hit(factoid, answer) and exact_hit(listed, answer)
    perfect = rouge([answer_text(answer)], [factoid.ideal])
    assert perfect["rouge2_f"] == pytest.approx(1.0) and perfect["rougesu4_f"] == pytest.approx(1.0)
    assert rouge(["nothing alike here"], [factoid.ideal])["rouge2_f"] == 0.0


def test_on_topic_share_counts_sentences_naming_question_terms() -> None:
    from medkg.evaluation.qa import on_topic_share, question_terms
    from medkg.model import Layer, Predicate, Qualifiers
    from medkg.retrieval.answer import AnswerSentence, Fact
    from medkg.retrieval.trace import Trace

    fact = Fact(triple_id="t", head_id="h", tail_id="x", head="warfarin",
                predicate=Predicate.HAS_ADVERSE_EFFECT, tail="bleeding",
                layer=Layer.LITERATURE, confidence=0.7, qualifiers=Qualifiers(), citations=[1])
    unrelated = fact.model_copy(update={"head": "metformin", "tail": "nausea"})
    said = ["Warfarin needs INR checks.", "Major bleeding is rare.",
            "Nausea is common with metformin.", "Coumadin-like drugs (warfarins) differ."]
    answer = Answer(question="What are the side effects of warfarin?", mode="u-retrieval",
                    text="", citations=[], facts=[fact, unrelated], definitions=[],
                    sentences=[AnswerSentence(text=t, citation=i + 1, layer=Layer.LITERATURE)
                               for i, t in enumerate(said)],
                    trace=Trace(question_concepts=["C1"]))
    terms = question_terms(answer, lambda cid: ["Warfarin", "WF"] if cid == "C1" else [])
    # the concept's names (two letters are too short to count) and its neighbour in a fact
    assert terms == {"warfarin", "bleeding"}
    # whole words only: "warfarins" is not "warfarin"; metformin's sentence is off topic
    assert on_topic_share(answer, terms) == pytest.approx(2 / 4)
    assert on_topic_share(answer, frozenset()) is None
