"""Estimate: what ``build`` would send to the chat model, before any call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from medkg.model import Chunk
from medkg.pipeline.marks import documents_to_extract

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
    # per stage ("extract", "summarise"): [calls, prompt tokens, completion tokens]
    stages: dict[str, list[int]] = field(default_factory=dict)


def estimate_build(parts: Components) -> BuildEstimate:
    """The calls a build would make: extraction (LLM extraction engine) and tag
    summaries (LLM summary engine) over the new chunks, packed into calls the way
    the build packs them (``llm.pack_tokens``); their prompt tokens counted with the
    backend's tokenizer where it has one, output tokens estimated from each
    prompt's few-shot example, and the cost at the configured prices. The multi
    extraction profile counts its four prompts per pack, each later one with the
    expected answers of the ones before as input. The SAC-KG
    loop's calls (``--levels``) depend on what it finds and are not counted."""
    from medkg.extraction.llm import expected_output_tokens
    from medkg.llm.packing import MAX_CHUNKS, joined, numbered, pack
    from medkg.llm.prompts import load_prompt
    from medkg.pipeline.extract import document_groups

    cfg = parts.settings.llm
    estimate = BuildEstimate()
    extract = parts.settings.extraction.engine == "llm"
    summarise = parts.settings.retrieval.summary_engine == "llm"
    if not extract and not summarise:
        return estimate
    backend = parts.llm().backend  # counts tokens; makes no call

    def count(prompt_name: str, groups: list[list[Chunk]], render: Callable[[list[Chunk]], str]
              ) -> None:
        for group in groups:
            text = render(group)
            call(prompt_name, backend.count_tokens(text), text=text)

    stage = "extract"

    def call(prompt_name: str, input_tokens: int, **values: str) -> int:
        """One call of a prompt whose variable input is ``input_tokens`` long (the text
        in ``values``, plus what earlier steps answered); its expected output tokens,
        at the prompt's example's answer-to-input ratio."""
        prompt = load_prompt(prompt_name)
        example_text, example_answer = prompt.examples[0]
        ratio = backend.count_tokens(example_answer) / backend.count_tokens(example_text)
        # What earlier steps answer is not known yet: those slots render empty and are
        # counted in ``input_tokens`` instead.
        rendered = prompt.render(**{v: values.get(v, "") for v in prompt.user.get_identifiers()})
        out = expected_output_tokens(input_tokens, ratio, cfg.max_tokens)
        sent = (sum(backend.count_tokens(m.content) + 4 for m in rendered)
                + input_tokens - backend.count_tokens(values.get("text", "")))
        estimate.calls += 1
        estimate.prompt_tokens += sent
        estimate.completion_tokens += out
        tally = estimate.stages.setdefault(stage, [0, 0, 0])
        tally[0], tally[1], tally[2] = tally[0] + 1, tally[1] + sent, tally[2] + out
        return out

    def multi(group: list[Chunk]) -> None:
        """KGCaRe's four prompts: each later one reads the text and what the earlier
        ones answered (counted at their expected length)."""
        text = joined(group)
        n = backend.count_tokens(text)
        context = call("understand_context", n, text=text)
        stated = call("expand_conditions", n + context, text=text)
        call("refine_triples", n + stated, text=text)
        call("normalise_entities", context // 3)

    from medkg.pipeline.reextract import current_mark

    todo = documents_to_extract(parts.store, current_mark(parts))  # new and stale ones
    estimate.documents = len(todo)
    packs = [p for group in document_groups(todo, parts.settings.extraction.engine)
             for p in pack([c for _layer, doc_id in group for c in parts.store.chunks(doc_id)],
                           backend.count_tokens, cfg.pack_tokens, MAX_CHUNKS)]
    if extract and parts.settings.extraction.llm_profile == "multi":
        for group in packs:
            multi(group)
    elif extract:
        count("extract_entities", packs, joined)
    if summarise:  # the summary stage takes all new chunks in one sequence
        stage = "summarise"
        chunks = [c for _layer, doc_id in todo for c in parts.store.chunks(doc_id)]
        count("tag_summary", pack(chunks, backend.count_tokens, cfg.pack_tokens, MAX_CHUNKS),
              numbered)
    estimate.cost_usd = round((estimate.prompt_tokens * cfg.price_in_per_mtok
                               + estimate.completion_tokens * cfg.price_out_per_mtok) / 1e6, 6)
    return estimate

