"""Fusing ranked candidate lists: weighted reciprocal-rank fusion.

Each source (lexical BM25, dense chunk vectors, the graph around the
question's entities, the tag tree's chosen groups) ranks chunks its own way,
on scores that cannot be compared; RRF uses ranks only:
``score(c) = sum_s w_s / (k + rank_s(c))`` (Cormack et al., 2009). A source
with weight 0 is ignored; a chunk one source does not rank gets nothing from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
