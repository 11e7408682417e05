"""Fusing ranked candidate lists: weighted reciprocal-rank fusion.

Each source (lexical BM25, dense chunk vectors, the graph around the
question's entities, the tag tree's chosen groups) ranks chunks its own way,
on scores that cannot be compared; RRF uses ranks only:
``score(c) = sum_s w_s / (k + rank_s(c))`` (Cormack et al., 2009). A source
with weight 0 is ignored; a chunk one source does not rank gets nothing from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from medkg.retrieval.trace import Candidate, SourceRank

RRF_K = 60


def rrf(rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float],
        k: int = RRF_K, limit: int | None = None) -> list[tuple[str, float]]:
    """The fused ranking of every id any weighted source ranks, best first (ties
    by first appearance, so the result is deterministic)."""
    scores: dict[str, float] = {}
    for source, ranked in rankings.items():
        weight = weights.get(source, 0.0)
        if weight <= 0:
            continue
        for rank, item in enumerate(dict.fromkeys(ranked), start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = sorted(scores.items(), key=lambda kv: -kv[1])
    return order[:limit] if limit is not None else order


def candidates(order: Sequence[str], scored: Mapping[str, float],
               rankings: Mapping[str, Sequence[str]],
               scores: Mapping[str, Mapping[str, float]]) -> list[Candidate]:
    """The chunks of ``order`` with their score in the ranking (``scored``) and, for
    each source of ``rankings`` that ranks them, its rank and (from ``scores``,
    where the source has one) its own score."""
    ranks = {source: {item: rank for rank, item in enumerate(dict.fromkeys(ranked), start=1)}
             for source, ranked in rankings.items()}
    return [Candidate(chunk_id=item, score=scored.get(item), sources={
        source: SourceRank(rank=by_item[item], score=scores.get(source, {}).get(item))
        for source, by_item in ranks.items() if item in by_item}) for item in order]
