"""Estimate: what ``build`` would send to the chat model, before any call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from medkg.pipeline.state import documents_to_extract

if TYPE_CHECKING:
    from medkg.components import Components


@dataclass
class BuildEstimate:
    """What a build would cost in LLM calls, before any call is made."""

    documents: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


def estimate_build(parts: Components) -> BuildEstimate:
    """One extraction call (LLM extraction engine) and one tag-summary call (LLM
    summary engine) per new chunk, their prompt tokens counted with the backend's
    tokenizer where it has one, output tokens estimated from each prompt's
    few-shot example, and the cost at the configured prices. The SAC-KG loop's
    calls (``--levels``) depend on what it finds and are not counted."""
    from medkg.construction.llm_extraction import expected_output_tokens
    from medkg.llm.prompts import load_prompt

    cfg = parts.settings.llm
    names = [name for name, engine in (("extract_entities", parts.settings.extraction.engine),
                                       ("tag_summary", parts.settings.retrieval.summary_engine))
             if engine == "llm"]
    estimate = BuildEstimate()
    if not names:
        return estimate
    backend = parts.llm().backend  # counts tokens; makes no call
    prompts = []
    for name in names:
        prompt = load_prompt(name)
        example_text, example_answer = prompt.examples[0]
        prompts.append((prompt, backend.count_tokens(example_answer)
                        / backend.count_tokens(example_text)))
    for _layer, doc_id in documents_to_extract(parts.store):
        estimate.documents += 1
        for chunk in parts.store.chunks(doc_id):
            for prompt, ratio in prompts:
                messages = prompt.render(text=chunk.text)
                estimate.calls += 1
                estimate.prompt_tokens += sum(backend.count_tokens(m.content) + 4
                                              for m in messages)
                estimate.completion_tokens += expected_output_tokens(
                    backend.count_tokens(chunk.text), ratio, cfg.max_tokens)
    estimate.cost_usd = round((estimate.prompt_tokens * cfg.price_in_per_mtok
                               + estimate.completion_tokens * cfg.price_out_per_mtok) / 1e6, 6)
    return estimate
