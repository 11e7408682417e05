"""Both backends against a real model: the openai backend through llama-cpp-python's
OpenAI-compatible server on loopback, the gguf backend directly. The model is tiny;
these tests check the guarantees (valid schema, cache hits, ledger counts, clear
errors), not medical quality."""

from __future__ import annotations

from pathlib import Path

import pytest

from medkg.config import LLMConfig
from medkg.errors import LLMUnavailableError
from medkg.llm.client import LLM
from medkg.llm.gguf_backend import GGUFBackend
from medkg.llm.ledger import Ledger
from medkg.llm.openai_backend import OpenAIBackend
from medkg.llm.port import GenerationParams
from medkg.llm.prompts import load_prompt
from medkg.llm.schemas import ExtractionAnswer, tag_summaries
from tests.llm.conftest import Server

TEXTS = [
    "Metformin is first-line therapy for type 2 diabetes. Nausea is a common side effect.",
    "Lisinopril lowers blood pressure; angioedema is a rare adverse effect.",
    "The patient denies chest pain. Aspirin 81 mg daily was continued.",
]
PARAMS = GenerationParams(max_tokens=384)


def test_openai_backend_through_the_local_server(server: Server, tmp_path: Path) -> None:
    cfg = LLMConfig(backend="openai", model="smollm2", base_url=server.url, timeout_s=120,
                    max_retries=0)
    ledger = Ledger(tmp_path / "llm.sqlite")
    llm = LLM(OpenAIBackend(cfg), ledger, PARAMS)
    prompt = load_prompt("extract_entities")
    for text in TEXTS:
        answer = llm.structured("extract", prompt.render(text=text), ExtractionAnswer)
        assert isinstance(answer, ExtractionAnswer)  # parsed and validated against the schema
    for text in TEXTS:  # the same calls again: all from the cache
        llm.structured("extract", prompt.render(text=text), ExtractionAnswer)
    [s] = ledger.summary()
    assert (s.calls, s.cache_hits, s.failed) == (6, 3, 0)
    assert s.prompt_tokens > 0 and s.completion_tokens > 0
    print(f"\nopenai backend via llama_cpp.server: {s.model_dump()}")


def test_openai_backend_reports_a_stopped_server(model_path: Path, tmp_path: Path) -> None:
    srv = Server(model_path)
    srv.start()
    cfg = LLMConfig(backend="openai", model="smollm2", base_url=srv.url, timeout_s=30,
                    max_retries=1)
    llm = LLM(OpenAIBackend(cfg), Ledger(tmp_path / "llm.sqlite"), PARAMS)
    srv.stop()
    with pytest.raises(LLMUnavailableError, match="cannot reach the LLM endpoint"):
        llm.structured("extract", load_prompt("tag_summary").render(text="[1] Fever."),
                       tag_summaries(1))


def test_gguf_backend_is_grammar_constrained(model_path: Path, tmp_path: Path) -> None:
    backend = GGUFBackend(LLMConfig(backend="gguf", model=str(model_path), n_ctx=4096))
    ledger = Ledger(tmp_path / "llm.sqlite")
    llm = LLM(backend, ledger, PARAMS)
    prompt = load_prompt("tag_summary")
    try:
        for text in TEXTS:
            llm.structured("tags", prompt.render(text=f"[1] {text}"), tag_summaries(1))
        assert backend.count_tokens("Metformin is first-line therapy.") > 3
    finally:
        llm.close()
    [s] = ledger.summary()
    assert s.calls == 3 and s.failed == 0
    assert s.first_parsed == 3  # the grammar makes every complete answer parse
    print(f"\ngguf backend: {s.model_dump()}")


def test_missing_gguf_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(LLMUnavailableError, match="no GGUF model file"):
        GGUFBackend(LLMConfig(backend="gguf", model=str(tmp_path / "none.gguf")))
