"""The local retriever on its own: modes, scope, citations, errors."""

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
    assert any(f.head == "lisinopril" for f in answer.facts)
    assert answer.trace.triples and answer.trace.focus_entities
    assert answer.trace.retrieved_chunks
    assert any(d.term == "lisinopril" for d in answer.definitions)


def test_vector_mode_is_chunks_alone(small_ws: Workspace) -> None:
    answer = small_ws.retriever().ask(QUESTION, mode="vector")
    _quotes_hold(small_ws, answer)
    assert answer.facts == [] and answer.trace.triples == []
    assert answer.trace.tree_path is None  # no tree in this mode


def test_scope_confines_the_chunk_search(small_ws: Workspace) -> None:
    retriever = small_ws.retriever()
    ranked = retriever.ask(QUESTION, mode="vector").trace.retrieved_chunks
    scope = set(ranked[-2:])  # the two weakest chunks
    scoped = retriever.ask(QUESTION, mode="u-retrieval", scope=scope)
    used = set(scoped.trace.triples)
    evidence = {ev.chunk_id for t in small_ws.store.triples() if t.id in used
                for ev in t.evidence}
    # Chunks come from the scope, or are the evidence of a triple the graph led to.
    assert set(scoped.trace.retrieved_chunks) <= scope | evidence
    assert set(scoped.trace.retrieved_chunks) & scope


def test_an_empty_question_is_an_error(small_ws: Workspace) -> None:
    with pytest.raises(RetrievalError, match="the question is empty"):
        small_ws.retriever().ask("   ")
