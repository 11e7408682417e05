"""Any OpenAI-compatible chat endpoint: OpenAI, Azure OpenAI, vLLM, Ollama, the
llama.cpp server.

Structured output asks for ``response_format = json_schema`` first; a server
that refuses it (an HTTP error naming the response format: llama.cpp's server
answers 500) is asked for JSON mode with the schema attached (llama.cpp and
others compile it to a grammar), then plain JSON mode, then plain text; the
client validates and repairs whatever comes. The
``openai`` package retries 429, 5xx and dropped connections with exponential
backoff (``llm.max_retries``); a semaphore caps calls in flight
(``llm.concurrency``).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from medkg.config import LLMConfig
from medkg.errors import ConfigError, LLMError, LLMUnavailableError
from medkg.llm.port import Completion, GenerationParams, Message, Usage, estimate_tokens

_MODES = ("json_schema", "json_object+schema", "json_object", "none")


class OpenAIBackend:
    name = "openai"
    constrained = False

    def __init__(self, cfg: LLMConfig, *, response_format: str = "json_schema",
                 api_key: str | None = None, use_proxy: bool = True) -> None:
        """``response_format``: the first structured-output mode to ask for (one of
        ``json_schema``, ``json_object+schema``, ``json_object``, ``none``);
        ``api_key``: use this key instead of reading ``llm.api_key_env``;
        ``use_proxy=False``: ignore HTTP(S)_PROXY (for a server on loopback)."""
        import openai

        if not cfg.model:
            raise ConfigError("llm.model is empty", hint="name the model: --llm openai:MODEL")
        if response_format not in _MODES:
            raise ConfigError(f"unknown response format {response_format!r}",
                              hint=f"one of {', '.join(_MODES)}")
        key = api_key if api_key is not None else os.environ.get(cfg.api_key_env, "")
        if not key and not cfg.base_url:
            raise ConfigError(f"no API key: {cfg.api_key_env} is not set",
                              hint=f"export {cfg.api_key_env}=... or set llm.base_url to a "
                              "local server that needs none")
        self.model = cfg.model
        self._openai = openai
        http = None if use_proxy else openai.DefaultHttpxClient(trust_env=False)
        self._client = openai.OpenAI(base_url=cfg.base_url or None, api_key=key or "unused",
                                     timeout=cfg.timeout_s, max_retries=cfg.max_retries,
                                     http_client=http)
        self._slots = threading.BoundedSemaphore(cfg.concurrency)
        self._mode = _MODES.index(response_format)  # moves on when the server refuses one
        self.base_url = cfg.base_url or "https://api.openai.com/v1"

    def _response_format(self, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is None or _MODES[self._mode] == "none":
            return None
        if _MODES[self._mode] == "json_object+schema":
            return {"type": "json_object", "schema": schema}
        if _MODES[self._mode] == "json_object":
            return {"type": "json_object"}
        return {"type": "json_schema",
                "json_schema": {"name": str(schema.get("title") or "answer"), "schema": schema}}

    def complete(self, messages: list[Message], schema: dict[str, Any] | None,
                 params: GenerationParams) -> Completion:
        openai = self._openai
        while True:
            response_format = self._response_format(schema)
            extra: dict[str, Any] = {"response_format": response_format} if response_format else {}
            try:
                with self._slots:
                    response: Any = self._client.chat.completions.create(
                        model=self.model, messages=[m.model_dump() for m in messages],  # type: ignore[misc]
                        temperature=params.temperature, max_tokens=params.max_tokens,
                        seed=params.seed, stream=False, **extra)
            except openai.APIStatusError as exc:
                if response_format and "response_format" in str(exc).lower() \
                        and self._mode < len(_MODES) - 1:
                    self._mode += 1  # this server does not take that format: ask for less
                    continue
                if isinstance(exc, openai.AuthenticationError):
                    raise LLMUnavailableError(
                        f"the endpoint refused the API key: {exc}") from exc
                if isinstance(exc, openai.BadRequestError):
                    raise LLMError(f"the endpoint refused the request: {exc}") from exc
                raise LLMUnavailableError(
                    f"the endpoint answered HTTP {exc.status_code} after retries: {exc}") from exc
            except (openai.APIConnectionError, openai.APITimeoutError) as exc:
                raise LLMUnavailableError(
                    f"cannot reach the LLM endpoint {self.base_url}: {exc}",
                    hint="is the server running? check llm.base_url and llm.timeout_s") from exc
            except (openai.APIError, ValueError) as exc:  # a body that is not a completion
                raise LLMUnavailableError(
                    f"the endpoint {self.base_url} did not answer with a chat completion: "
                    f"{exc}", hint="is llm.base_url an OpenAI-compatible /v1 endpoint?") from exc
            break
        if not getattr(response, "choices", None):
            raise LLMUnavailableError(
                f"the endpoint {self.base_url} did not answer with a chat completion "
                f"(got {str(response)[:120]!r})",
                hint="is llm.base_url an OpenAI-compatible /v1 endpoint?")
        choice = response.choices[0]
        usage = response.usage
        return Completion(
            text=choice.message.content or "", model=response.model or self.model,
            finish_reason=choice.finish_reason,
            usage=Usage(prompt_tokens=usage.prompt_tokens if usage else 0,
                        completion_tokens=usage.completion_tokens if usage else 0))

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def close(self) -> None:
        self._client.close()
