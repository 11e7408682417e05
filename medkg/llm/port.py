"""The chat-model port: what every backend implements.

A backend turns messages (and optionally a JSON schema the answer must follow)
into a completion with token counts. Everything else (caching, validation,
repair, the ledger) lives in :class:`medkg.llm.client.LLM`, so a new backend
is one small class.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel


class Message(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Completion(BaseModel):
    text: str
    usage: Usage
    model: str
    finish_reason: str | None = None


class GenerationParams(BaseModel):
    temperature: float = 0.0
    max_tokens: int = 1024
    seed: int = 13


class ChatBackend(Protocol):
    """``name`` and ``model`` identify the backend in cache keys and the ledger;
    ``constrained`` says whether a schema is enforced while decoding (a grammar)
    rather than only requested."""

    name: str
    model: str
    constrained: bool

    def complete(self, messages: list[Message], schema: dict[str, Any] | None,
                 params: GenerationParams) -> Completion: ...

    def count_tokens(self, text: str) -> int: ...

    def close(self) -> None:
        """Release what the backend holds (connections, a model process)."""


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (about four characters a token in English)."""
    return max(1, (len(text) + 3) // 4)
