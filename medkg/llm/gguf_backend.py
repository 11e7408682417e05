"""A local GGUF model through llama-cpp-python, with grammar-constrained decoding.

With a schema, llama.cpp compiles it to a grammar and samples only tokens the
grammar allows, so a complete answer always parses. (An answer cut off by
``llm.max_tokens`` can still be incomplete; the client repairs or records it.)
One model instance is not thread-safe: calls are serialised.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from medkg.config import LLMConfig
from medkg.errors import LLMUnavailableError
from medkg.llm.port import Completion, GenerationParams, Message, Usage


class GGUFBackend:
    name = "gguf"
    constrained = True

    def __init__(self, cfg: LLMConfig) -> None:
        path = Path(cfg.model).expanduser()
        if not path.is_file():
            raise LLMUnavailableError(f"no GGUF model file at {path}",
                                      hint="pass --llm gguf:PATH/TO/model.gguf")
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise LLMUnavailableError(
                "llama-cpp-python is not installed",
                hint="pip install 'medkg[llm]' (builds llama.cpp; takes minutes)") from exc
        self.model = path.name
        try:
            self._llm = Llama(model_path=str(path), n_ctx=cfg.n_ctx, seed=cfg.seed,
                              n_threads=cfg.n_threads or None, verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise LLMUnavailableError(f"cannot load the GGUF model {path}: {exc}") from exc
        self._lock = threading.Lock()

    def complete(self, messages: list[Message], schema: dict[str, Any] | None,
                 params: GenerationParams) -> Completion:
        response_format = {"type": "json_object", "schema": schema} if schema else None
        with self._lock:
            out: Any = self._llm.create_chat_completion(
                messages=[m.model_dump() for m in messages],  # type: ignore[misc]
                response_format=response_format,  # type: ignore[arg-type]
                temperature=params.temperature, max_tokens=params.max_tokens, seed=params.seed)
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(text=choice["message"].get("content") or "", model=self.model,
                          finish_reason=choice.get("finish_reason"),
                          usage=Usage(prompt_tokens=usage.get("prompt_tokens", 0),
                                      completion_tokens=usage.get("completion_tokens", 0)))

    def count_tokens(self, text: str) -> int:
        with self._lock:
            return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False))
