"""Several chunks per LLM call: the prompt's instructions and few-shot example
are the same for every chunk, so a call per chunk pays them again and again
(on the demo corpus they were five sixths of the extraction prompt).

``pack`` groups consecutive chunks into calls of at most ``budget`` text tokens
(counted with the backend's tokenizer) and ``max_chunks`` chunks; a chunk longer
than the budget goes alone; a budget of 0 gives one call per chunk. The
grouping depends only on the texts, so ``build --dry-run`` counts the same
calls the build makes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from medkg.model import Chunk

C = TypeVar("C", bound=Chunk)

SEPARATOR = "\n\n"
MAX_CHUNKS = 8  # chunks per call at most (an answer's bounds grow with its pack)


def pack(chunks: Sequence[C], count_tokens: Callable[[str], int], budget: int,
         max_chunks: int) -> list[list[C]]:
    """Consecutive chunks, as many per call as fit the budget (one at least)."""
    packs: list[list[C]] = []
    current: list[C] = []
    used = 0
    for chunk in chunks:
        tokens = count_tokens(chunk.text)
        if current and (used + tokens > budget or len(current) >= max_chunks):
            packs.append(current)
            current, used = [], 0
        current.append(chunk)
        used += tokens
    if current:
        packs.append(current)
    return packs


def joined(chunks: Sequence[Chunk]) -> str:
    """The texts of a pack as one text, in order (entities are then found in each)."""
    return SEPARATOR.join(c.text for c in chunks)


def numbered(chunks: Sequence[Chunk]) -> str:
    """The texts of a pack as numbered passages, ``[1] ...``, for an answer per passage."""
    return SEPARATOR.join(f"[{i}] {c.text}" for i, c in enumerate(chunks, 1))
