"""The traverse mode's LLM guide: the chat model prunes the triples of each hop
(``prune_triples``) and picks clue entities (``clue_entities``).

The builtin guide ranks first, so the model reads at most ``SHOWN`` numbered
triples or entities per call, never a hub's hundreds. The model's picks score
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
from medkg.llm.schemas import ClueEntities, PrunedTriples
from medkg.model import EntityBrief
from medkg.retrieval.traverse import BuiltinGuide, Candidate, TraversalGraph, triple_text

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
        listing = "\n".join(f"{n}. {triple_text(candidates[i].triple, entities)}"
                            for n, i in enumerate(shown, start=1))
        try:
            answer = self.llm.structured(
                "prune_triples",
                load_prompt("prune_triples").render(question=question, triples=listing),
                PrunedTriples)
        except LLMOutputError as exc:
            self.llm.ledger.fail("prune_triples", question[:200], str(exc))
            return first
        picks = [shown[n - 1] for n in dict.fromkeys(answer.keep) if n <= len(shown)]
        scores = [0.0] * len(candidates)
        for rank, i in enumerate(picks):
            scores[i] = 1.0 - 0.5 * rank / max(1, len(picks))
        return scores

    def clues(self, question: str, qvec: Matrix, candidates: Sequence[EntityBrief],
              graph: TraversalGraph, n: int) -> list[str]:
        ranked = self.builtin.clues(question, qvec, candidates, graph, SHOWN)
        by_id = {e.id: e for e in candidates}
        listing = "\n".join(f"{k}. {by_id[e].name} ({by_id[e].type})"
                            for k, e in enumerate(ranked, start=1))
        if not ranked:
            return []
        try:
            answer = self.llm.structured(
                "clue_entities",
                load_prompt("clue_entities").render(question=question, entities=listing),
                ClueEntities)
        except LLMOutputError as exc:
            self.llm.ledger.fail("clue_entities", question[:200], str(exc))
            return ranked[:n]
        return [ranked[k - 1] for k in dict.fromkeys(answer.choose) if k <= len(ranked)][:n]
