"""medkg for LangChain users (``pip install 'medkg[langchain]'``).

- :class:`MedkgRetriever`: a LangChain ``BaseRetriever`` over
  :meth:`Workspace.retrieve <medkg.workspace.Workspace.retrieve>`: each passage a
  ``Document`` whose metadata carry the citation (document id, title, offsets,
  the marker ``n``), the scores, the qualifier flags, and the facts that cite it.
- :func:`use_chat_model`: LangChain's ``LLMGraphTransformer`` with any LangChain
  chat model as the workspace's extraction engine
  (:mod:`medkg.extraction.langchain`).

    from langchain_openai import ChatOpenAI
    from medkg.integrations.langchain import MedkgRetriever, use_chat_model
    from medkg.workspace import Workspace

    with Workspace.open("my-kg") as ws:
        use_chat_model(ws, ChatOpenAI(model="gpt-4o-mini"))
        ws.build()
        docs = MedkgRetriever(workspace=ws, top=5).invoke("What treats asthma?")
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from medkg.retrieval.evidence import Retrieval
from medkg.workspace import Workspace


class MedkgRetriever(BaseRetriever):
    """The ranked evidence of a medkg workspace as LangChain documents."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    workspace: Workspace
    mode: str | None = None  # as `medkg ask --mode` (default: the workspace's setting)
    top: int = Field(default=8, ge=1, le=100)
    show_proposed: bool = False
    # the last retrieval whole (facts, conditions, definitions, the context block)
    last: Retrieval | None = None

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        found = self.workspace.retrieve(query, mode=self.mode, top=self.top,
                                        show_proposed=self.show_proposed or None)
        self.last = found
        return to_documents(found)


def to_documents(found: Retrieval) -> list[Document]:
    """One LangChain document per passage; its metadata cite it."""
    cited_by: dict[int, list[str]] = {}
    for fact in [*found.facts, *found.proposed]:
        for n in fact.passages:
            cited_by.setdefault(n, []).append(fact.triple_id)
    documents = []
    for p in found.passages:
        metadata: dict[str, Any] = {
            "n": p.n, "chunk_id": p.chunk_id, "document_id": p.document_id,
            "title": p.title, "source": p.source, "layer": p.layer.value,
            "start": p.start, "end": p.end, "rank": p.rank, "score": p.score,
            "sources": {k: v.model_dump() for k, v in p.sources.items()},
            "flags": p.flags, "facts": cited_by.get(p.n, []), "answerable": found.answerable,
        }
        documents.append(Document(page_content=p.text, metadata=metadata, id=p.chunk_id))
    return documents


def use_chat_model(workspace: Workspace, chat_model: Any, *, tool_calling: bool = True
                   ) -> None:
    """Extract with LangChain's LLMGraphTransformer over ``chat_model`` (any LangChain
    chat model) from now on in this open workspace: sets ``extraction.engine =
    "langchain"`` for this session (write it in ``medkg.toml`` to keep it).
    ``tool_calling=False`` asks for JSON in the prompt instead of a tool call, for
    models without function calling."""
    workspace.settings.extraction.engine = "langchain"
    workspace.parts.chat_model = chat_model
    workspace.parts.chat_model_tool_calling = tool_calling
