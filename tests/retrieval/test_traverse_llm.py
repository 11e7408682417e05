"""The LLM guide's plumbing: the model's numbers mapped back to triples and
entities, numbers out of range ignored, an unusable answer recorded and the
builtin ranking kept. (With the real local model: tests/llm/test_llm_profiles.py.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from medkg.errors import LLMOutputError
from medkg.llm.schemas import Picks
from medkg.model import EntityBrief, Layer, Predicate, Qualifiers, Triple
from medkg.retrieval.traverse import Candidate
from medkg.retrieval.traverse_llm import LLMGuide


class Ledger:
    def __init__(self) -> None:
        self.failed: list[tuple[str, str, str]] = []

    def fail(self, stage: str, item: str, reason: str) -> None:
        self.failed.append((stage, item, reason))


class ScriptedLLM:
    """Answers each call with the next scripted value (an answer or an error)."""

    def __init__(self, *answers: Picks | LLMOutputError) -> None:
        self.answers = list(answers)
        self.ledger = Ledger()
        self.prompts: list[str] = []

    def structured(self, stage: str, messages: Sequence[Any], output: type) -> Picks:
        self.prompts.append(messages[-1].content)
        answer = self.answers.pop(0)
        if isinstance(answer, LLMOutputError):
            raise answer
        return answer


class Builtin:
    name = "builtin"

    def score(self, question: str, qvec: Any, candidates: Sequence[Candidate],
              entities: dict[str, EntityBrief]) -> list[float]:
        return [0.9, 0.5, 0.7][: len(candidates)]

    def clues(self, question: str, qvec: Any, candidates: Sequence[EntityBrief],
              graph: Any, n: int) -> list[str]:
        return [e.id for e in candidates]


def _candidate(tail: str) -> Candidate:
    t = Triple(id=f"t-{tail}", layer=Layer.LITERATURE, head="drug",
               predicate=Predicate.TREATS, tail=tail, qualifiers=Qualifiers(), confidence=0.8)
    return Candidate(t, "drug", tail, None)


ENTITIES = {e: EntityBrief(id=e, layer=Layer.LITERATURE, name=e, type="DISO")
            for e in ("drug", "a", "b", "c")}
CANDIDATES = [_candidate("a"), _candidate("b"), _candidate("c")]
QVEC = np.zeros(1, dtype=np.float32)


def test_the_models_picks_become_scores_in_its_order() -> None:
    llm = ScriptedLLM(Picks(picks=[2, 2, 9, 1]))  # a repeat and a number out of range
    guide = LLMGuide(llm, Builtin())  # type: ignore[arg-type]
    scores = guide.score("q", QVEC, CANDIDATES, ENTITIES)
    # shown best-first by the builtin guide: a (0.9), c (0.7), b (0.5); picks 2, 1 = c, a
    assert "1. drug treats a\n2. drug treats c\n3. drug treats b" in llm.prompts[0]
    assert scores == [0.75, 0.0, 1.0]


def test_an_unusable_answer_keeps_the_builtin_ranking_and_is_recorded() -> None:
    llm = ScriptedLLM(LLMOutputError("not JSON"), LLMOutputError("not JSON"))
    guide = LLMGuide(llm, Builtin())  # type: ignore[arg-type]
    assert guide.score("q", QVEC, CANDIDATES, ENTITIES) == [0.9, 0.5, 0.7]
    pool = [ENTITIES["a"], ENTITIES["b"]]
    assert guide.clues("q", QVEC, pool, None, 1) == ["a"]  # type: ignore[arg-type]
    assert [f[0] for f in llm.ledger.failed] == ["prune_triples", "clue_entities"]


def test_clue_entities_are_the_models_choice() -> None:
    llm = ScriptedLLM(Picks(picks=[2]))
    guide = LLMGuide(llm, Builtin())  # type: ignore[arg-type]
    pool = [ENTITIES["a"], ENTITIES["b"]]
    assert guide.clues("q", QVEC, pool, None, 3) == ["b"]  # type: ignore[arg-type]
    assert "2. b (DISO)" in llm.prompts[0]
