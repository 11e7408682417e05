"""U-Retrieval on its own: the descent through the tag tree, the scope it gives
local search, and the bottom-up refinement's bound."""

from __future__ import annotations

import pytest

from medkg.config import RetrievalConfig
from medkg.retrieval.uretrieval import query_tags, u_retrieve
from medkg.workspace import Workspace

pytestmark = pytest.mark.slow
QUESTION = "What are the side effects of lisinopril?"


def _run(ws: Workspace, config: RetrievalConfig):  # type: ignore[no-untyped-def]
    tree = ws.parts.tree()
    assert tree is not None, "the build made a tag tree"
    return tree, u_retrieve(QUESTION, ws.retriever(), tree, ws.embedder, config)


def test_descent_is_top_down_within_the_beam(small_ws: Workspace) -> None:
    config = RetrievalConfig(tree_beam=2)
    tree, answer = _run(small_ws, config)
    path = answer.trace.tree_path
    assert path
    levels = [step.level for step in path]
    assert levels == sorted(levels, reverse=True)  # from the top down
    for step in path:
        assert 1 <= len(step.nodes) <= config.tree_beam
        assert all(n.id in tree.nodes and n.score >= n.similarity for n in step.nodes)
    assert answer.mode == "u-retrieval" and answer.citations


def test_scope_and_refinement_respect_max_scope(small_ws: Workspace) -> None:
    config = RetrievalConfig(tree_beam=1, max_scope=3)
    _tree, answer = _run(small_ws, config)
    scope, path = answer.trace.scope_chunks, answer.trace.tree_path
    assert scope is not None and path
    chosen = sum(n.chunks for n in path[-1].nodes)  # the chunks under the chosen nodes
    steps = answer.trace.refinement or []
    assert scope == chosen + sum(step.added_chunks for step in steps)
    for step in steps:
        if step.added_chunks:
            assert step.shared_terms  # the scope widens only on shared terms
    assert scope <= max(config.max_scope, chosen)  # and never past max_scope


def test_question_tags_come_from_the_question(small_ws: Workspace) -> None:
    tags = query_tags(small_ws.nlp()(QUESTION))
    assert tags.tags == {"medications_and_doses": ["lisinopril"]}
    _tree, answer = _run(small_ws, RetrievalConfig())
    assert answer.trace.query_tags == tags.tags
