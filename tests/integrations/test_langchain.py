"""medkg for LangChain users: the retriever over ``Workspace.retrieve`` and
LangChain's LLMGraphTransformer as an extraction engine. The engine's plumbing is
driven here by LangChain's own fake chat model (the answer is fixed, so what
medkg does with it can be checked exactly); tests/llm/test_langchain_engine.py
runs it against the local llama.cpp server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("langchain_experimental", reason="pip install -e '.[dev]' (langchain)")

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from medkg.errors import ConfigError
from medkg.integrations.langchain import MedkgRetriever, use_chat_model
from medkg.model import Layer
from medkg.workspace import Workspace
from tests.conftest import SEED_OBO

pytestmark = pytest.mark.slow
NOTE = ("Clinic note. Lisinopril can cause a dry cough. Metformin treats type 2 diabetes "
        "mellitus in this patient.\n")


def test_the_retriever_gives_cited_documents(built_workspace: Path) -> None:
    with Workspace.open(built_workspace, access="read") as ws:
        retriever = MedkgRetriever(workspace=ws, top=3)
        docs = retriever.invoke("What are the side effects of lisinopril?")
        assert retriever.last is not None and len(docs) == len(retriever.last.passages)
        assert [d.metadata["n"] for d in docs] == list(range(1, len(docs) + 1))
        assert docs[0].metadata["rank"] == 1 and docs[0].metadata["sources"]
        for d in docs:
            text = ws.store.document(d.metadata["document_id"]).text
            assert text[d.metadata["start"]:d.metadata["end"]] == d.page_content
        cited = {t for d in docs for t in d.metadata["facts"]}
        assert cited == {f.triple_id for f in [*retriever.last.facts, *retriever.last.proposed]
                         if f.passages}


def _workspace(root: Path) -> Workspace:
    ws = Workspace.create(root)
    ws.load_vocabulary(SEED_OBO)
    note = root.parent / "note.txt"
    note.write_text(NOTE, encoding="utf-8")
    ws.ingest([note], Layer.USER)
    return ws


def test_the_graph_transformer_as_engine(tmp_path: Path) -> None:
    answer = json.dumps([
        {"head": "Lisinopril", "head_type": "Drug", "relation": "HAS_ADVERSE_EFFECT",
         "tail": "dry cough", "tail_type": "Symptom"},
        {"head": "Metformin", "head_type": "Drug", "relation": "TREATS",
         "tail": "type 2 diabetes mellitus", "tail_type": "Disease"},
        # invented: neither is in the text
        {"head": "Aspirin", "head_type": "Drug", "relation": "TREATS",
         "tail": "headache", "tail_type": "Symptom"},
        # one end in the text, the other not
        {"head": "Metformin", "head_type": "Drug", "relation": "CAUSES",
         "tail": "lactic acidosis", "tail_type": "Disease"}])
    with _workspace(tmp_path / "ws") as ws:
        with pytest.raises(ConfigError, match="needs a LangChain chat model"):
            ws.settings.extraction.engine = "langchain"
            ws.build()
        use_chat_model(ws, FakeListChatModel(responses=[answer]), tool_calling=False)
        ws.build()
        doc_id = ws.store.document_ids(Layer.USER)[0]
        text = ws.store.document(doc_id).text
        entities = {e.name.lower(): e for e in ws.store.entities(Layer.USER)}
        assert {"lisinopril", "dry cough", "metformin", "type 2 diabetes mellitus"} <= set(
            entities)
        assert "aspirin" not in entities and "lactic acidosis" not in entities
        for e in entities.values():
            assert all(text[m.start:m.end] == m.text for m in e.mentions)
        said = {(entities_by_id.name.lower(), t.predicate.value)
                for t in ws.store.iter_triples(Layer.USER)
                for entities_by_id in [next(e for e in entities.values() if e.id == t.head)]}
        assert said == {("lisinopril", "has_adverse_effect"), ("metformin", "treats")}
        assert all(t.evidence and text[t.evidence[0].start:t.evidence[0].end]
                   for t in ws.store.iter_triples(Layer.USER))
        reasons = [reason for _stage, _item, reason in ws.ledger.failures(50)]
        assert "entity not in the text: 'Aspirin'" in reasons
        assert any("relation refused" in r and "'lactic acidosis'" in r for r in reasons)


def test_a_failing_chat_model_leaves_the_document_for_the_next_build(tmp_path: Path) -> None:
    class Broken(FakeListChatModel):
        def _call(self, *args: object, **kwargs: object) -> str:
            raise ConnectionError("model server unreachable")

    with _workspace(tmp_path / "ws") as ws:
        use_chat_model(ws, Broken(responses=["[]"]), tool_calling=False)
        ws.build()
        reasons = [reason for _stage, _item, reason in ws.ledger.failures(50)]
        assert any("ConnectionError: model server unreachable" in r for r in reasons)
        assert ws.extraction_status().new  # unfinished: the next build asks again
