"""The traverse mode's LLM guide: the chat model prunes the triples of each hop
(``prune_triples``) and picks clue entities (``clue_entities``).

The builtin guide ranks first, so the model reads at most ``SHOWN`` numbered
triples or entities per call (and the builtin guide ranks the kept triples'
evidence), never a hub's hundreds. The model's picks score
1.0 down to 0.5 in its order; the rest 0 (pruned). An answer that stays
unusable after the client's repair round is recorded in the ledger's failures
and that hop keeps the builtin ranking, so a weak model never empties a search.
"""

from __future__ import annotations

from collections.abc import Sequence

from medkg.errors import LLMOutputError
from medkg.linking.embeddings import Matrix
from medkg.llm.client import LLM
from medkg.llm.prompts import load_prompt
from medkg.llm.schemas import Picks
from medkg.model import EntityBrief
from medkg.retrieval.guide import BuiltinGuide
from medkg.retrieval.traverse import Candidate, TraversalGraph, triple_text

SHOWN = 30


class LLMGuide:
    name = "llm"

    def __init__(self, llm: LLM, builtin: BuiltinGuide) -> None:
        self.llm = llm
        self.builtin = builtin

    def score(self, question: str, qvec: Matrix, candidates: Sequence[Candidate],
              entities: dict[str, EntityBrief]) -> list[float]:
        first = self.builtin.score(question, qvec, candidates, entities)
        shown = sorted(range(len(candidates)), key=lambda i: -first[i])[:SHOWN]
        picks = self._pick("prune_triples", question,
                           [triple_text(candidates[i].triple, entities) for i in shown])
        if picks is None:
            return first
        scores = [0.0] * len(candidates)
        for rank, k in enumerate(picks):
            scores[shown[k]] = 1.0 - 0.5 * rank / max(1, len(picks))
        return scores

    def evidence(self, question: str, qvec: Matrix, candidates: Sequence[Candidate],
                 entities: dict[str, EntityBrief]) -> list[float]:
        return self.builtin.evidence(question, qvec, candidates, entities)

    def clues(self, question: str, qvec: Matrix, candidates: Sequence[EntityBrief],
              graph: TraversalGraph, n: int) -> list[str]:
        ranked = self.builtin.clues(question, qvec, candidates, graph, SHOWN)
        if not ranked:
            return []
        by_id = {e.id: e for e in candidates}
        picks = self._pick("clue_entities", question,
                           [f"{by_id[e].name} ({by_id[e].type})" for e in ranked])
        if picks is None:
            return ranked[:n]
        return [ranked[k] for k in picks][:n]

    def _pick(self, stage: str, question: str, items: list[str]) -> list[int] | None:
        """The items (0-based) the model picks, best first; ``None`` when its answer
        stays unusable (recorded in the ledger's failures)."""
        listing = "\n".join(f"{n}. {item}" for n, item in enumerate(items, start=1))
        values = {"triples" if stage == "prune_triples" else "entities": listing}
        try:
            answer = self.llm.structured(
                stage, load_prompt(stage).render(question=question, **values), Picks)
        except LLMOutputError as exc:
            self.llm.ledger.fail(stage, question[:200], str(exc))
            return None
        return [n - 1 for n in dict.fromkeys(answer.picks) if n <= len(items)]
