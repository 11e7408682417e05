"""One contract for every engine of a stage, builtin and LLM alike (the LLM on the
local GGUF model): extraction, tag summaries, answers. The tiny model's content
is weak; what is checked is what the rest of the pipeline relies on."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from medkg.config import LLMConfig
from medkg.engines import (
    Answerer,
    BuiltinExtractor,
    BuiltinSummariser,
    ChunkGraph,
    ExtractiveAnswerer,
    Extractor,
    LLMAnswerer,
    LLMExtractor,
    LLMSummariser,
    Summariser,
)
from medkg.extraction.lexicon import resolve_lexicon
from medkg.extraction.nlp import Normaliser
from medkg.llm.client import LLM
from medkg.llm.ledger import Ledger
from medkg.llm.port import GenerationParams
from medkg.model import Chunk, Document, Layer
from medkg.ontology.index import ConceptIndex
from medkg.retrieval.answer import Answer, Citation
from medkg.tagtree.tags import CATEGORIES

TEXT = ("Lisinopril lowers blood pressure in hypertension. A dry cough is a common "
        "adverse effect of lisinopril. The patient denies chest pain.")


@pytest.fixture(scope="module", params=["builtin", "llm"])
def engine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[str | LLM]:
    if request.param == "builtin":
        yield "builtin"
        return
    from medkg.llm.gguf_backend import GGUFBackend
    from tests.llm.conftest import gguf_model

    backend = GGUFBackend(LLMConfig(backend="gguf", model=str(gguf_model())))
    llm = LLM(backend, Ledger(tmp_path_factory.mktemp("llm") / "llm.sqlite"),
              GenerationParams(max_tokens=1024))
    yield llm
    llm.close()


def _chunks() -> list[Chunk]:
    """One chunk per sentence: the LLM engines answer them in one packed call."""
    doc = Document.create(layer=Layer.LITERATURE, title="t", source="s",
                          media_type="text/plain", text=TEXT)
    ends = [m.end() for m in re.finditer(r"\.", TEXT)]
    starts = [0, *(e + 1 for e in ends[:-1])]
    return [Chunk.create(doc, i, a, b) for i, (a, b) in enumerate(zip(starts, ends, strict=True))]


def _extractor(engine: str | LLM, nlp: Any, concepts: list[Any]) -> Extractor:
    if isinstance(engine, LLM):
        return LLMExtractor(engine, Normaliser(ConceptIndex(concepts), resolve_lexicon("bundled")),
                            pack_tokens=512)
    return BuiltinExtractor(nlp, None)


@pytest.mark.slow
def test_extractor_contract(engine: str | LLM, nlp: Any, seed_concepts: list[Any]) -> None:
    chunks = _chunks()
    out = list(_extractor(engine, nlp, seed_concepts).extract(chunks))
    assert [ex.chunk for ex in out] == chunks  # one result per chunk, in order
    for ex in out:
        for m in ex.mentions:  # document offsets, inside the chunk; the text is the document's
            assert TEXT[m.start:m.end] == m.text
            assert ex.chunk.start <= m.start and m.end <= ex.chunk.end
            assert m.sentence[0] <= m.start and m.end <= m.sentence[1]
        for r in ex.relations:
            assert r.head in ex.mentions and r.tail in ex.mentions
    if not isinstance(engine, LLM):  # the builtin engine finds the vocabulary's terms
        assert {m.text.lower() for ex in out for m in ex.mentions} >= {"lisinopril", "dry cough"}
    else:  # three chunks, one call
        calls = {s.stage: s.calls for s in engine.ledger.summary()}
        assert calls["extract"] == 1


@pytest.mark.slow
def test_summariser_contract(engine: str | LLM) -> None:
    summariser: Summariser = (LLMSummariser(engine, pack_tokens=512) if isinstance(engine, LLM)
                              else BuiltinSummariser())
    chunks = _chunks()
    summaries = summariser.summarise(chunks, ChunkGraph())
    assert len(summaries) == len(chunks)  # one per chunk, in order
    for summary in summaries:
        assert set(summary.tags) <= set(CATEGORIES)
        assert all(isinstance(t, str) and t for terms in summary.tags.values() for t in terms)


@pytest.mark.slow
def test_answerer_contract(engine: str | LLM) -> None:
    answerer: Answerer = LLMAnswerer(engine) if isinstance(engine, LLM) else ExtractiveAnswerer()
    cites = [Citation(n=n, document_id="d", title="t", source="s", layer=Layer.LITERATURE,
                      chunk_id="c", start=0, end=len(q), quote=q)
             for n, q in ((1, "A dry cough is a common adverse effect of lisinopril."),
                          (2, "Lisinopril lowers blood pressure in hypertension."))]
    draft = Answer(question="What does lisinopril cause?", mode="local",
                   text=f"{cites[0].quote} [1]", citations=cites, facts=[], definitions=[])
    answer = answerer.answer(draft)
    assert answer.citations == draft.citations  # sources are never invented or dropped
    assert answer.text.strip()
    marks = {int(n) for n in re.findall(r"\[(\d+)\]", answer.text)}
    assert marks <= {c.n for c in cites}
    if isinstance(engine, LLM):  # generated, or the reason the extractive one was kept
        assert answer.trace.generation

