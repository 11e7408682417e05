"""The LLM client every stage uses: cache, validation, one repair round, ledger.

``structured(stage, messages, Output)`` returns a validated ``Output`` or
raises :class:`LLMOutputError` with the raw answer and the reason; stages catch
that and record a failed item, so one bad answer never stops a build. Every
call, cached or not, lands in the ledger; only usable answers are cached, so a
call that failed is asked again on the next run.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from medkg.config import LLMConfig
from medkg.errors import ConfigError, LLMOutputError, LLMUnavailableError
from medkg.llm.ledger import CallRecord, Ledger, cache_key
from medkg.llm.port import ChatBackend, Completion, GenerationParams, Message, Usage

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_json(text: str, output: type[T]) -> T:
    """The answer as ``output``: bare JSON, or JSON in a code fence or amid prose."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    if not body.startswith("{"):
        start, end = body.find("{"), body.rfind("}")
        if start == -1 or end <= start:
            raise ValueError("the answer contains no JSON object")
        body = body[start : end + 1]
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc.msg} at character {exc.pos}") from exc
    try:
        return output.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}"
                             for e in exc.errors()[:5])
        raise ValueError(f"does not follow the schema: {problems}") from exc


def schema_of(output: type[BaseModel]) -> dict[str, Any]:
    return output.model_json_schema()


class LLM:
    """A chat backend with the cache, the ledger and validated structured output."""

    def __init__(self, backend: ChatBackend, ledger: Ledger, params: GenerationParams,
                 repair_rounds: int = 1) -> None:
        self.backend = backend
        self.ledger = ledger
        self.params = params
        self.repair_rounds = repair_rounds

    def _complete(self, messages: list[Message], schema: dict[str, Any] | None
                  ) -> tuple[Completion, bool, str]:
        """The completion, whether it came from the cache, and its cache key. Nothing
        is cached here: only answers that turned out usable are (see ``_keep``)."""
        key = cache_key(self.backend.name, self.backend.model, messages, schema, self.params)
        hit = self.ledger.cached(key)
        if hit is not None:
            return hit, True, key
        return self.backend.complete(messages, schema, self.params), False, key

    def _keep(self, answers: list[tuple[str, Completion, bool]]) -> None:
        """Cache the answers of a call that ended usable (a repaired one with the
        answer that needed the repair, so a rerun replays the same chain)."""
        for key, completion, cached in answers:
            if not cached:
                self.ledger.store(key, completion)

    def _call(self, stage: str, messages: list[Message], schema: dict[str, Any] | None,
              t0: float) -> tuple[Completion, bool, str]:
        """One completion; a backend that is gone (a dead local model, an unreachable
        endpoint) is recorded in the ledger, as a failed call and a failed item,
        before the error goes up to stop the stage."""
        try:
            return self._complete(messages, schema)
        except LLMUnavailableError as exc:
            self._record(stage, False, Usage(), first_parsed=False, repaired=False, ok=False,
                         seconds=time.perf_counter() - t0, error=exc.message)
            self.ledger.fail(stage, f"backend:{self.backend.name}", exc.message)
            raise

    def close(self) -> None:
        self.backend.close()

    def structured(self, stage: str, messages: list[Message], output: type[T]) -> T:
        schema = schema_of(output)
        t0 = time.perf_counter()
        usage = Usage()
        cached_all = True
        attempt_messages = list(messages)
        error = ""
        answers: list[tuple[str, Completion, bool]] = []
        for attempt in range(self.repair_rounds + 1):
            completion, cached, key = self._call(stage, attempt_messages, schema, t0)
            answers.append((key, completion, cached))
            cached_all = cached_all and cached
            usage = Usage(
                prompt_tokens=usage.prompt_tokens + completion.usage.prompt_tokens,
                completion_tokens=usage.completion_tokens + completion.usage.completion_tokens)
            try:
                value = parse_json(completion.text, output)
            except ValueError as exc:
                error = str(exc)
                attempt_messages = [*messages, Message(role="assistant", content=completion.text),
                                    Message(role="user", content=_repair_request(error))]
                continue
            self._keep(answers)
            self._record(stage, cached_all, usage, first_parsed=attempt == 0,
                         repaired=attempt > 0, ok=True, seconds=time.perf_counter() - t0)
            return value
        self._record(stage, cached_all, usage, first_parsed=False, repaired=False, ok=False,
                     seconds=time.perf_counter() - t0, error=error)
        raise LLMOutputError(f"{stage}: the model's answer stayed unusable after "
                             f"{self.repair_rounds} repair round(s): {error}",
                             raw=completion.text)

    def text(self, stage: str, messages: list[Message]) -> str:
        t0 = time.perf_counter()
        completion, cached, key = self._call(stage, messages, None, t0)
        ok = bool(completion.text.strip())
        if ok:
            self._keep([(key, completion, cached)])
        self._record(stage, cached, completion.usage, first_parsed=ok, repaired=False, ok=ok,
                     seconds=time.perf_counter() - t0, error="" if ok else "empty answer")
        if not ok:
            raise LLMOutputError(f"{stage}: the model gave an empty answer")
        return completion.text

    def _record(self, stage: str, cached: bool, usage: Usage, *, first_parsed: bool,
                repaired: bool, ok: bool, seconds: float, error: str = "") -> None:
        self.ledger.record(CallRecord(
            stage=stage, backend=self.backend.name, model=self.backend.model, cached=cached,
            usage=usage, first_parsed=first_parsed, repaired=repaired, ok=ok, error=error,
            seconds=round(seconds, 3)))


def _repair_request(error: str) -> str:
    return (f"Your answer could not be used: {error}. Reply again with only one JSON object "
            "that follows the schema: no prose, no code fence.")


def parse_llm_option(option: str) -> tuple[str, str]:
    """``openai:MODEL`` or ``gguf:PATH`` -> (backend, model)."""
    backend, sep, model = option.partition(":")
    if not sep or backend not in ("openai", "gguf") or not model:
        raise ConfigError(f"--llm {option!r} is not BACKEND:MODEL",
                          hint="use openai:MODEL (any OpenAI-compatible endpoint; set "
                          "llm.base_url for a local server) or gguf:PATH/TO/model.gguf")
    return backend, model


def open_backend(cfg: LLMConfig) -> ChatBackend:
    """The backend the settings name."""
    if cfg.backend == "openai":
        from medkg.llm.openai_backend import OpenAIBackend

        return OpenAIBackend(cfg)
    if cfg.backend == "gguf":
        from medkg.llm.gguf_backend import GGUFBackend

        return GGUFBackend(cfg)
    raise ConfigError("no LLM is configured (llm.backend = 'none')",
                      hint="pass --llm openai:MODEL or --llm gguf:PATH, or set [llm] in "
                      "medkg.toml")
