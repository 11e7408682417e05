"""LangChain's LLMGraphTransformer as medkg's extraction engine, for real: a
LangChain ``ChatOpenAI`` over the local llama.cpp server (SmolLM2-135M, the
OpenAI-compatible one the other LLM tests start). The model is too small for
good extractions; what is checked is that a real model's answers travel the
whole path and that medkg keeps only what is in the text."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langchain_openai", reason="pip install -e '.[dev]' (langchain-openai)")

from langchain_openai import ChatOpenAI

from medkg.integrations.langchain import use_chat_model
from medkg.model import Layer
from medkg.workspace import Workspace
from tests.conftest import SEED_OBO
from tests.llm.conftest import Server

pytestmark = pytest.mark.slow


def test_a_real_chat_model_through_the_graph_transformer(server: Server, tmp_path: Path
                                                         ) -> None:
    model = ChatOpenAI(base_url=server.url, api_key="not-needed", model="smollm2",
                       temperature=0, max_tokens=160, timeout=300)
    note = tmp_path / "note.txt"  # one chunk: one call
    note.write_text("Lisinopril can cause a dry cough. Metformin treats type 2 diabetes.\n",
                    encoding="utf-8")
    with Workspace.create(tmp_path / "ws") as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([note], Layer.USER)
        use_chat_model(ws, model, tool_calling=False)
        ws.build()
        reasons = [r for _stage, _item, r in ws.ledger.failures(100)]
        assert not [r for r in reasons if "transformer failed" in r], reasons
        assert not ws.extraction_status().new  # every chunk's call answered
        [doc_id] = ws.store.document_ids(Layer.USER)
        text = ws.store.document(doc_id).text
        entities = {e.id: e for e in ws.store.entities(Layer.USER)}
        for e in entities.values():  # only what is in the text, where it is
            assert e.mentions and all(text[m.start:m.end] == m.text for m in e.mentions)
        for t in ws.store.iter_triples(Layer.USER):
            assert t.head in entities and t.tail in entities
            assert all(text[ev.start:ev.end] for ev in t.evidence)
