"""The local retriever on its own: modes, candidate rankings, the tree prior,
citations, errors."""

from __future__ import annotations

import pytest

from medkg.errors import RetrievalError
from medkg.retrieval.answer import Answer
from medkg.retrieval.local import LocalRetriever
from medkg.workspace import Workspace

pytestmark = pytest.mark.slow
QUESTION = "What are the side effects of lisinopril?"


def _quotes_hold(ws: Workspace, answer: Answer) -> None:
    assert answer.citations
    for c in answer.citations:
        assert ws.store.document(c.document_id).text[c.start:c.end] == c.quote
    marks = {int(m) for m in __import__("re").findall(r"\[(\d+)\]", answer.text)}
    assert marks <= {c.n for c in answer.citations}


def test_local_mode_uses_the_graph(small_ws: Workspace) -> None:
    retriever = small_ws.retriever()
    assert isinstance(retriever, LocalRetriever)
    answer = retriever.ask(QUESTION, mode="local")
    _quotes_hold(small_ws, answer)
    assert answer.mode == "local"
    assert any(f.head == "lisinopril" for f in [*answer.facts, *answer.proposed])
    assert answer.trace.triples and answer.trace.focus_entities
    assert answer.trace.retrieved_chunks
    assert any(d.term == "lisinopril" for d in answer.definitions)


def test_vector_mode_is_chunks_alone(small_ws: Workspace) -> None:
    answer = small_ws.retriever().ask(QUESTION, mode="vector")
    _quotes_hold(small_ws, answer)
    assert answer.facts == [] and answer.trace.triples == []
    assert answer.trace.tree_path is None  # no tree in this mode


def test_every_mode_ranks_candidates_beyond_the_answer(small_ws: Workspace) -> None:
    retriever = small_ws.retriever()
    chunks = len(small_ws.index("chunks"))
    for mode in ("vector", "bm25", "hybrid", "local"):
        answer = retriever.ask(QUESTION, mode=mode)  # type: ignore[arg-type]
        ranking = answer.trace.ranking
        assert len(ranking) == len(set(ranking)), mode
        assert len(ranking) >= min(chunks, 10) or mode == "bm25", mode
        cited = {c.chunk_id for c in answer.citations}
        assert cited, mode
        if mode != "local":  # the answer draws on the top of the ranking
            assert set(answer.trace.retrieved_chunks) <= set(ranking) | {
                ev.chunk_id for t in small_ws.store.triples() if t.id in answer.trace.triples
                for ev in t.evidence}, mode


def test_bm25_finds_the_words_of_the_question(small_ws: Workspace) -> None:
    answer = small_ws.retriever().ask("lisinopril dry cough", mode="bm25")
    top = small_ws.store.chunk(answer.trace.ranking[0]).text.lower()
    assert "lisinopril" in top or "cough" in top
    assert answer.facts == []


def test_the_tree_is_a_prior_not_a_filter(small_ws: Workspace) -> None:
    retriever = small_ws.retriever()
    hybrid = retriever.ask(QUESTION, mode="hybrid").trace.ranking
    weakest = hybrid[-2:]
    answer = retriever.ask(QUESTION, mode="u-retrieval", tree=weakest)
    ranking = answer.trace.ranking
    # The prior lifts its chunks, and every hybrid candidate stays rankable.
    assert set(hybrid) <= set(ranking)
    assert min(ranking.index(c) for c in weakest) < min(hybrid.index(c) for c in weakest)


def test_an_empty_question_is_an_error(small_ws: Workspace) -> None:
    with pytest.raises(RetrievalError, match="the question is empty"):
        small_ws.ask("   ")  # checked once, on the way in (pipeline.ask.compose)
