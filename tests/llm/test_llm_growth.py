"""The SAC-KG loop with the LLM generator and corrector, on the local GGUF model.

The tiny model's triples are weak; what is checked is the contract: every
call parses (grammar), names that are not entities of the context are
recorded and never stored, and every stored triple has a context sentence as
evidence and passed the verifier."""

from __future__ import annotations

from pathlib import Path

import pytest

from medkg.config import ConstructionConfig, LLMConfig
from medkg.growth.corpus import SentenceCorpus, node_of
from medkg.growth.generator import LLMGenerator
from medkg.growth.loop import Growth, GrowthState
from medkg.llm.client import LLM
from medkg.llm.gguf_backend import GGUFBackend
from medkg.llm.ledger import Ledger
from medkg.llm.port import GenerationParams
from medkg.model import Layer, Triple
from medkg.rulehub.verify import Verifier
from tests.growth.test_loop import CANDIDATES, DOC, ENTITIES, SPANS, TEXT

pytestmark = pytest.mark.slow


def test_llm_generator_in_the_loop(model_path: Path, tmp_path: Path) -> None:
    corpus = SentenceCorpus(tmp_path / "corpus.sqlite")
    corpus.replace_document(DOC, Layer.LITERATURE, [("c1", s, e, t) for s, e, t in SPANS],
                            ENTITIES.values(), CANDIDATES)
    ledger = Ledger(tmp_path / "llm.sqlite")
    llm = LLM(GGUFBackend(LLMConfig(backend="gguf", model=str(model_path), n_ctx=4096)),
              ledger, GenerationParams(temperature=0.0, max_tokens=512, seed=13))
    by_id = {e.id: e for e in ENTITIES.values()}
    stored: list[Triple] = []
    cfg = ConstructionConfig(levels=1, prune=False, max_rounds=1)
    growth = Growth(corpus, by_id, LLMGenerator(llm, corpus, by_id), Verifier(), None, cfg,
                    store_triples=stored.extend, existing=[],
                    record=lambda item, reason: ledger.fail("construction", item, reason),
                    examples=lambda head: ["(heparin, prevents, deep vein thrombosis)"])
    state = GrowthState(tmp_path / "growth.sqlite")
    [level] = growth.run(state, [node_of(ENTITIES["metformin"])], lambda *a: None)
    [summary] = ledger.summary()
    assert summary.calls >= 1 and summary.failed == 0
    assert level.heads == 1
    assert level.kept == len(stored)
    for t in stored:
        assert t.head in by_id and t.tail in by_id
        assert t.evidence and t.evidence[0].quote in TEXT
        assert t.method == "llm:generate" and t.level == 1
    for stage, _item, reason in ledger.failures():
        assert stage in ("generate", "construction") and reason
    print(f"\nLLM loop: {level.as_dict()}; ledger {summary.model_dump()}; "
          f"{len(ledger.failures())} recorded item(s)")
