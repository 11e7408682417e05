"""The client's plumbing (cache, repair, ledger) with a scripted backend; the real
backends are tested against a real model in test_local_model.py."""

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from medkg.errors import ConfigError, LLMOutputError
from medkg.llm.client import LLM, parse_json, parse_llm_option
from medkg.llm.ledger import Ledger
from medkg.llm.port import Completion, GenerationParams, Message, Usage
from medkg.llm.prompts import STAGES, load_prompt


class Pair(BaseModel):
    a: str
    b: int


class Scripted:
    """Answers from a list, in order; counts calls. Plumbing only."""

    name = "scripted"
    model = "script"
    constrained = False

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.calls = 0

    def complete(self, messages: list[Message], schema: dict[str, Any] | None,
                 params: GenerationParams) -> Completion:
        text = self.answers[self.calls]
        self.calls += 1
        return Completion(text=text, model=self.model,
                          usage=Usage(prompt_tokens=10, completion_tokens=5))

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def close(self) -> None:
        return None


def messages(text: str = "hi") -> list[Message]:
    return [Message(role="user", content=text)]


def test_parse_json_accepts_fences_and_prose_and_names_the_problem() -> None:
    assert parse_json('```json\n{"a": "x", "b": 1}\n```', Pair) == Pair(a="x", b=1)
    assert parse_json('Sure: {"a": "x", "b": 2} hope this helps', Pair).b == 2
    with pytest.raises(ValueError, match="no JSON object"):
        parse_json("I cannot help", Pair)
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_json('{"a": "x", "b": }', Pair)
    with pytest.raises(ValueError, match="b: Input should be a valid integer"):
        parse_json('{"a": "x", "b": "many"}', Pair)


def test_cache_repair_and_ledger(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "llm.sqlite")
    backend = Scripted(['{"a": "x"}', '{"a": "x", "b": 3}'])
    llm = LLM(backend, ledger, GenerationParams())
    assert llm.structured("extract", messages(), Pair) == Pair(a="x", b=3)  # repaired
    assert llm.structured("extract", messages(), Pair) == Pair(a="x", b=3)  # both from cache
    assert backend.calls == 2
    [summary] = ledger.summary(price_in_per_mtok=1.0, price_out_per_mtok=2.0)
    assert (summary.calls, summary.cache_hits, summary.repaired, summary.first_parsed) == (
        2, 1, 2, 0)
    assert (summary.prompt_tokens, summary.completion_tokens) == (20, 10)  # hits cost nothing
    assert summary.cost_usd == pytest.approx((20 * 1.0 + 10 * 2.0) / 1e6)


def test_unusable_answer_raises_with_the_raw_text_and_is_recorded(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "llm.sqlite")
    llm = LLM(Scripted(["no", "still no"]), ledger, GenerationParams())
    with pytest.raises(LLMOutputError, match="unusable after 1 repair") as info:
        llm.structured("extract", messages(), Pair)
    assert info.value.raw == "still no"
    [summary] = ledger.summary()
    assert summary.failed == 1
    with pytest.raises(LLMOutputError, match="empty answer"):
        LLM(Scripted(["  "]), ledger, GenerationParams()).text("answer", messages("q"))


def test_defect_05_unusable_llm_answers_are_not_cached_for_good(tmp_path: Path) -> None:
    """A failed call is asked again once the endpoint answers properly; only the
    usable answer is cached."""
    ledger = Ledger(tmp_path / "llm.sqlite")
    with pytest.raises(LLMOutputError):
        LLM(Scripted(["no", "still no"]), ledger, GenerationParams()).structured(
            "extract", messages(), Pair)
    fixed = Scripted(['{"a": "x", "b": 1}'])
    assert LLM(fixed, ledger, GenerationParams()).structured(
        "extract", messages(), Pair) == Pair(a="x", b=1)
    assert fixed.calls == 1  # asked, not answered from a cached failure
    again = Scripted([])
    assert LLM(again, ledger, GenerationParams()).structured(
        "extract", messages(), Pair) == Pair(a="x", b=1)
    assert again.calls == 0  # the usable answer is cached


def test_defect_05_a_document_whose_llm_answer_failed_is_extracted_again(tmp_path: Path) -> None:
    """The document is not marked extracted while a chunk's answer stayed unusable;
    the next build asks again and finishes it."""
    from medkg.model import Layer
    from medkg.pipeline.marks import documents_to_extract
    from medkg.workspace import Workspace
    from tests.conftest import EXAMPLES, SEED_OBO

    good = ('{"entities": [{"name": "lisinopril", "type": "chemical"}], '
            '"relations": []}')
    with Workspace.create(tmp_path / "ws") as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([EXAMPLES / "user" / "note-02-cough-on-lisinopril.txt"], Layer.USER)
        ws.settings.extraction.engine = "llm"
        chunks = len(ws.store.chunks(ws.store.document_ids()[0]))
        ws.parts._llm = LLM(Scripted(["no", "no"] * chunks), ws.ledger, GenerationParams())
        first = ws.build()
        assert (first.documents, first.unfinished) == (0, 1)
        assert len(documents_to_extract(ws.store)) == 1
        ws.parts._llm = LLM(Scripted([good] * chunks), ws.ledger, GenerationParams())
        second = ws.build()
        assert (second.documents, second.unfinished) == (1, 0)
        assert documents_to_extract(ws.store) == []
        assert any(e.name == "lisinopril" for e in ws.store.entities(Layer.USER))


def test_llm_option_and_prompts() -> None:
    assert parse_llm_option("gguf:/m/x.gguf") == ("gguf", "/m/x.gguf")
    assert parse_llm_option("openai:gpt-4o-mini") == ("openai", "gpt-4o-mini")
    with pytest.raises(ConfigError, match="BACKEND:MODEL"):
        parse_llm_option("llama")
    for stage in STAGES:
        prompt = load_prompt(stage)
        assert prompt.version >= 1 and prompt.examples  # every stage has a few-shot example
    rendered = load_prompt("extract_entities").render(text="Aspirin for pain.")
    assert rendered[0].role == "system" and rendered[-1].content.endswith("Aspirin for pain.")
    with pytest.raises(ConfigError, match=r"needs \$text"):
        load_prompt("extract_entities").render()


def test_the_new_prompts_examples_answer_in_their_schemas() -> None:
    from medkg.llm.schemas import (
        ConditionalRelations,
        ContextAnswer,
        InferredRelations,
        Picks,
        StandardNames,
    )

    schemas = {"understand_context": ContextAnswer, "expand_conditions": ConditionalRelations,
               "refine_triples": InferredRelations, "normalise_entities": StandardNames,
               "prune_triples": Picks, "clue_entities": Picks}
    for name, schema in schemas.items():
        for _user, answer in load_prompt(name).examples:
            schema.model_validate_json(answer)  # a few-shot example the schema refuses misleads


def _answer() -> Any:
    from medkg.model import Layer
    from medkg.retrieval.answer import Answer, Citation

    cites = [Citation(n=n, document_id="d", title="t", source="s", layer=Layer.USER,
                      chunk_id="c", start=0, end=5, quote=q)
             for n, q in ((1, "Metformin is first-line."), (2, "Nausea is common."))]
    return Answer(question="What is first-line?", mode="local", text="Metformin is first-line. [1]",
                  citations=cites, facts=[], definitions=[], trace={})


def test_generated_answer_keeps_only_real_citations(tmp_path: Path) -> None:
    from medkg.retrieval.generate import generate_answer

    ledger = Ledger(tmp_path / "llm.sqlite")
    good = '{"answer": "Metformin [1], with nausea [2] and more [7].", "citations": [1, 9]}'
    answer = generate_answer(_answer(), LLM(Scripted([good]), ledger, GenerationParams()))
    assert answer.text == "Metformin [1], with nausea [2] and more."
    assert answer.mode == "local+llm" and "[7]" in (answer.trace.generation or ["", ""])[1]
    uncited = '{"answer": "Metformin.", "citations": [5]}'
    ledger = Ledger(tmp_path / "second.sqlite")  # a fresh cache: the same question again
    kept = generate_answer(_answer(), LLM(Scripted([uncited]), ledger, GenerationParams()))
    assert kept.text == _answer().text and "cited no source" in (kept.trace.generation or [""])[0]
    ledger = Ledger(tmp_path / "third.sqlite")
    broken = generate_answer(_answer(), LLM(Scripted(["no", "no"]), ledger, GenerationParams()))
    assert broken.text == _answer().text and ledger.failures()[0][0] == "answer"
